"""Signalling a GPU process from the table: a child shown through the fake driver is
terminated through the real confirmation dialog and seen gone; PID 1 is refused with one
sentence; a user who does not own a process is told whose it is; a simulated source offers
no signals at all."""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator

import pytest
from fakenvml import FakeNvml
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QApplication, QMessageBox

from gpumon.telemetry.model.types import GpuProcess, MachineInfo, ProcessType, Snapshot
from gpumon.telemetry.nvml.source import NvmlSource
from gpumon.telemetry.procs.signals import TERMINATE, refusal
from gpumon.telemetry.sources.simulated import SimulatedSource
from gpumon.ui.window.main_window import MainWindow

GIB = 1 << 30


@pytest.fixture
def child() -> Iterator[subprocess.Popen[bytes]]:
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    yield proc
    proc.kill()
    proc.wait(timeout=5)


class DialogAnswer:
    """Answers the next modal QMessageBox named ``name`` with ``button``; keeps its text."""

    def __init__(self, name: str, button: QMessageBox.StandardButton) -> None:
        self.name, self.button, self.text = name, button, ""
        self.timer = QTimer()
        self.timer.setInterval(20)
        self.timer.timeout.connect(self._look)
        self.timer.start()

    def _look(self) -> None:
        box = QApplication.activeModalWidget()
        if isinstance(box, QMessageBox) and box.objectName() == self.name:
            self.text = box.text()
            self.timer.stop()
            box.button(self.button).click()


def _select(w: MainWindow, pid: int) -> None:
    proxy = w.process_table.proxy
    row = next(r for r in range(proxy.rowCount()) if proxy.index(r, 1).data() == str(pid))
    w.process_table.setCurrentIndex(proxy.index(row, 0))


def _menu_texts(w: MainWindow, p: GpuProcess) -> list[str]:
    return [a.text() for a in w.process_actions.menu_for(p).actions() if not a.isSeparator()]


def _shows(w: MainWindow, pid: int) -> Callable[[], bool]:
    return lambda: any(p.pid == pid for p in w.process_table.process_model.processes)


def test_terminate_a_child_through_the_confirmation(qtbot, make_window, fake_nvml: FakeNvml,
                                                     child: subprocess.Popen[bytes]) -> None:
    fake_nvml.add_process(0, child.pid, 3 * GIB)
    w = make_window(NvmlSource)
    qtbot.waitUntil(_shows(w, child.pid), timeout=5000)
    assert w.process_actions.enabled
    p = next(p for p in w.process_table.process_model.processes if p.pid == child.pid)
    assert _menu_texts(w, p) == ["Open\tEnter", "Interrupt (SIGINT)\tI", "Terminate (SIGTERM)\tT",
                                 "Kill (SIGKILL)\tK"]
    _select(w, child.pid)
    answer = DialogAnswer("signalConfirm", QMessageBox.StandardButton.Yes)
    qtbot.keyClick(w.process_table, Qt.Key.Key_T)
    assert child.wait(timeout=5) == -signal.SIGTERM
    assert answer.text.startswith(f"Terminate process {child.pid} (")
    assert "of user root" in answer.text or f"of user {os.environ.get('USER')}" in answer.text
    assert "It holds 3.00 GiB of GPU memory on GPU 0." in answer.text
    fake_nvml.clear_processes()  # the driver lets go of it too
    qtbot.waitUntil(lambda: not _shows(w, child.pid)(), timeout=5000)


def test_cancel_sends_nothing(qtbot, make_window, fake_nvml: FakeNvml,
                              child: subprocess.Popen[bytes]) -> None:
    fake_nvml.add_process(0, child.pid, GIB)
    w = make_window(NvmlSource)
    qtbot.waitUntil(_shows(w, child.pid), timeout=5000)
    _select(w, child.pid)
    answer = DialogAnswer("signalConfirm", QMessageBox.StandardButton.Cancel)
    qtbot.keyClick(w.process_table, Qt.Key.Key_K)
    assert answer.text.startswith("Kill process")
    assert child.poll() is None


