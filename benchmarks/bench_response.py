"""How fast the window answers a key on screen: tab switches and zoom steps, 8 GPUs at 0.1 s.

The whole app (``python -m gpumon --simulate 8 --interval 0.1``) runs in a 1400 x 900 window
on Xvfb (1600 x 1000, the xcb platform, settings in a fresh XDG_CONFIG_HOME). Keys go in as
X input through one ``xdotool -`` process that reads its commands from a pipe (so a key costs
no process start); the moment a command is written is the key's time. Then this script reads
the window's pixels from the X server (``xcb_get_image`` through ctypes, ~1 ms a read) until
they differ from what they were before the key: that is the answer on screen. Only parts of
the window that no reading changes are watched (the sampler redraws the readouts ten times a
second): the menu bar, whose text changes size with the zoom, and the tab bar, which changes
with the tab; their places are reported by the app itself (a small launcher writes them to a
file each second), and a frame never paints the tab bar apart from the page under it.

The keys, in this order, each after the screen has been still for a moment (1.5 s): Ctrl+2
(the first one builds the Playground and starts its kernel), Ctrl+1, Ctrl+3 (the first one
builds the Lesson), Ctrl+1, then ``--rounds`` more of Ctrl+2 / Ctrl+1 / Ctrl+3 / Ctrl+1, then
Ctrl++ up to 300 % and Ctrl+- back to 100 %, ``--zoom-rounds`` times.

``--before REV`` (default: none): gpumon at git revision REV, unpacked from ``git archive``,
runs the same keys in the same run, after this tree; each row prints both and the ratio.
Target (issue 42): every key answered within 50 ms (median and max printed; the machine's
other load shows in the max).

Run from the repository root: ``python benchmarks/bench_response.py --before 1f5d66b``.
"""

from __future__ import annotations

import argparse
import ctypes
import ctypes.util
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from machine import describe

REPO = Path(__file__).resolve().parent.parent
SCREEN = (1600, 1000)
WINDOW = (1400, 900)
TARGET_MS = 50.0
QUIET_S = 1.5  # the screen settles this long before each key (the kernel start excepted)
AFTER_FIRST_S = 10.0  # after the first switch to a page (it was built, the kernel started)
TIMEOUT_S = 5.0  # a key not answered by then counts as this long

# Started instead of ``python -m gpumon``: the same ``launch.run`` the command runs, plus a
# timer that writes where the menu bar and the tab bar are (window coordinates) each second.
LAUNCHER = r"""
import json, os, sys
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QMainWindow, QTabBar
app = QApplication(sys.argv)
out = sys.argv[1]

def report():
    for w in QApplication.topLevelWidgets():
        if isinstance(w, QMainWindow) and w.isVisible():
            bars = [w.menuBar(), w.findChild(QTabBar)]
            rects = []
            for bar in bars:
                if bar is None or not bar.isVisible():
                    continue
                p = bar.mapTo(w, bar.rect().topLeft())
                rects.append([p.x(), p.y(), bar.width(), bar.height()])
            geo = w.geometry()
            with open(out + ".tmp", "w") as f:
                json.dump({"window": [geo.x(), geo.y(), geo.width(), geo.height()],
                           "rects": rects}, f)
            os.replace(out + ".tmp", out)

timer = QTimer()
timer.timeout.connect(report)
timer.start(1000)
from gpumon.ui.window import launch
sys.exit(launch.run(8, 0.1))
"""


# -- the X server's pixels ------------------------------------------------------------------
class _Cookie(ctypes.Structure):
    _fields_ = [("sequence", ctypes.c_uint)]


