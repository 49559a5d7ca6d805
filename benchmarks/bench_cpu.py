"""The whole app's CPU use with 8 GPUs at 1 s and 0.1 s, and a peer: ``gpustat -i 1``.

Each case runs a program as a subprocess, lets it settle 5 s, then reads its CPU time
(all threads; from its POSIX CPU-time clock, to the nanosecond, where the system has one,
else from psutil in clock ticks) over the measuring period: CPU % of one core = CPU
time / wall time. gpumon runs its window offscreen and, when Xvfb is installed, under Xvfb
with the xcb platform. Settings start empty (a temporary XDG_CONFIG_HOME).

The GPUs: 8 fake GPUs of the fake NVML library from tests/telemetry/fakenvml (built here
with gcc and the nvidia-ml-py headers of ``nvidia-nvml-dev``), loaded as libnvidia-ml.so.1
through LD_LIBRARY_PATH, so gpumon's real NvmlSource and gpustat (it uses nvidia-ml-py too)
read the same GPUs through the same binding. The fake costs what an H200's driver costs,
call by call (its "h200" cost profile: the energy counter 3.3 ms of CPU, the PCIe throughput
call 21 ms asleep, ...), for every program of the run alike; ``--profile none`` makes every
call free, as all figures before this profile were measured. Without gcc or the headers
gpumon falls back to ``--simulate 8`` and the peer is left out.

The peer baseline, in the same run: ``gpustat -i 1`` (``pip install -e '.[bench]'``; it is
not needed by gpumon or its tests). Targets: <= 2% at 1 s, <= 15% at 0.1 s, and at 1 s
under Xvfb no more than gpustat -i 1.

Run from the repository root: ``python benchmarks/bench_cpu.py [--quick]`` (60 s per case;
``--quick``: 15 s).

``--processes N``: N processes on each fake GPU, each a real sleeping child of this script
(so gpumon reads their /proc: name, user, CPU, RSS, container), with 1 GiB each: what the
per-process columns and the History's per-process series cost. ``--baseline REV``: gpumon
at git revision REV (``git archive``) is measured too, alternating with this tree, case by
case (``--rounds`` times each), and each case prints both and the ratio; the gpustat peer is
left out. Target then: this tree within 10 % of the baseline (median of the rounds).

``--peers [--base DIR] [--rounds N] [--profile P] [--split]``: instead, gpumon beside
gpustat ``-i 1`` and nvitop ``--interval 1`` in one run, all at 1 s on the same 8 fake GPUs
under Xvfb, on both cost profiles in turn (free calls, then the H200's; ``--profile`` picks
one). gpumon three ways: on its Monitor tab; with no graph visible (the Lesson tab brought
in front with Ctrl+3 through xdotool; its kernel starts then, so the row waits 15 s more
before measuring); and on its Monitor tab with its window unmapped (``xdotool windowunmap``:
what a window manager does to a minimised window; Xvfb has none). Beside them, gpumon's
reading alone: its Sampler on the same GPUs every 1 s in a plain process, no Qt (the floor
of every gpumon row), and a bare Qt window of gpumon's size repainted once a second, white
or with 16 prepared polylines (the floor of any window that redraws its graphs every
second). CPU of the process tree (the app and its children: gpumon's kernel, nvitop's none).
``--base DIR``: the same gpumon rows for another checkout of gpumon (e.g. ``git archive
main``), run alternately with this one in each round, so both see the same machine.
``--split``: then, apart from the measurement, a py-spy profile of gpumon's GUI thread on
its Monitor tab per profile and tree, split by what it was doing (snapshot handling, each
widget kind's paint, the flush to X: cpu_split.py; the reading is the Sampler row). Targets:
gpumon <= 1.0x nvitop on the Monitor tab on both profiles (issue 52), <= 0.5x gpustat with
no graph visible (the Lesson tab, or the window unmapped; issue 30).
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import os
import pty
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import cpu_split
import psutil

GIB = 1 << 30

REPO = Path(__file__).resolve().parent.parent
TARGETS = {1.0: 2.0, 0.1: 15.0}
SETTLE_S = 5.0
N_GPUS = 8


# gpumon's reading alone, no window: the Sampler on NvmlSource every 1 s, on a grid as the
# app's sampling thread keeps it (the floor of any gpumon row that samples at 1 s)
SAMPLER_ONLY = """
import time
from gpumon.telemetry.nvml.source import NvmlSource
from gpumon.telemetry.sources.sampler import Sampler
sampler = Sampler(NvmlSource())
sampler.open()
start = time.monotonic()
n = 0
while True:
    sampler.tick()
    n += 1
    time.sleep(max(0.0, start + n - time.monotonic()))
