"""Processes that vanish or belong to someone else, and a driver whose every call is slow.

All through the real NvmlSource on the fake library: the process list comes from the fake,
the names and users from psutil (made to fail where the fault needs it).
"""

from __future__ import annotations

import functools
import inspect
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import psutil
import pynvml
import pytest
from fakenvml import FakeNvml
from faults_helpers import panel_text, process_rows, run_once
from PySide6.QtCore import QTimer
from testkit import vanished_pid

from gpumon.telemetry.nvml.source import NvmlSource

GIB = 1024**3
WAIT_MS = 5000


@pytest.fixture
def child() -> Iterator[subprocess.Popen[bytes]]:
    """A live process to list as a GPU process."""
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    yield proc
    proc.kill()
    proc.wait()


def _fail_for(monkeypatch: pytest.MonkeyPatch, pid: int, methods: tuple[str, ...],
              error: Callable[[int], psutil.Error]) -> None:
    """psutil.Process.<method>() raises ``error(pid)`` for this PID only."""
    for name in methods:
        original = getattr(psutil.Process, name)

        def patched(self: psutil.Process, *a: Any, _orig: Any = original, **k: Any) -> Any:
            if self.pid == pid:
                raise error(pid)
            return _orig(self, *a, **k)

        monkeypatch.setattr(psutil.Process, name, patched)


def _row(rows: list[dict[str, str]], pid: int) -> dict[str, str]:
    found = [r for r in rows if r["PID"] == str(pid)]
    assert len(found) == 1, rows
    return found[0]


def _once_row(out: str, pid: int) -> str:
    found = [line for line in out.splitlines() if f" {pid} " in line and "MiB" in line]
    assert len(found) == 1, out
    return found[0]


@pytest.mark.parametrize("when", ["before lookup", "during lookup"])
def test_process_that_vanished_keeps_a_row(qtbot, make_window, fake_nvml: FakeNvml,
                                           monkeypatch: pytest.MonkeyPatch,
                                           child: subprocess.Popen[bytes], when: str,
                                           capfd: pytest.CaptureFixture[str]) -> None:
    if when == "before lookup":  # listed by the driver, gone when psutil asks
        pid = vanished_pid()
    else:  # psutil found it, then it exited between two reads
        pid = child.pid
        _fail_for(monkeypatch, pid, ("name", "username", "cmdline"), psutil.NoSuchProcess)
    fake_nvml.add_process(0, pid, GIB)
    rc, out, _ = run_once(capfd)
    line = _once_row(out, pid)
    assert rc == 0 and "N/A" in line and "1024MiB" in line
    w = make_window(NvmlSource)
    qtbot.waitUntil(lambda: any(r["PID"] == str(pid) for r in process_rows(w)), timeout=WAIT_MS)
    row = _row(process_rows(w), pid)
    assert (row["Process name"], row["User"], row["Command"]) == ("N/A", "N/A", "N/A")
    assert row["GPU memory"] == "1.00 GiB" and row["Type"] == "C"
    before = w.history.count(0)
    qtbot.waitUntil(lambda: w.history.count(0) >= before + 3, timeout=WAIT_MS)


@pytest.mark.parametrize("denied", ["user and command", "everything"])
def test_process_of_another_user_shows_what_is_known(qtbot, make_window, fake_nvml: FakeNvml,
                                                     monkeypatch: pytest.MonkeyPatch,
                                                     child: subprocess.Popen[bytes],
                                                     denied: str,
                                                     capfd: pytest.CaptureFixture[str]) -> None:
    pid = child.pid
    name = psutil.Process(pid).name()
    if denied == "everything":  # even opening the process is refused
        monkeypatch.setattr(psutil, "Process", _denying_process(pid))
    else:
        _fail_for(monkeypatch, pid, ("username", "cmdline"), psutil.AccessDenied)
    fake_nvml.add_process(0, pid, 2 * GIB)
    rc, out, _ = run_once(capfd)
    assert rc == 0 and "2048MiB" in _once_row(out, pid)
    w = make_window(NvmlSource)
    qtbot.waitUntil(lambda: any(r["PID"] == str(pid) for r in process_rows(w)), timeout=WAIT_MS)
    row = _row(process_rows(w), pid)
    assert row["GPU memory"] == "2.00 GiB"
    assert (row["User"], row["Command"]) == ("N/A", "N/A")
    assert row["Process name"] == ("N/A" if denied == "everything" else name)


def _denying_process(pid: int) -> Callable[..., psutil.Process]:
    real = psutil.Process

    def make(p: int | None = None) -> psutil.Process:
        if p == pid:
            raise psutil.AccessDenied(p)
        return real(p)

    return make


# --- every NVML call takes 200 ms ----------------------------------------------------------

class SlowNvml:
    """Wraps every pynvml function; while ``on``, each call sleeps ``delay_s`` first."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, delay_s: float) -> None:
        self.delay_s = delay_s
        self.on = threading.Event()
        self.calls = 0
        self.in_call = 0  # calls under way now (sleeping in the sampling thread)
        for name, fn in inspect.getmembers(pynvml, inspect.isfunction):
            if name.startswith("nvml"):
                monkeypatch.setattr(pynvml, name, self._wrap(fn))

    def _wrap(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)  # NvmlSource names calls by __name__
        def slow(*args: Any, **kwargs: Any) -> Any:
            if self.on.is_set():
                self.calls += 1
                self.in_call += 1
                try:
                    time.sleep(self.delay_s)
                finally:
                    self.in_call -= 1
            return fn(*args, **kwargs)
        return slow


def test_every_call_taking_200_ms_keeps_the_window_live_and_says_stale(
        qtbot, make_window, fake_nvml: FakeNvml, monkeypatch: pytest.MonkeyPatch) -> None:
    slow = SlowNvml(monkeypatch, 0.2)
    w = make_window(NvmlSource, interval_s=0.1)
    qtbot.waitUntil(lambda: w.history.count(0) >= 2, timeout=WAIT_MS)
    painted_during_a_call: list[bool] = []

    def on_tick() -> None:
        during = slow.in_call > 0
        w.repaint()  # a synchronous paint of the whole window
        painted_during_a_call.append(during and slow.in_call > 0)

    timer = QTimer()
    timer.timeout.connect(on_tick)
    timer.start(20)
    slow.on.set()
    try:
        qtbot.waitUntil(lambda: slow.calls >= 2 and w.stale, timeout=WAIT_MS)
        assert "data is stale (last update" in w.header.status_line.text()
        assert all(p.stale for p in w.gpu_grid.panels)
        # The driver is still slow; the GUI is not: its timer fires, and the whole window
        # paints, while a 200 ms call is under way in the sampling thread (the stalls and
        # paint times: benchmarks/bench_slow_driver.py).
        qtbot.waitUntil(lambda: painted_during_a_call.count(True) >= 20, timeout=WAIT_MS)
    finally:
        timer.stop()
        slow.on.clear()
    # Fast again: fresh data clears the stale state.
    qtbot.waitUntil(lambda: not w.stale, timeout=10_000)
    assert "stale" not in w.header.status_line.text() and "Temp 40 °C" in panel_text(w, 0)
