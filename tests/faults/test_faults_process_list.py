"""A driver that gives no process list: the table and --once say so instead of staying empty."""

from __future__ import annotations

import os

import pytest
from fakenvml import FakeNvml
from faults_helpers import run_once

from gpumon.telemetry.model.facts import process_list_note
from gpumon.telemetry.nvml.source import NvmlSource
from gpumon.telemetry.nvml.unsupported import UNSUPPORTED_RECHECK_S

LISTS = ("nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetComputeRunningProcesses_v2",
         "nvmlDeviceGetGraphicsRunningProcesses_v3", "nvmlDeviceGetGraphicsRunningProcesses_v2")


def _unsupported_lists(fake: FakeNvml, gpu: int = -1) -> None:
    for func in LISTS:
        fake.set_unsupported(func, gpu)


def test_source_marks_the_gpu_without_process_list(fake_nvml: FakeNvml) -> None:
    fake_nvml.set_gpu_count(2)
    fake_nvml.add_process(0, os.getpid(), 1 << 30)
    _unsupported_lists(fake_nvml, gpu=1)
    source = NvmlSource()
    source.open()
    try:
        snap = source.sample()
    finally:
        source.close()
    assert [s.processes_supported for s in snap.samples] == [True, False]
    assert process_list_note(snap) == "Process list not supported by this GPU/driver (GPU 1)."
    assert [p.pid for p in snap.processes] == [os.getpid()]


def test_once_says_the_list_is_not_supported(fake_nvml: FakeNvml,
                                             capfd: pytest.CaptureFixture[str]) -> None:
    _unsupported_lists(fake_nvml)
    rc, out, _ = run_once(capfd)
    assert rc == 0
    assert "Process list not supported by this GPU/driver." in out
    assert "No running processes found" not in out


def test_window_table_says_the_list_is_not_supported(qtbot, make_window,
                                                     fake_nvml: FakeNvml) -> None:
    _unsupported_lists(fake_nvml)
    clock = [0.0]  # the source's clock: when a "not supported" call is asked again
    w = make_window(lambda: NvmlSource(clock=lambda: clock[0]))
    note = w.process_table.note
    qtbot.waitUntil(note.isVisible, timeout=5000)
    assert note.text() == "Process list not supported by this GPU/driver."
    assert note.geometry() == w.process_table.viewport().rect()  # centred in the empty table
    for func in LISTS:  # the driver lists processes again (the latest script wins)
        fake_nvml.set_error(func, 0)
    fake_nvml.add_process(0, os.getpid(), 1 << 30)
    clock[0] += UNSUPPORTED_RECHECK_S  # it is asked again after that
    qtbot.waitUntil(lambda: not note.isVisible(), timeout=5000)
