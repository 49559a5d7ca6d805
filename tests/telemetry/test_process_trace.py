"""A process's own readings over time, bounded, and its end."""

from __future__ import annotations

import pytest

# The process view's trace reads the History, which needs numpy (a GPU machine may lack it).
pytest.importorskip("numpy", reason="numpy is not installed (the process view needs it)")

from gpumon.telemetry.history.process_trace import ProcessTrace
from gpumon.telemetry.model.types import (
    GpuProcess,
    MachineInfo,
    ProcessType,
    Snapshot,
    SourceState,
    SourceStatus,
)

MACHINE = MachineInfo(host_name="h", source_name="NVML")
STATUS = SourceStatus(SourceState.OK, "")


def snap(t: float, *procs: GpuProcess) -> Snapshot:
    return Snapshot(timestamp_s=t, machine=MACHINE, status=STATUS, processes=procs)


def proc(gpu: int, pid: int = 7, mem: int = 1 << 30, **kw: object) -> GpuProcess:
    return GpuProcess(gpu, pid, ProcessType.COMPUTE, mem, **kw)  # type: ignore[arg-type]


def test_series_per_gpu_and_host() -> None:
    trace = ProcessTrace(7)
    trace.add(snap(1.0, proc(0, sm_util_pct=50.0, cpu_pct=120.0, host_rss_bytes=10,
                             started_s=0.5), proc(1, mem=2 << 30), proc(0, pid=8)))
    trace.add(snap(2.0, proc(0, sm_util_pct=None, started_s=0.5)))
    assert list(trace.gpu_mem[0]) == [(1.0, float(1 << 30)), (2.0, float(1 << 30))]
    assert list(trace.gpu_mem[1]) == [(1.0, float(2 << 30))]
    assert list(trace.sm_pct[0]) == [(1.0, 50.0), (2.0, None)]
    assert list(trace.cpu_pct) == [(1.0, 120.0), (2.0, None)]
    assert trace.exited_s is None


def test_bounded_and_exited() -> None:
    trace = ProcessTrace(7, capacity=3)
    for t in range(10):
        trace.add(snap(float(t), proc(0)))
    assert [t for t, _ in trace.gpu_mem[0]] == [7.0, 8.0, 9.0] and len(trace.cpu_pct) == 3
    trace.add(snap(10.0))
    trace.add(snap(11.0, proc(0)))  # listed again: not followed any more
    assert trace.exited_s == 10.0 and [t for t, _ in trace.gpu_mem[0]] == [7.0, 8.0, 9.0]


def test_a_reused_pid_ends_the_trace() -> None:
    trace = ProcessTrace(7)
    trace.add(snap(1.0, proc(0, started_s=100.0)))
    trace.add(snap(2.0, proc(0, started_s=500.0)))
    assert trace.exited_s == 2.0 and len(trace.gpu_mem[0]) == 1


def test_not_yet_listed_is_not_exited() -> None:
    trace = ProcessTrace(7)
    trace.add(snap(1.0))
    assert trace.exited_s is None and trace.latest is None
