"""The end of a desktop session, for real: gpumon gets SIGTERM and its X server ends at the
same moment (20 times: during start-up, with the Lesson's kernel running, and while
recording), a dropped ``ssh -X`` link (SIGHUP and the display lost together), and a display
lost on its own at several moments of start-up.

Each time gpumon is gone (a window that spins or idles is still there after ``GONE_S`` and
fails), nothing it started is left running (its kernel is gone when it exits, and no process
carrying the run's token in its environment is left), a recording ends on a whole row and
holds every row gpumon says it wrote, the exit status says why (0: asked to quit, 129: hung
up, 1: display lost, with a sentence), and nothing reached stderr but sentences: no
traceback, no stack dump from the 3 s deadline (``gpumon/ending.py``). In the first moments
of start-up two more ends are right: the signal's own (the interpreter is still starting,
nothing of gpumon's runs), and Qt's "could not connect to display" where the display was
gone before Qt reached it.

Each case starts its own Xvfb (``-displayfd``: it picks a free display) and gpumon
(``python -m gpumon``, or ``session_app.py`` for a window with the Lesson shown or a
recording going).
"""

from __future__ import annotations

import csv
import os
import re
import selectors
import shutil
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("Xvfb") is None,
                       reason="Xvfb is not installed (CI installs it: see .ci/run)"),
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="X11 and /proc"),
]

APP = Path(__file__).with_name("session_app.py")
READY_S = 90.0  # a cold start imports PySide6 and pyqtgraph, the kernel torch
GONE_S = 20.0  # the app ends itself within 3 s; beyond this it spins or idles
TOKEN_ENV = "GPUMON_SESSION_END_TEST"
SAVED = re.compile(r"gpumon: the recording (.+) is complete: (\d+) rows?\.")


@dataclass(frozen=True)
class Case:
    """One end: the window's state, how long after it is reached the end comes, what ends
    gpumon (a signal, or None: the display alone), and which goes first. The state:
    "start-up" (from the start of ``python -m gpumon``), "lesson" (from the start of the
    Lesson's kernel, or from torch loaded in it where ``loaded``), "record" (from the 40th
    row of a recording)."""

    mode: str
    delay_s: float
    sig: signal.Signals | None = signal.SIGTERM
    display_first: bool = False
    loaded: bool = False

    def __str__(self) -> str:
        what = self.sig.name if self.sig is not None else "display only"
        first = "display first" if self.display_first else "signal first"
        state = "torch loaded" if self.loaded else self.mode
        return f"{state}+{self.delay_s}s-{what}-{first}"


# The session's end 20 times: SIGTERM and the X server's end together, in both orders, at
# moments of start-up, of the kernel's start and torch's import, and of a recording.
SESSION_END = [
    Case("start-up", 0.3), Case("start-up", 1.0, display_first=True), Case("start-up", 2.0),
    Case("start-up", 3.0, display_first=True), Case("start-up", 4.5), Case("start-up", 6.0),
    Case("start-up", 8.0, display_first=True),
    Case("lesson", 0.0), Case("lesson", 0.5, display_first=True), Case("lesson", 1.5),
    Case("lesson", 3.0, display_first=True), Case("lesson", 0.0, loaded=True),
    Case("lesson", 0.5, loaded=True), Case("lesson", 1.0, display_first=True, loaded=True),
    Case("record", 0.0), Case("record", 0.3, display_first=True), Case("record", 0.7),
    Case("record", 1.1, display_first=True), Case("record", 1.6), Case("record", 2.2),
]
# A dropped ssh -X link, and a display lost alone (the window had no signal at all).
OTHERS = [
    Case("record", 0.4, signal.SIGHUP), Case("lesson", 2.0, signal.SIGHUP, display_first=True),
    Case("start-up", 1.5, None), Case("start-up", 6.0, None), Case("lesson", 1.0, None),
    Case("record", 0.5, None), Case("record", 0.2, signal.SIGINT),
]


