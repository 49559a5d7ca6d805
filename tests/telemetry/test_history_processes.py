"""The History's per-process series: aligned with the GPU's times, bounded by its capacity
and by MAX_PROCESSES rows a GPU (beyond: folded into "others", never lost from the totals),
a process that ends drops out, and a process that vanishes between reads breaks nothing."""

from __future__ import annotations

import dataclasses
import math

import pytest
from testkit import STATUS_OK, TEST_MACHINE

np = pytest.importorskip("numpy", reason="numpy is not installed (the window's History needs it)")

from gpumon.telemetry.history.process_history import FIELDS  # noqa: E402
from gpumon.telemetry.history.store import MAX_PROCESSES, History  # noqa: E402
from gpumon.telemetry.model.types import (  # noqa: E402
    GpuProcess,
    GpuSample,
    ProcessType,
    Snapshot,
)

MIB = 1024**2


def proc(pid: int, mib: float | None, gpu: int = 0, **kw: object) -> GpuProcess:
    return GpuProcess(gpu, pid, ProcessType.COMPUTE,
                      None if mib is None else int(mib * MIB), name=f"p{pid}",
                      **kw)  # type: ignore[arg-type]


def tick(h: History, t: float, *processes: GpuProcess, used_mib: float = 4096,
         gpus: tuple[int, ...] = (0,)) -> None:
    samples = tuple(GpuSample(index=g, timestamp_s=t, mem_used_bytes=int(used_mib * MIB))
                    for g in gpus)
    h.append(Snapshot(t, TEST_MACHINE, STATUS_OK, samples=samples, processes=processes))


def test_series_are_aligned_with_the_gpus_times_and_nan_where_not_listed() -> None:
    h = History(capacity=10)
    tick(h, 1.0, proc(7, 100, cpu_pct=50.0, host_rss_bytes=3 * MIB, sm_util_pct=12.0))
    tick(h, 2.0)
    tick(h, 3.0, proc(7, 300))
    t, mem = h.process_series(0, 7, "gpu_mem_bytes")
    assert list(t) == [1.0, 2.0, 3.0]
    assert mem[0] == 100 * MIB and math.isnan(mem[1]) and mem[2] == 300 * MIB
    assert h.process_series(0, 7, "cpu_pct")[1][0] == 50.0
    assert h.process_series(0, 7, "host_rss_bytes")[1][0] == 3 * MIB
    assert h.process_series(0, 7, "sm_util_pct")[1][0] == 12.0
    assert list(h.process_series(0, 7, "gpu_mem_bytes", since=2.0)[0]) == [2.0, 3.0]
    assert [e.pid for e in h.processes(0)] == [7]
    assert h.keys(0) == list(h.keys(0))  # the GPU's own keys: no per-process key among them
    assert not any(k.startswith("p") and k[1:].isdigit() for k in h.keys(0))
    assert h.process_series(0, 8, "gpu_mem_bytes")[0].size == 0  # never seen
    assert h.process_series(1, 7, "gpu_mem_bytes")[0].size == 0  # unknown GPU
    with pytest.raises(KeyError):
        h.process_series(0, 7, "temperature_c")


def test_capacity_bounds_each_series_and_memory_stops_growing() -> None:
    h = History(capacity=20)
    for i in range(5):
        tick(h, float(i), *(proc(p, 10 * p) for p in range(1, 9)))
    grown = h.nbytes
    for i in range(5, 500):
        tick(h, float(i), *(proc(p, 10 * p) for p in range(1, 9)))
    assert h.nbytes == grown
    t, mem = h.process_series(0, 3, "gpu_mem_bytes")
    assert len(t) == 20 and t[-1] == 499.0 and (mem == 30 * MIB).all()


def test_a_process_that_ends_drops_out_as_the_window_passes() -> None:
    h = History(capacity=10)
    tick(h, 0.0, proc(5, 100))
    for i in range(1, 10):
        tick(h, float(i))
    assert [e.pid for e in h.processes(0)] == [5]  # its point is still in the ring
    tick(h, 10.0)
    assert h.processes(0) == []  # overwritten: gone
    assert h.process_series(0, 5, "gpu_mem_bytes")[0].size == 0


def test_a_fork_bomb_is_capped_and_its_memory_stays_counted() -> None:
    h = History(capacity=50)
    listed_total = []
    for i in range(200):  # 3 new short-lived processes every tick, 600 in all
        procs = [proc(10_000 + 3 * i + j, 1 + j) for j in range(3)]
        tick(h, float(i), *procs)
        listed_total.append(sum(p.gpu_mem_bytes or 0 for p in procs))
        assert len(h.processes(0)) <= MAX_PROCESSES
    plain = History(capacity=50)
    tick(plain, 0.0)  # the same GPU without processes
    # float32: MAX_PROCESSES rows of each field and one "others" column, and no more
    assert h.nbytes - plain.nbytes == (len(FIELDS) * MAX_PROCESSES + 1) * 50 * 4
    mem = h.process_memory(0)
    kept = np.nansum([v for _, v in mem.processes], axis=0) + np.nan_to_num(mem.others)
    assert list(kept) == listed_total[-50:]  # every byte is in a process or in "others"