class Screen:
    """Reads rectangles of the root window of ``display`` (one xcb connection)."""

    def __init__(self, display: str) -> None:
        xcb = ctypes.util.find_library("xcb")
        if xcb is None:
            raise RuntimeError("libxcb not found")
        self.xcb = ctypes.CDLL(xcb)
        self.libc = ctypes.CDLL(None)
        self.xcb.xcb_connect.restype = ctypes.c_void_p
        self.xcb.xcb_connect.argtypes = [ctypes.c_char_p, ctypes.c_void_p]
        self.xcb.xcb_get_setup.restype = ctypes.c_void_p
        self.xcb.xcb_get_setup.argtypes = [ctypes.c_void_p]
        self.xcb.xcb_get_image.restype = _Cookie
        self.xcb.xcb_get_image.argtypes = [ctypes.c_void_p, ctypes.c_uint8, ctypes.c_uint32,
                                           ctypes.c_int16, ctypes.c_int16, ctypes.c_uint16,
                                           ctypes.c_uint16, ctypes.c_uint32]
        self.xcb.xcb_get_image_reply.restype = ctypes.c_void_p
        self.xcb.xcb_get_image_reply.argtypes = [ctypes.c_void_p, _Cookie, ctypes.c_void_p]
        self.xcb.xcb_get_image_data.restype = ctypes.c_void_p
        self.xcb.xcb_get_image_data.argtypes = [ctypes.c_void_p]
        self.xcb.xcb_get_image_data_length.restype = ctypes.c_int
        self.xcb.xcb_get_image_data_length.argtypes = [ctypes.c_void_p]
        self.libc.free.argtypes = [ctypes.c_void_p]
        self.conn = self.xcb.xcb_connect(display.encode(), None)
        setup = self.xcb.xcb_get_setup(self.conn)
        # xcb_setup_t is 40 bytes, then the vendor string (padded to 4) and the pixmap
        # formats (8 bytes each); the first screen's root window is its first field.
        raw = ctypes.string_at(setup, 40)
        vendor_len = int.from_bytes(raw[24:26], "little")
        formats = raw[29]
        offset = 40 + ((vendor_len + 3) & ~3) + 8 * formats
        self.root = int.from_bytes(ctypes.string_at(setup + offset, 4), "little")

    def grab(self, rects: list[tuple[int, int, int, int]]) -> bytes:
        parts = []
        for x, y, w, h in rects:
            cookie = self.xcb.xcb_get_image(self.conn, 2, self.root, x, y, w, h, 0xFFFFFFFF)
            reply = self.xcb.xcb_get_image_reply(self.conn, cookie, None)
            if not reply:
                raise RuntimeError("xcb_get_image failed")
            data = self.xcb.xcb_get_image_data(reply)
            parts.append(ctypes.string_at(data, self.xcb.xcb_get_image_data_length(reply)))
            self.libc.free(reply)
        return b"".join(parts)