"""


# A bare Qt window of gpumon's size, repainted once a second: white only, or with 16
# polylines of 300 points made once (the paint and the X flush are what is measured). No
# pyqtgraph, no NVML: the floor of any window that redraws graphs every second.
BARE_WINDOW = """
import math, sys
from PySide6.QtCore import QPointF, QTimer
from PySide6.QtGui import QColor, QPainter, QPen, QPolygonF
from PySide6.QtWidgets import QApplication, QWidget
app = QApplication(sys.argv)
LINES = sys.argv[1] == "polylines"
W, H = 350, 225
POLYS = [[QPolygonF([QPointF((k % 4) * W + i * (W - 4) / 299, (k // 4) * H + H / 2
                             + H / 3 * math.sin((i + n) / 9 + k)) for i in range(300)])
          for k in range(16)] for n in range(8)]
class Window(QWidget):
    n = 0
    def paintEvent(self, event):
        p = QPainter(self)
        p.fillRect(self.rect(), QColor("white"))
        if LINES:
            p.setPen(QPen(QColor("#1f77b4"), 1))
            for poly in POLYS[self.n % 8]:
                p.drawPolyline(poly)
        p.end()
window = Window()
window.resize(1400, 900)
window.show()
def tick():
    window.n += 1
    window.update()
timer = QTimer()
timer.timeout.connect(tick)
timer.start(1000)
app.exec()
"""


def start_xvfb() -> tuple[subprocess.Popen[bytes], str] | None:
    if shutil.which("Xvfb") is None:
        return None
    n = next(n for n in range(120, 400) if not Path(f"/tmp/.X11-unix/X{n}").exists())
    xvfb = subprocess.Popen(["Xvfb", f":{n}", "-screen", "0", "1920x1200x24", "-nolisten", "tcp",
                             "-noreset"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while not Path(f"/tmp/.X11-unix/X{n}").exists():
        if time.monotonic() > deadline or xvfb.poll() is not None:
            xvfb.kill()
            return None
        time.sleep(0.05)
    return xvfb, f":{n}"


def fake_gpus(work: Path, pids: list[list[int]] | None = None,
              profile: str = "h200") -> dict[str, str] | None:
    """Environment in which pynvml loads 8 fake GPUs (``pids[g]``: the processes listed on
    GPU g, 1 GiB each) that cost what ``profile`` says; None when the fake cannot be built."""
    sys.path.insert(0, str(REPO / "tests" / "telemetry"))
    from fakenvml import FakeNvmlUnavailable, build_fake_nvml, fake_driver_env

    try:
        lib = build_fake_nvml(work)
    except FakeNvmlUnavailable as err:
        print(f"fake NVML not available ({err}); gpumon uses --simulate {N_GPUS}, no peer")
        return None
    procs = ",".join(f"{g}:{pid}:{GIB}" for g, group in enumerate(pids or []) for pid in group)
    print(f"fake NVML cost profile: {profile}", flush=True)
    return fake_driver_env(lib, work, gpus=str(N_GPUS), profile=profile,
                           **({"procs": procs} if procs else {}))


def sleepers(n: int) -> list[subprocess.Popen[bytes]]:
    """``n`` real processes that sleep (they end with this script)."""
    return [subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
            for _ in range(n)]


def baseline_tree(rev: str, tmp: Path) -> Path:
    """gpumon at ``rev``, unpacked from ``git archive`` into ``tmp``."""
    tree = tmp / "baseline"
    tree.mkdir()
    archive = subprocess.run(["git", "archive", rev, "gpumon", "resources"], cwd=REPO,
                             capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    return tree


def _drain(fd: int) -> None:
    """Read and drop what a program writes to its terminal until it closes."""
    with contextlib.suppress(OSError):
        while os.read(fd, 65536):
            pass


def _cpu_clock(pid: int) -> int | None:
    """The POSIX CPU-time clock of process ``pid`` (all its threads, those that ended
    included), or None where there is none (not Linux, or the process is gone)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        clock = ctypes.c_int()
        if libc.clock_getcpuclockid(pid, ctypes.byref(clock)) != 0:
            return None
    except (OSError, AttributeError):
        return None
    return clock.value


def cpu_s(proc: psutil.Process) -> float:
    """CPU seconds ``proc`` has used: read from its CPU-time clock to the nanosecond where
    the system has one, else user + system from /proc in clock ticks (10 ms on most Linux
    systems: over 15 s, gpustat's 0.15 % of a core is two ticks)."""
    clock = _cpu_clock(proc.pid)
    if clock is not None:
        with contextlib.suppress(OSError):
            return time.clock_gettime(clock)
    t = proc.cpu_times()
    return t.user + t.system


def tree_cpu_s(proc: psutil.Process) -> dict[int, float]:
    """CPU seconds of ``proc`` and each of its descendants, by pid."""
    out = {}
    for p in [proc, *proc.children(recursive=True)]:
        with contextlib.suppress(psutil.Error):
            out[p.pid] = cpu_s(p)
    return out


def _windows(pid: int, display: str) -> tuple[dict[str, str], list[str]]:
    """The environment for ``display`` and the ids of process ``pid``'s visible windows."""
    env = dict(os.environ, DISPLAY=display)
    found = subprocess.run(["xdotool", "search", "--sync", "--onlyvisible", "--pid", str(pid)],
                           env=env, capture_output=True, text=True, timeout=20)
    return env, found.stdout.split()


def show_lesson_tab(pid: int, display: str) -> None:
    """Bring gpumon's Lesson tab in front (Ctrl+3) in its window on ``display``."""
    env, windows = _windows(pid, display)
    for window in windows:
        subprocess.run(["xdotool", "windowfocus", "--sync", window], env=env, timeout=10,
                       check=False)
        subprocess.run(["xdotool", "key", "--clearmodifiers", "ctrl+3"], env=env, timeout=10,
                       check=False)


def unmap_window(pid: int, display: str) -> None:
    """Unmap gpumon's window on ``display``, as a window manager does to a minimised one
    (Xvfb has no window manager to minimise it)."""
    env, windows = _windows(pid, display)
    for window in windows:
        subprocess.run(["xdotool", "windowunmap", "--sync", window], env=env, timeout=10,
                       check=False)


def measure(cmd: list[str], env: dict[str, str], seconds: float, tty: bool = False,
            tree: bool = False, lesson_on: str | None = None, cwd: Path = REPO,
            unmap_on: str | None = None) -> float:
    """CPU % of one core of ``cmd`` after SETTLE_S; ``tty``: its output goes to a pseudo-
    terminal (gpustat -i redraws a screen there, as in use; to a pipe it prints lines);
    ``tree``: its children's CPU too; ``lesson_on``: the X display on which its Lesson tab
    is brought in front first (then 15 s more to settle: its kernel starts); ``unmap_on``:
    the X display on which its window is unmapped first (then 3 s more)."""
    out: int | None = subprocess.DEVNULL
    master = -1
    if tty:
        master, out = pty.openpty()
        threading.Thread(target=_drain, args=(master,), daemon=True).start()
    app = subprocess.Popen(cmd, env=dict(env, TERM="xterm-256color", COLUMNS="120",
                                         LINES="40"),
                           cwd=cwd, stdout=out, stderr=subprocess.DEVNULL,
                           stdin=out if tty else subprocess.DEVNULL)  # nvitop reads keys
    if tty:
        assert out is not None
        os.close(out)
    try:
        proc = psutil.Process(app.pid)
        time.sleep(SETTLE_S)
        if lesson_on is not None:
            show_lesson_tab(app.pid, lesson_on)
            time.sleep(15.0)
        if unmap_on is not None:
            unmap_window(app.pid, unmap_on)
            time.sleep(3.0)
        if app.poll() is not None:
            raise RuntimeError(f"{cmd[0]} exited early ({app.returncode})")
        if tree:
            b0, t0 = tree_cpu_s(proc), time.monotonic()
            time.sleep(seconds)
            b1, t1 = tree_cpu_s(proc), time.monotonic()
            used = sum(b1[pid] - b0.get(pid, 0.0) for pid in b1)
            return 100.0 * used / (t1 - t0)
        c0, t0 = cpu_s(proc), time.monotonic()
        time.sleep(seconds)
        c1, t1 = cpu_s(proc), time.monotonic()
        return 100.0 * (c1 - c0) / (t1 - t0)
    finally:
        app.send_signal(signal.SIGTERM)
        try:
            app.wait(20)
        except subprocess.TimeoutExpired:
            app.kill()
            app.wait()
        if master >= 0:
            os.close(master)


def peers(seconds: float, base_dir: Path | None, rounds: int, profiles: list[str],
          split: bool) -> int:
    """gpumon beside gpustat and nvitop (see the module doc), on each cost profile in turn;
    ``split``: then a py-spy split of the Monitor tab's GUI thread per profile and tree. 0
    when the targets are met."""
    xvfb = start_xvfb()
    if xvfb is None or shutil.which("xdotool") is None:
        print("--peers needs Xvfb and xdotool")
        return 2
    rows: dict[str, list[float]] = {}
    trees = {"this tree": REPO} | ({"base": base_dir} if base_dir else {})
    try:
        for profile in profiles:
            with tempfile.TemporaryDirectory() as work:
                fake = fake_gpus(Path(work), profile=profile)
                if fake is None:
                    return 2
                peer_rounds(fake, xvfb[1], seconds, rounds, trees, profile, rows)
                if split:
                    for tree_name, root in trees.items():
                        split_monitor(fake, xvfb[1], seconds, root, f"{tree_name}, {profile}")
    finally:
        xvfb[0].terminate()
        xvfb[0].wait()
    return 0 if peer_table(rows, rounds, profiles) else 1


def peer_rounds(fake: dict[str, str], display: str, seconds: float, rounds: int,
                trees: dict[str, Path], profile: str, rows: dict[str, list[float]]) -> None:
    """``rounds`` rounds of every peer, floor and gpumon row on one cost profile."""
    qt = dict(fake, QT_QPA_PLATFORM="xcb", DISPLAY=display)
    others: dict[str, tuple[list[str], dict[str, str]] | None] = {
        name: ([tool, *name.split()[1:]], fake) if tool else None
        for name, tool in (("gpustat -i 1", shutil.which("gpustat")),
                           ("nvitop --interval 1", shutil.which("nvitop")))}
    others["Sampler alone (gpumon's reading, no Qt)"] = (
        [sys.executable, "-c", SAMPLER_ONLY], dict(fake, PYTHONPATH=str(REPO)))
    for paint in ("white", "16 polylines"):
        others[f"Qt window repainted each 1 s, {paint}"] = (
            [sys.executable, "-c", BARE_WINDOW, paint.split()[-1]], qt)
    for n in range(rounds):
        for name, run in others.items():
            if run is None:
                print(f"{name.split()[0]} not installed (pip install -e '.[bench]')")
                continue
            pct = measure(*run, seconds, tty=True, tree=True)
            rows.setdefault(f"{profile}: {name}", []).append(pct)
            print(f"round {n + 1}: {profile}: {name:48s} {pct:5.2f}%", flush=True)
        variants = [(t, r, view) for view in ("", "lesson", "unmapped")
                    for t, r in trees.items()]
        for tree_name, root, view in variants:
            with tempfile.TemporaryDirectory() as config:
                env = dict(fake, XDG_CONFIG_HOME=config, QT_QPA_PLATFORM="xcb",
                           DISPLAY=display, PYTHONPATH=str(root))
                cmd = [sys.executable, "-m", "gpumon", "--interval", "1"]
                pct = measure(cmd, env, seconds, tree=True, cwd=root,
                              lesson_on=display if view == "lesson" else None,
                              unmap_on=display if view == "unmapped" else None)
            name = f"{profile}: gpumon ({tree_name}), " + {
                "": "Monitor tab", "lesson": "no graph visible",
                "unmapped": "window unmapped"}[view]
            rows.setdefault(name, []).append(pct)
            print(f"round {n + 1}: {name:48s} {pct:5.2f}%", flush=True)


def split_monitor(fake: dict[str, str], display: str, seconds: float, root: Path,
                  title: str) -> None:
    """gpumon at ``root`` on its Monitor tab, recorded by py-spy for ``seconds``, split."""
    with tempfile.TemporaryDirectory() as config:
        env = dict(fake, XDG_CONFIG_HOME=config, QT_QPA_PLATFORM="xcb", DISPLAY=display,
                   PYTHONPATH=str(root))
        app = subprocess.Popen([sys.executable, "-m", "gpumon", "--interval", "1"], env=env,
                               cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            time.sleep(SETTLE_S)
            raw = cpu_split.record(app.pid, seconds, Path(config) / "stacks.txt")
        finally:
            app.terminate()
            try:
                app.wait(20)
            except subprocess.TimeoutExpired:
                app.kill()
                app.wait()
    if raw is not None:
        cpu_split.print_split(f"gpumon ({title}), Monitor tab", *cpu_split.split(raw))


def peer_table(rows: dict[str, list[float]], rounds: int, profiles: list[str]) -> bool:
    """Print every row and the ratios to nvitop and gpustat; True when gpumon's Monitor tab
    is at or below nvitop on every profile (issue 52) and with no graph visible at or below
    0.5x gpustat (issue 30)."""
    print(f"\n{'process tree, % of one core, 1 s':58s} " + " ".join(
        f"{'run ' + str(i + 1):>6s}" for i in range(rounds)) + "   median")
    for name, values in rows.items():
        print(f"{name:58s} " + " ".join(f"{v:6.2f}" for v in values)
              + f"   {statistics.median(values):6.2f}")
    ok = True
    for profile in profiles:
        ref = {peer: statistics.median(rows[f"{profile}: {name}"])
               for peer, name in (("nvitop", "nvitop --interval 1"), ("gpustat", "gpustat -i 1"))
               if rows.get(f"{profile}: {name}")}
        for name, values in rows.items():
            if not name.startswith(f"{profile}: gpumon"):
                continue
            med = statistics.median(values)
            monitor = "Monitor tab" in name
            peer, target = ("nvitop", 1.0) if monitor else ("gpustat", 0.5)
            others = ", ".join(f"{med / v:.2f}x {p}" for p, v in ref.items() if p != peer)
            if peer not in ref:
                print(f"{name:58s} ({peer} not measured) {others}")
                continue
            met = med / ref[peer] <= target
            ok &= met or "(base)" in name
            print(f"{name:58s} {med / ref[peer]:5.2f}x {peer} (target <= {target:g}x): "
                  f"{'met' if met else 'NOT met'}; {others}")
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="15 s per case instead of 60")
    parser.add_argument("--processes", type=int, default=0, metavar="N",
                        help="N sleeping processes listed on each fake GPU")
    parser.add_argument("--baseline", metavar="REV", help="also measure gpumon at REV")
    parser.add_argument("--rounds", type=int, default=2,
                        help="alternations with --baseline, repetitions with --peers")
    parser.add_argument("--intervals", type=float, nargs="+", default=list(TARGETS),
                        choices=list(TARGETS), help="only these intervals (s)")
    parser.add_argument("--peers", action="store_true",
                        help="gpumon beside gpustat and nvitop at 1 s (module doc)")
    parser.add_argument("--base", type=Path, default=None, metavar="DIR",
                        help="with --peers: also measure the gpumon checked out in DIR")
    parser.add_argument("--profile", choices=("none", "h200", "both"), default=None,
                        help="the fake NVML's cost profile (default h200; with --peers: both)")
    parser.add_argument("--split", action="store_true",
                        help="with --peers: a py-spy split of the Monitor tab's GUI thread")
    args = parser.parse_args()
    seconds = 15.0 if args.quick else 60.0
    if args.peers:
        profiles = ["none", "h200"] if args.profile in (None, "both") else [args.profile]
        return peers(seconds, args.base, max(1, args.rounds), profiles, args.split)
    if args.profile in (None, "both"):
        args.profile = "h200"
    ok = True
    xvfb = start_xvfb()
    children = sleepers(N_GPUS * args.processes)
    try:
        with tempfile.TemporaryDirectory() as config, tempfile.TemporaryDirectory() as work:
            pids = [[c.pid for c in children[g * args.processes:(g + 1) * args.processes]]
                    for g in range(N_GPUS)]
            fake = fake_gpus(Path(work), pids, args.profile)
            base = dict(fake or os.environ, XDG_CONFIG_HOME=config)
            source = [] if fake else ["--simulate", str(N_GPUS)]
            print(f"GPUs: {N_GPUS} {'fake NVML' if fake else 'simulated'}, "
                  f"{args.processes if fake else 'simulated'} processes each", flush=True)
            trees = [("this tree", REPO)]
            if args.baseline:
                trees.insert(0, (f"baseline {args.baseline}",
                                 baseline_tree(args.baseline, Path(work))))
            gpustat = shutil.which("gpustat")
            peer = None
            if fake and gpustat and not args.baseline:
                peer = measure([gpustat, "-i", "1"], base, seconds, tty=True)
                print(f"{'peer':11s} gpustat -i 1:        {peer:5.2f}% of one core over "
                      f"{seconds:g} s", flush=True)
            elif fake and not args.baseline:
                print("gpustat not installed (pip install -e '.[bench]'): no peer row")
            platforms = [("offscreen", dict(base, QT_QPA_PLATFORM="offscreen"))]
            if xvfb is not None:
                platforms.append(("xcb (Xvfb)", dict(base, QT_QPA_PLATFORM="xcb",
                                                     DISPLAY=xvfb[1])))
            else:
                print("Xvfb not installed: offscreen only")
            for name, env in platforms:
                for interval, target in TARGETS.items():
                    if interval not in args.intervals:
                        continue
                    cmd = [sys.executable, "-m", "gpumon", *source, "--interval", str(interval)]
                    if args.baseline:
                        ok &= compare(name, interval, cmd, env, seconds, trees, args.rounds)
                        continue
                    pct = measure(cmd, dict(env, PYTHONPATH=str(REPO)), seconds)
                    met = pct <= target
                    ok &= met
                    line = (f"{name:11s} interval {interval:g} s: {pct:5.2f}% of one core over "
                            f"{seconds:g} s (target <= {target:g}%): "
                            f"{'met' if met else 'NOT met'}")
                    if peer and interval == 1.0 and name.startswith("xcb"):
                        at_peer = pct <= peer
                        ok &= at_peer
                        line += (f"; {pct / peer:.2f}x gpustat -i 1 (target <= 1x): "
                                 f"{'met' if at_peer else 'NOT met'}")
                    print(line, flush=True)
    finally:
        for child in children:
            child.kill()
            child.wait()
        if xvfb is not None:
            xvfb[0].terminate()
            xvfb[0].wait()
    return 0 if ok else 1


def compare(name: str, interval: float, cmd: list[str], env: dict[str, str], seconds: float,
            trees: list[tuple[str, Path]], rounds: int) -> bool:
    """One case for the baseline and this tree, alternating ``rounds`` times; prints every
    run and the ratio of the medians. True when this tree is within 10 % of the baseline."""
    runs: dict[str, list[float]] = {label: [] for label, _ in trees}
    for _ in range(rounds):
        for label, tree in trees:
            runs[label].append(measure(cmd, dict(env, PYTHONPATH=str(tree)), seconds, cwd=tree))
    (old_label, old), (new_label, new) = runs.items()
    ratio = statistics.median(new) / max(1e-9, statistics.median(old))
    met = ratio <= 1.10
    print(f"{name:11s} interval {interval:g} s: {old_label} "
          f"{' '.join(f'{v:.2f}' for v in old)}%, {new_label} "
          f"{' '.join(f'{v:.2f}' for v in new)}% of one core over {seconds:g} s each; "
          f"median ratio {ratio:.2f}x (target <= 1.10x): {'met' if met else 'NOT met'}",
          flush=True)
    return met


if __name__ == "__main__":
    sys.exit(main())