class Xvfb:
    """An X server of the test's own, on a display it picked."""

    def __init__(self) -> None:
        read, write = os.pipe()
        self.proc = subprocess.Popen(
            ["Xvfb", "-displayfd", str(write), "-screen", "0", "1280x1024x24", "-nolisten",
             "tcp", "-noreset"], pass_fds=(write,), stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL)
        os.close(write)
        with os.fdopen(read) as numbers:
            number = numbers.readline().strip()
        if not number:
            self.proc.kill()
            self.proc.wait()
            pytest.skip("Xvfb did not start")
        self.display = f":{number}"

    def end(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


class App:
    """gpumon on ``display``, its stdout read line by line, its stderr kept in a file."""

    def __init__(self, mode: str, display: str, tmp_path: Path) -> None:
        self.token = uuid.uuid4().hex
        self.csv = tmp_path / "recording.csv"
        self.err_path = tmp_path / "stderr.txt"
        env = dict(os.environ, DISPLAY=display, QT_QPA_PLATFORM="xcb",
                   XDG_CONFIG_HOME=str(tmp_path / "config"), LANGUAGE="en")
        env[TOKEN_ENV] = self.token
        env.pop("WAYLAND_DISPLAY", None)
        env.pop("GPUMON_KERNEL_FORKSERVER", None)
        if mode == "start-up":
            command = [sys.executable, "-m", "gpumon", "--simulate", "2", "--interval", "0.2"]
        else:
            command = [sys.executable, str(APP), mode, str(self.csv)]
        with self.err_path.open("wb") as err:
            self.proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=err)
        self.kernel: int | None = None
        self._lines: list[str] = []
        self._selector = selectors.DefaultSelector()
        assert self.proc.stdout is not None
        os.set_blocking(self.proc.stdout.fileno(), False)
        self._selector.register(self.proc.stdout, selectors.EVENT_READ)
        self._buffer = b""

    def stderr(self) -> str:
        return self.err_path.read_text(errors="replace")

    def wait_for(self, line: str) -> None:
        """Until the app printed ``line``, or a line beginning ``kernel `` for "kernel"
        (noting the kernel's pid on the way)."""
        deadline = time.monotonic() + READY_S
        while line not in self._lines and not (line == "kernel" and self.kernel is not None):
            if self.proc.poll() is not None:
                pytest.fail(f"gpumon ended ({self.proc.returncode}) before {line!r}:\n"
                            f"{self.stderr()}")
            if time.monotonic() > deadline:
                pytest.fail(f"no {line!r} from gpumon within {READY_S:.0f} s:\n{self.stderr()}")
            self._read(0.1)

    def _read(self, timeout_s: float) -> None:
        assert self.proc.stdout is not None
        if self._selector.select(timeout_s):
            self._buffer += self.proc.stdout.read() or b""
            *lines, self._buffer = self._buffer.split(b"\n")
            for raw in lines:
                text = raw.decode(errors="replace")
                self._lines.append(text)
                if text.startswith("kernel "):
                    self.kernel = int(text.split()[1])

    def cpu_s(self) -> float:
        """CPU seconds the app has used (user and system), from /proc."""
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self._selector.close()
        assert self.proc.stdout is not None
        self.proc.stdout.close()


def _carrying(token: str) -> list[str]:
    """Processes with ``TOKEN_ENV=token`` in their environment: gpumon and all it started."""
    found = []
    needle = f"{TOKEN_ENV}={token}".encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if needle in (entry / "environ").read_bytes().split(b"\0"):
                found.append(f"{entry.name}: {(entry / 'cmdline').read_bytes()[:200]!r}")
        except OSError:  # ended meanwhile, or not ours to read
            continue
    return found


