"""Processes a container cannot see (issue 53): the fake driver lists PIDs that this
machine's /proc does not know, as a driver does for the host's processes when gpumon runs
in a container without the host's PID namespace. Under the window's process table and in
``--once``, one sentence says how much memory they hold and how to list them."""

from __future__ import annotations

import psutil
import pytest
from fakenvml import FakeNvml

from gpumon.cli.main import main
from gpumon.telemetry.model.facts import hidden_memory
from gpumon.telemetry.model.types import (
    GpuSample,
    MachineInfo,
    Snapshot,
    SourceState,
    SourceStatus,
)
from gpumon.telemetry.nvml.source import NvmlSource

MIB = 1 << 20
SENTENCE = ("3,072 MiB are used by processes this container cannot see; run it with the "
            "host's PID namespace (--pid=host) to list them.")


def _unknown_pids(n: int) -> list[int]:
    """PIDs no process here has (the host's, as seen from a container)."""
    found, pid = [], 4_000_000
    while len(found) < n:
        pid += 7
        if not psutil.pid_exists(pid):
            found.append(pid)
    return found


def test_once_and_the_window_say_what_unseen_processes_hold(
        fake_nvml: FakeNvml, capfd: pytest.CaptureFixture[str], qtbot,
        make_window) -> None:
    fake_nvml.set_gpu_count(2)
    a, b = _unknown_pids(2)
    fake_nvml.add_process(0, a, 2048 * MIB)
    fake_nvml.add_process(1, b, 1024 * MIB)
    assert main(["--once"]) == 0
    out = " ".join(line.strip("| ") for line in capfd.readouterr().out.splitlines())
    assert SENTENCE in " ".join(out.split())
    w = make_window(NvmlSource)
    qtbot.waitUntil(lambda: w.process_table.note.text() == SENTENCE, timeout=10000)
    assert w.process_table.note.isVisible()


def test_nothing_is_said_when_every_process_is_seen(fake_nvml: FakeNvml,
                                                    capfd: pytest.CaptureFixture[str]) -> None:
    import os
    fake_nvml.add_process(0, os.getpid(), 512 * MIB)
    assert main(["--once"]) == 0
    assert "cannot see" not in capfd.readouterr().out


def test_in_a_pid_namespace_of_its_own_unlisted_memory_counts() -> None:
    """Where the driver lists nothing at all in a container, the used memory is the clue."""
    def snap(own: bool, used: int) -> Snapshot:
        return Snapshot(1.0, MachineInfo("c", "NVML", own_pid_namespace=own),
                        SourceStatus(SourceState.OK, "ok"),
                        samples=(GpuSample(0, 1.0, mem_used_bytes=used),
                                 GpuSample(1, 1.0, mem_used_bytes=3 * MIB)))
    assert hidden_memory(snap(True, 5000 * MIB)) == 5000 * MIB
    assert hidden_memory(snap(False, 5000 * MIB)) == 0  # on the host: no such claim
    assert hidden_memory(snap(True, 100 * MIB)) == 0  # what a driver keeps for itself
