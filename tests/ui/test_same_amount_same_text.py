"""The monitor and the playground print the same amount of memory the same way: a process's GPU
memory in the process table and the hover readout, a tensor's size in the playground's
variable table and the memory line under a result, for the same number of bytes."""

from __future__ import annotations

import re

import pytest

from gpumon.playground.data.actions import CreateFilled
from gpumon.playground.data.outcome import MemoryReading, Outcome, WorkspaceEntry
from gpumon.telemetry.model.readouts import format_readout
from gpumon.telemetry.model.types import GpuProcess, ProcessType
from gpumon.ui.monitor.process.table import texts_of
from gpumon.ui.playground.style import memory_text
from gpumon.ui.playground.workspace_table import WorkspaceTable

AMOUNTS = [0, 1023, 1536, 3 * 2**20 // 2, 256 * 2**20, 3 * 2**30 // 2, int(12.34 * 2**30),
           2 * 2**40]


def monitor_texts(n: int) -> set[str]:
    process = texts_of(GpuProcess(0, 4242, ProcessType.COMPUTE, gpu_mem_bytes=n))[5]
    line = format_readout(0, 100.0, {"timestamp_s": 100.0, "torch_allocated_bytes": n})
    readout = re.search(r"torch allocated (.*)$", line)
    assert readout is not None, line
    return {process, readout.group(1)}


def playground_texts(qtbot, n: int) -> set[str]:
    table = WorkspaceTable()
    qtbot.addWidget(table)
    table.set_entries([WorkspaceEntry("x", "tensor", (n,), "uint8", "cuda:0", n)])
    size = table.row_texts()[0][5]
    outcome = Outcome(CreateFilled("x", "zeros", (n,), dtype="uint8", device="cuda:0"),
                      "x = ...", True, 0.0, 0.0,
                      memory_after=(MemoryReading("cuda:0", n, n),))
    # a tensor on a GPU that held nothing: the change of allocated and reserved is its size
    line = re.fullmatch(r"cuda:0: allocated \+?(.*), reserved \+?(.*)", memory_text(outcome))
    assert line is not None, memory_text(outcome)
    return {size, line.group(1), line.group(2)}


@pytest.mark.parametrize("n", AMOUNTS)
def test_the_monitor_and_the_playground_print_an_amount_alike(qtbot, n: int) -> None:
    monitor, playground = monitor_texts(n), playground_texts(qtbot, n)
    assert len(monitor) == 1 and monitor == playground, (monitor, playground)


def test_one_and_a_half_gib_reads_with_two_decimals_everywhere(qtbot) -> None:
    assert monitor_texts(3 * 2**30 // 2) == playground_texts(qtbot, 3 * 2**30 // 2) == {
        "1.50 GiB"}