@pytest.fixture
def session(tmp_path: Path) -> Iterator[tuple[Xvfb, list[App]]]:
    xvfb = Xvfb()
    apps: list[App] = []
    yield xvfb, apps
    for app in apps:
        app.close()
        for line in _carrying(app.token):  # whatever a failed case left: not for the next
            os.kill(int(line.split(":")[0]), signal.SIGKILL)
    xvfb.close()


def _end(case: Case, xvfb: Xvfb, app: App) -> None:
    if case.display_first or case.sig is None:
        xvfb.end()
    if case.sig is not None:
        app.proc.send_signal(case.sig)
    xvfb.end()


def _wait_gone(app: App) -> int:
    try:
        return app.proc.wait(GONE_S)
    except subprocess.TimeoutExpired:
        before = app.cpu_s()
        time.sleep(1.0)
        used = app.cpu_s() - before
        pytest.fail(f"gpumon still runs {GONE_S:.0f} s after the end of its session, using "
                    f"{used:.0%} of a core:\n{app.stderr()}")


def _check_recording(app: App, err: str) -> None:
    saved = SAVED.search(err)
    assert saved is not None, f"no sentence about the recording on stderr:\n{err}"
    assert saved.group(1) == str(app.csv)
    text = app.csv.read_text(encoding="utf-8")
    assert text.endswith("\n"), f"the recording ends in the middle of a row: {text[-200:]!r}"
    rows = [row for row in csv.reader(text.splitlines()) if row]
    header = rows[0]
    data = [row for row in rows if row[0] != header[0]]
    widths = {len(row) for row in rows}
    assert len(widths) <= 2, f"rows of {sorted(widths)} columns"  # a wider section later
    assert len(data) == int(saved.group(2)) >= 40


def _run(case: Case, session: tuple[Xvfb, list[App]], tmp_path: Path) -> None:
    xvfb, apps = session
    app = App(case.mode, xvfb.display, tmp_path)
    apps.append(app)
    if case.mode == "lesson":
        app.wait_for("ready" if case.loaded else "kernel")
    elif case.mode == "record":
        app.wait_for("ready")
    deadline = time.monotonic() + case.delay_s
    while time.monotonic() < deadline:
        app._read(max(0.0, deadline - time.monotonic()))
    _end(case, xvfb, app)
    status = _wait_gone(app)
    kernel_alive = app.kernel is not None and Path(f"/proc/{app.kernel}").exists()
    err = app.stderr()
    assert "Traceback" not in err and "Fatal Python error" not in err, err
    assert "Timeout (" not in err, f"the 3 s deadline ended gpumon:\n{err}"
    assert not kernel_alive, f"the kernel {app.kernel} outlived gpumon:\n{err}"
    end = time.monotonic() + 3.0
    while (left := _carrying(app.token)) and time.monotonic() < end:
        time.sleep(0.1)
    assert not left, "left running: " + "\n".join(left)
    lost = "gpumon: the display"
    expected = {signal.SIGTERM: 0, signal.SIGINT: 0, signal.SIGHUP: 129, None: 1}[case.sig]
    if case.mode == "start-up" and status < 0:
        # Before gpumon's code runs, the signal's own action (the interpreter starting), or
        # Qt's abort where the display was gone before Qt could reach it.
        assert status == -case.sig if case.sig and status != -signal.SIGABRT else (
            "could not connect to display" in err), f"exit status {status}:\n{err}"
        return
    assert status in (expected, 1), f"exit status {status}:\n{err}"
    assert (status == 1) == (lost in err), f"exit status {status}:\n{err}"
    if case.mode == "record":
        _check_recording(app, err)


@pytest.mark.parametrize("case", SESSION_END, ids=str)
def test_the_session_ends(case: Case, session: tuple[Xvfb, list[App]], tmp_path: Path) -> None:
    _run(case, session, tmp_path)


@pytest.mark.parametrize("case", OTHERS, ids=str)
def test_a_hang_up_or_a_lost_display(case: Case, session: tuple[Xvfb, list[App]],
                                     tmp_path: Path) -> None:
    _run(case, session, tmp_path)


