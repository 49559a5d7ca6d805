"""Where gpumon's GUI thread spends its time: a py-spy profile of a running window, split.

``bench_cpu.py --peers --split`` starts gpumon once more per cost profile, on its Monitor tab,
and records it with ``py-spy record --native --threads --format raw`` (PyPI's ``py-spy``; as
root, or where ptrace of one's own processes is allowed). The main thread's samples, those
not waiting in the event loop's ``poll``, are put in one bucket each: the first of these
that a frame of the stack names:

- snapshot handling: ``MainWindow._on_snapshot`` (history, panels' labels and curve data);
- paint, by widget kind: graphs (pyqtgraph's ``GraphicsView.paintEvent``), text labels
  (``RunsLabel``, ``QLabel``), tables (``QTableView``, ``QHeaderView``), other widgets;
- flush to the X server: pushing repainted pixels (``xcb_flush``, ``writev``, the backing
  store's flush) outside any paint;
- layout; other events and timers.

The profile is taken apart from the CPU measurement: sampling with ``--native`` stops the
threads it reads, which costs the program some CPU. Its shares are of the sampled main
thread's busy time, to compare before and after a change, not CPU figures.
"""

from __future__ import annotations

import collections
import re
import shutil
import subprocess
import sys
from pathlib import Path

IDLE = re.compile(r"^(poll|ppoll|epoll_wait|g_poll|select|pselect6?)$")
BUCKETS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("snapshot handling", re.compile(r"^MainWindow\._on_snapshot$")),
    ("paint: graphs", re.compile(r"^(GraphicsView|LitePlotWidget)\.paintEvent$")),
    ("paint: text labels", re.compile(r"^(RunsLabel\.paintEvent|QLabel::paintEvent)$")),
    ("paint: tables", re.compile(r"^Q(Table|Header|Abstract[A-Za-z]*)View::paintEvent$")),
    ("paint: other widgets", re.compile(r"paintEvent$|^QWidgetPrivate::drawWidget$")),
    ("flush to the X server", re.compile(
        r"^(xcb_flush|writev|QXcbBackingStore::flush|QXcbBackingStoreImage::flush|"
        r"QWidgetRepaintManager::flush|QBackingStore::flush)$")),
    ("layout", re.compile(r"^(QLayout::activate|QLayoutPrivate::doResize|"
                          r"QWidgetPrivate::setGeometry_sys|QGridLayout::setGeometry|"
                          r"QBoxLayout::setGeometry)$")),
)
OTHER = "other events and timers"


def _name(frame: str) -> str:
    """``Class.method (file:line)`` or ``symbol (library)`` -> the function's name."""
    return frame.split(" (", 1)[0].strip()


def split(raw: str) -> tuple[int, dict[str, int]]:
    """py-spy's raw (collapsed) stacks -> (busy samples of the main thread, per bucket)."""
    counts: collections.Counter[str] = collections.Counter()
    busy = 0
    for line in raw.splitlines():
        stack, _, n = line.rpartition(" ")
        if not stack or not n.isdigit():
            continue
        frames = stack.split(";")
        if "MainThread" not in frames[0]:
            continue
        names = [_name(f) for f in frames[1:]]
        if names and IDLE.match(names[-1]):
            continue
        busy += int(n)
        bucket = next((label for label, pattern in BUCKETS
                       if any(pattern.search(name) for name in names)), OTHER)
        counts[bucket] += int(n)
    return busy, dict(counts)


def record(pid: int, seconds: float, out: Path) -> str | None:
    """Record process ``pid`` for ``seconds``; its raw stacks, or None (a sentence printed)
    where py-spy is missing or may not read the process."""
    spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    if not Path(spy).exists():
        print("py-spy not installed (pip install py-spy): no split")
        return None
    done = subprocess.run([spy, "record", "--native", "--threads", "--format", "raw",
                           "--rate", "200", "--duration", str(round(seconds)), "--pid",
                           str(pid), "--output", str(out)],
                          capture_output=True, text=True, timeout=seconds + 60, check=False)
    if done.returncode != 0 or not out.exists():
        print(f"py-spy could not record ({done.stderr.strip()[-300:]}): no split")
        return None
    return out.read_text(encoding="utf-8", errors="replace")


def print_split(title: str, busy: int, counts: dict[str, int]) -> None:
    print(f"\n{title}: the GUI thread's busy samples ({busy}), by what it was doing")
    for label, n in sorted(counts.items(), key=lambda kv: -kv[1]):
        print(f"  {100.0 * n / max(1, busy):5.1f}%  {label}")