def test_pid_1_is_refused_with_one_sentence(qtbot, make_window, fake_nvml: FakeNvml) -> None:
    fake_nvml.add_process(0, 1, GIB)
    w = make_window(NvmlSource)
    qtbot.waitUntil(_shows(w, 1), timeout=5000)
    _select(w, 1)
    answer = DialogAnswer("signalRefusal", QMessageBox.StandardButton.Ok)
    qtbot.keyClick(w.process_table, Qt.Key.Key_K)
    assert answer.text == "Process 1 is the system's first process; gpumon never signals it."


def test_simulated_processes_are_never_offered(qtbot, make_window) -> None:
    w = make_window()
    qtbot.waitUntil(lambda: bool(w.process_table.process_model.processes), timeout=5000)
    p = w.process_table.process_model.processes[0]
    assert not w.process_actions.enabled
    assert _menu_texts(w, p) == ["Open\tEnter"]  # no signal to send
    _select(w, p.pid)
    qtbot.keyClick(w.process_table, Qt.Key.Key_K)  # nothing asks, nothing is sent
    assert QApplication.activeModalWidget() is None


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                    reason="needs root to run the check as another user")
def test_another_users_process_is_refused(child: subprocess.Popen[bytes]) -> None:
    code = ("import sys; from gpumon.telemetry.procs.signals import refusal; "
            f"print(refusal({child.pid}))")
    try:
        done = subprocess.run([sys.executable, "-c", code], user=65534, capture_output=True,
                              text=True, timeout=30, check=False,
                              env={**os.environ, "LANGUAGE": "en"})
    except OSError as err:
        pytest.skip(f"cannot run Python as nobody here: {err}")
    if done.returncode != 0:
        pytest.skip(f"cannot run Python as nobody here: {done.stderr.strip()[-200:]}")
    assert done.stdout.strip() == (f"Process {child.pid} belongs to root; only that user or "
                                   "an administrator may signal it.")
    assert refusal(child.pid) is None  # root may
    assert child.poll() is None


def test_a_reused_pid_is_refused(child: subprocess.Popen[bytes]) -> None:
    assert refusal(child.pid, started_s=0.0) == (
        f"Process {child.pid} has ended; its number now belongs to another program.")
    assert TERMINATE.signum == signal.SIGTERM


def test_kill_rule_for_a_user_who_is_not_root(monkeypatch: pytest.MonkeyPatch,
                                              child: subprocess.Popen[bytes]) -> None:
    """The same rule seen from uid 65534 (its ids faked; the process and its ids are real)."""
    if not hasattr(os, "geteuid") or os.geteuid() == 65534:
        pytest.skip("POSIX, run as a user other than 65534")
    owner = os.getuid()
    monkeypatch.setattr(os, "geteuid", lambda: 65534)
    monkeypatch.setattr(os, "getuid", lambda: 65534)
    why = refusal(child.pid)
    assert why is not None and why.startswith(f"Process {child.pid} belongs to ")
    monkeypatch.setattr(os, "getuid", lambda: owner)  # a real uid equal to its owner's
    assert refusal(child.pid) is None


class PrometheusLike(SimulatedSource):
    """Snapshots as a Prometheus source gives them: not simulated, another machine's PIDs;
    here the PID of a real child of this test, which a signal would reach."""

    def __init__(self, pid: int) -> None:
        super().__init__(1, seed=1)
        self.pid = pid

    def machine(self) -> MachineInfo:
        return dataclasses.replace(super().machine(), source_name="Prometheus",
                                   simulated=False)

    def sample(self, include_slow: bool = True) -> Snapshot:
        snap = super().sample(include_slow)
        process = GpuProcess(0, self.pid, ProcessType.COMPUTE, GIB, "python", "someone",
                             "python train.py")
        return dataclasses.replace(snap, machine=self.machine(), simulated=False,
                                   processes=(process,))


def test_a_prometheus_source_s_processes_are_never_offered(
        qtbot, make_window, child: subprocess.Popen[bytes]) -> None:
    w = make_window(lambda: PrometheusLike(child.pid))
    qtbot.waitUntil(_shows(w, child.pid), timeout=5000)
    p = next(p for p in w.process_table.process_model.processes if p.pid == child.pid)
    assert not w.process_actions.enabled
    assert _menu_texts(w, p) == ["Open\tEnter"]  # no signal to send
    _select(w, child.pid)
    qtbot.keyClick(w.process_table, Qt.Key.Key_T)  # nothing asks, nothing is sent
    assert QApplication.activeModalWidget() is None
    assert child.poll() is None