XLIB = r"""
import ctypes, ctypes.util, os, signal, sys, time
from PySide6.QtCore import QTimer
from gpumon.ui.window import launch
from gpumon.ui.window.main_window import MainWindow, simulated_factory

def make(interval_s, settings):
    window = MainWindow(simulated_factory(2), 0.2, settings=settings)
    def end_x():
        # Qt's xcb holds the connection, which Xlib shares (its last request went through
        # xcb, as most of Qt's do); the X server goes, and xcb meets the broken connection
        # first, as Qt's event thread may. Then a request through Xlib (Qt's GL and window
        # code may make one at any moment), which can no longer take the socket back from
        # xcb: where Xlib's handler returned, Xlib had no buffer for the request and wrote
        # it through a null pointer ("request 18 length 24 would exceed buffer size"), a
        # segfault.
        from PySide6.QtWidgets import QApplication
        display = QApplication.instance().nativeInterface().display()
        x11 = ctypes.CDLL(ctypes.util.find_library("X11"))
        xlib_xcb = ctypes.CDLL("libX11-xcb.so.1")
        xlib_xcb.XGetXCBConnection.argtypes = [ctypes.c_void_p]
        xlib_xcb.XGetXCBConnection.restype = ctypes.c_void_p
        xcb = ctypes.CDLL(ctypes.util.find_library("xcb"))
        xcb.xcb_no_operation.argtypes = xcb.xcb_flush.argtypes = [ctypes.c_void_p]
        xcb.xcb_no_operation.restype = ctypes.c_uint
        connection = xlib_xcb.XGetXCBConnection(display)
        xcb.xcb_no_operation(connection)
        xcb.xcb_flush(connection)
        os.kill(int(sys.argv[1]), signal.SIGKILL)
        time.sleep(0.5)
        xcb.xcb_no_operation(connection)
        xcb.xcb_flush(connection)
        x11.XDefaultRootWindow.argtypes = [ctypes.c_void_p]
        x11.XDefaultRootWindow.restype = ctypes.c_ulong
        x11.XChangeProperty.argtypes = [ctypes.c_void_p, ctypes.c_ulong, ctypes.c_ulong,
                                        ctypes.c_ulong, ctypes.c_int, ctypes.c_int,
                                        ctypes.c_char_p, ctypes.c_int]
        x11.XChangeProperty(display, x11.XDefaultRootWindow(display), 39, 31, 8, 0, b"x", 1)
        print("Xlib returned", flush=True)
    QTimer.singleShot(1000, window, end_x)
    return window

sys.exit(launch.run(2, make_window=make))
"""


def test_xlib_meeting_the_lost_display_ends_the_window_in_order(tmp_path: Path) -> None:
    """Xlib's own handler of a lost connection called exit(1) at once ("XIO: fatal IO
    error"): nothing finished, no sentence. A handler that returned left Xlib without a
    request buffer, and its next request segfaulted. Now the handler ends the window in
    order, with the display-lost status and sentence, and never returns into Xlib."""
    xvfb = Xvfb()
    try:
        env = dict(os.environ, DISPLAY=xvfb.display, QT_QPA_PLATFORM="xcb", LANGUAGE="en",
                   XDG_CONFIG_HOME=str(tmp_path))
        env.pop("WAYLAND_DISPLAY", None)
        done = subprocess.run([sys.executable, "-c", XLIB, str(xvfb.proc.pid)], env=env,
                              capture_output=True, text=True, timeout=120)
    finally:
        xvfb.close()
    assert "Xlib returned" not in done.stdout, done.stderr
    assert done.returncode == 1, done.stderr
    assert f"gpumon: the display {xvfb.display} went away; the window has closed." in (
        done.stderr), done.stderr
    assert "XIO:" not in done.stderr and "Traceback" not in done.stderr, done.stderr