# -- one app --------------------------------------------------------------------------------
class App:
    """gpumon from ``tree`` on ``display``, with keys sent through one ``xdotool -``."""

    def __init__(self, tree: Path, display: str, work: Path) -> None:
        self.where = work / "where.json"
        config = work / "config"
        (config / "gpumon").mkdir(parents=True)
        (config / "gpumon" / "gpumon.conf").write_text("[view]\nzoom=1\ntheme=light\n")
        env = dict(os.environ, DISPLAY=display, QT_QPA_PLATFORM="xcb",
                   XDG_CONFIG_HOME=str(config), PYTHONPATH=str(tree), LANGUAGE="en",
                   LC_ALL="C.UTF-8")
        self.env = env
        self.proc = subprocess.Popen([sys.executable, "-c", LAUNCHER, str(self.where)],
                                     cwd=tree, env=env, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, start_new_session=True)
        self.xdotool = subprocess.Popen(["xdotool", "-"], stdin=subprocess.PIPE, env=env,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                        text=True)

    def rects(self, timeout_s: float = 30.0) -> tuple[list[int], list[tuple[int, ...]]]:
        """The window's place and the watched rectangles (screen coordinates)."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"gpumon exited ({self.proc.returncode})")
            try:
                where = json.loads(self.where.read_text())
            except (OSError, ValueError):
                time.sleep(0.1)
                continue
            wx, wy = where["window"][:2]
            return where["window"], [(wx + x, wy + y, w, h) for x, y, w, h in where["rects"]]
        raise RuntimeError("gpumon did not report its window")

    def focus(self) -> None:
        """Give the window the input focus (Xvfb has no window manager to do it)."""
        found = subprocess.run(["xdotool", "search", "--sync", "--onlyvisible", "--pid",
                                str(self.proc.pid)], env=self.env, capture_output=True,
                               text=True, timeout=30)
        for window in found.stdout.split():
            subprocess.run(["xdotool", "windowfocus", "--sync", window], env=self.env,
                           timeout=10, check=False)

    def key(self, keys: str) -> float:
        """Send ``keys`` (xdotool's names); the time it was written."""
        assert self.xdotool.stdin is not None
        t = time.perf_counter()
        self.xdotool.stdin.write(f"key --clearmodifiers {keys}\n")
        self.xdotool.stdin.flush()
        return t

    def close(self) -> None:
        if self.xdotool.stdin is not None:
            self.xdotool.stdin.close()
        self.xdotool.wait(5)
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()


def answer_ms(app: App, screen: Screen, keys: str, settle_s: float = QUIET_S) -> float:
    """Milliseconds from ``keys`` to the first change of the watched rectangles."""
    time.sleep(settle_s)
    _, rects = app.rects()
    before = screen.grab(rects)
    t0 = app.key(keys)
    while True:
        now = time.perf_counter()
        if screen.grab(rects) != before:
            return (now - t0) * 1000.0  # the read that saw it began at ``now`` or later
        if now - t0 > TIMEOUT_S:
            return TIMEOUT_S * 1000.0


Plan = list[tuple[str, str]]  # (row name, keys)


def plan(rounds: int, zoom_rounds: int) -> Plan:
    steps: Plan = [("first Ctrl+2 (Playground)", "ctrl+2"), ("Ctrl+1 (Monitor)", "ctrl+1"),
                   ("first Ctrl+3 (Lesson)", "ctrl+3"), ("Ctrl+1 (Monitor)", "ctrl+1")]
    for _ in range(rounds):
        steps += [("Ctrl+2 (Playground)", "ctrl+2"), ("Ctrl+1 (Monitor)", "ctrl+1"),
                  ("Ctrl+3 (Lesson)", "ctrl+3"), ("Ctrl+1 (Monitor)", "ctrl+1")]
    for _ in range(zoom_rounds):  # 100 % → 300 % (7 steps) and back
        steps += [("Ctrl++ (zoom in)", "ctrl+plus")] * 7
        steps += [("Ctrl+- (zoom out)", "ctrl+minus")] * 7
    return steps


def run_tree(tree: Path, display: str, screen: Screen, steps: Plan) -> dict[str, list[float]]:
    """Each step's answer on screen, in ms, by row name."""
    rows: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as work:
        app = App(tree, display, Path(work))
        try:
            app.rects(60.0)
            app.focus()  # no window manager: the keys go to the window with the focus
            time.sleep(5.0)  # the first snapshots, the first paints
            previous = ""
            for name, keys in steps:
                # after a first switch (a page built, the kernel started: torch imports in
                # its own process) the machine is busy for a while: let it calm down
                settle = AFTER_FIRST_S if previous.startswith("first") else QUIET_S
                rows.setdefault(name, []).append(answer_ms(app, screen, keys, settle))
                previous = name
        finally:
            app.close()
    return rows


def baseline_tree(rev: str, tmp: Path) -> Path:
    """gpumon at ``rev``, unpacked from ``git archive`` into ``tmp``."""
    tree = tmp / "before"
    tree.mkdir()
    archive = subprocess.run(["git", "archive", rev, "gpumon", "resources"], cwd=REPO,
                             capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    return tree


def start_xvfb() -> tuple[subprocess.Popen[bytes], str]:
    n = next(n for n in range(140, 400) if not Path(f"/tmp/.X11-unix/X{n}").exists())
    xvfb = subprocess.Popen(["Xvfb", f":{n}", "-screen", "0", f"{SCREEN[0]}x{SCREEN[1]}x24",
                             "-nolisten", "tcp", "-noreset"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while not Path(f"/tmp/.X11-unix/X{n}").exists():
        if time.monotonic() > deadline or xvfb.poll() is not None:
            xvfb.kill()
            raise RuntimeError("Xvfb did not start")
        time.sleep(0.05)
    return xvfb, f":{n}"


def summary(values: list[float]) -> str:
    return f"median {statistics.median(values):6.1f}  max {max(values):6.1f}"


def report(results: dict[str, dict[str, list[float]]], order: list[str]) -> bool:
    """Print one line per row (and per tree); True when every key of this tree met the target."""
    trees = list(results)
    ok = True
    width = max(len(n) for n in order)
    print(f"\n{'key':<{width}}  " + "  ".join(f"{t:^28}" for t in trees)
          + ("  ratio (medians)" if len(trees) > 1 else ""))
    for name in order:
        cells = []
        for tree in trees:
            values = results[tree].get(name, [])
            cells.append(f"n={len(values):<2} {summary(values)}" if values else " " * 28)
        line = f"{name:<{width}}  " + "  ".join(cells)
        if len(trees) > 1 and all(results[t].get(name) for t in trees):
            now = statistics.median(results[trees[0]][name])
            before = statistics.median(results[trees[1]][name])
            line += f"  {now / before:5.2f}x"
        print(line)
        values = results[trees[0]].get(name, [])
        ok = ok and bool(values) and max(values) <= TARGET_MS
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", metavar="REV", default=None,
                        help="also measure gpumon at this git revision (git archive)")
    parser.add_argument("--rounds", type=int, default=4, help="tab rounds after the first")
    parser.add_argument("--zoom-rounds", type=int, default=1,
                        help="times 100 %% → 300 %% → 100 %%")
    args = parser.parse_args(argv)
    for tool in ("Xvfb", "xdotool"):
        if shutil.which(tool) is None:
            print(f"{tool} is not installed")
            return 2
    print(describe())
    steps = plan(args.rounds, args.zoom_rounds)
    order = list(dict.fromkeys(name for name, _ in steps))
    xvfb, display = start_xvfb()
    results: dict[str, dict[str, list[float]]] = {}
    try:
        screen = Screen(display)
        with tempfile.TemporaryDirectory() as tmp:
            trees: list[tuple[str, Callable[[], Path]]] = [("this tree", lambda: REPO)]
            if args.before:
                trees.append((f"before ({args.before})",
                              lambda: baseline_tree(args.before, Path(tmp))))
            for label, tree in trees:
                print(f"measuring {label} …", flush=True)
                results[label] = run_tree(tree(), display, screen, steps)
    finally:
        xvfb.terminate()
        xvfb.wait(10)
    ok = report(results, order)
    print(f"\ntarget: every key answered within {TARGET_MS:.0f} ms (this tree's max): "
          + ("met" if ok else "NOT met"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