def test_more_live_processes_than_the_cap_put_the_rest_in_others() -> None:
    h = History(capacity=10)
    procs = [proc(p, 100) for p in range(1, MAX_PROCESSES + 4)]
    tick(h, 0.0, *procs)
    mem = h.process_memory(0)
    assert len(mem.processes) == MAX_PROCESSES
    assert mem.others[-1] == 3 * 100 * MIB


def test_a_process_that_vanishes_between_reads_never_breaks_a_tick() -> None:
    h = History(capacity=10)
    tick(h, 0.0, proc(9, 200, started_s=100.0, cpu_pct=3.0))
    tick(h, 1.0)  # gone from the list
    # listed by NVML but gone before psutil read it: every host field None, no start time
    tick(h, 2.0, GpuProcess(0, 9, ProcessType.COMPUTE, None))
    tick(h, 3.0, proc(9, 250, started_s=100.0))
    tick(h, 4.0, proc(9, 250, gpu=3))  # on a GPU this snapshot has no sample for
    t, mem = h.process_series(0, 9, "gpu_mem_bytes", started_s=100.0)
    assert list(t) == [0.0, 1.0, 2.0, 3.0, 4.0]
    assert [None if math.isnan(v) else v / MIB for v in mem] == [200, None, None, 250, None]
    assert len(h.processes(0)) == 1 and h.gpu_indices() == [0]


def test_a_reused_pid_is_another_program() -> None:
    h = History(capacity=10)
    tick(h, 0.0, proc(9, 200, started_s=100.0))
    tick(h, 1.0, proc(9, 500, started_s=150.0))
    assert sorted(e.started_s or 0 for e in h.processes(0)) == [100.0, 150.0]
    old = h.process_series(0, 9, "gpu_mem_bytes", started_s=100.0)[1]
    new = h.process_series(0, 9, "gpu_mem_bytes")[1]  # the newest program with that PID
    assert old[0] == 200 * MIB and math.isnan(old[1])
    assert math.isnan(new[0]) and new[1] == 500 * MIB


def test_a_pid_listed_twice_on_a_gpu_counts_once() -> None:
    h = History(capacity=10)
    tick(h, 0.0, proc(4, 300), dataclasses.replace(proc(4, 300), type=ProcessType.GRAPHICS))
    assert h.process_series(0, 4, "gpu_mem_bytes")[1][0] == 300 * MIB


def test_resize_keeps_process_points_with_their_times() -> None:
    h = History(capacity=10)
    for i in range(10):
        tick(h, float(i), proc(1, i))
    h.resize(4)
    t, mem = h.process_series(0, 1, "gpu_mem_bytes")
    assert list(t) == [6.0, 7.0, 8.0, 9.0] and list(mem / MIB) == [6, 7, 8, 9]
    tick(h, 10.0, proc(1, 10))
    assert list(h.process_series(0, 1, "gpu_mem_bytes")[1] / MIB) == [7, 8, 9, 10]
    for i in range(11, 15):
        tick(h, float(i))
    assert h.processes(0) == []  # gone a whole (new) ring
    h.resize(8)
    tick(h, 20.0, proc(2, 1))
    h.clear()
    assert h.processes(0) == [] and h.nbytes == 0


def test_process_memory_gives_used_and_each_process_at_the_same_times() -> None:
    h = History(capacity=10)
    tick(h, 0.0, proc(1, 100), proc(2, 50), used_mib=400)
    tick(h, 1.0, proc(1, 100), used_mib=300, gpus=(0, 1))
    mem = h.process_memory(0, since=1.0)
    assert list(mem.times) == [1.0] and list(mem.used) == [300 * MIB]
    by_pid = {e.pid: list(v) for e, v in mem.processes}
    assert by_pid[1] == [100 * MIB] and math.isnan(by_pid[2][0])
    empty = h.process_memory(1)  # a GPU without processes
    assert empty.processes == () and len(empty.others) == len(empty.times) == 1


def test_a_slot_reused_by_the_ring_forgets_the_process_that_was_there() -> None:
    h = History(capacity=3)
    for i in range(3):
        tick(h, float(i), proc(1, 100))
    tick(h, 3.0)  # overwrites the slot of t=0; the process, last seen at t=2, is still kept
    t, mem = h.process_series(0, 1, "gpu_mem_bytes")
    assert list(t) == [1.0, 2.0, 3.0] and math.isnan(mem[-1])
