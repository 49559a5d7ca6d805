"""The History's per-process series: memory and time per tick, with and without them.

8 GPUs, each with 10 processes listed at every tick, 1 hour at 1 s (3600 ticks, the ring
full): the History's ``nbytes`` with the processes listed, and without (the same GPU
samples, no process): the per-process series are float32 rows beside each GPU's ring, at
most 16 processes a GPU (``process_history.MAX_PROCESSES``). Then the same with a new
process on each GPU every tick (a storm of short jobs): the rows stop growing at the cap.
And the Python time of ``History.append`` per tick, with and without the processes
(median of the last 1000 ticks). Target: the per-process series hold at most 10 MB for
8 GPUs x 10 processes x 1 h at 1 s, and the storm no more than the cap's worth.

Run from the repository root: ``python benchmarks/bench_history_processes.py [--quick]``
(``--quick``: 20 minutes of ticks instead of an hour).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from gpumon.telemetry.history.process_history import FIELDS  # noqa: E402
from gpumon.telemetry.history.store import MAX_PROCESSES, History, capacity_for  # noqa: E402
from gpumon.telemetry.model.types import (  # noqa: E402
    GpuProcess,
    GpuSample,
    MachineInfo,
    ProcessType,
    Snapshot,
    SourceState,
    SourceStatus,
)

N_GPUS, N_PROCS = 8, 10
TARGET_MB = 10.0
MB = 1e6
MACHINE = MachineInfo(host_name="bench", source_name="bench")
OK = SourceStatus(SourceState.OK, "ok")


def snapshot(t: float, pids: list[list[int]]) -> Snapshot:
    samples = tuple(GpuSample(g, t, mem_used_bytes=40 << 30, mem_total_bytes=80 << 30,
                              gpu_util_pct=50.0) for g in range(N_GPUS))
    procs = tuple(GpuProcess(g, pid, ProcessType.COMPUTE, 2 << 30, name="python",
                             sm_util_pct=5.0, cpu_pct=100.0, host_rss_bytes=3 << 30,
                             started_s=1000.0 + pid)
                  for g, group in enumerate(pids) for pid in group)
    return Snapshot(t, MACHINE, OK, samples=samples, processes=procs)


def run(ticks: int, pids_at: object) -> tuple[History, float]:
    """A History for a 1-hour window at 1 s fed ``ticks`` snapshots; the median append time
    of the last 1000, in microseconds."""
    h = History(capacity_for(3600, 1.0))
    times = []
    for i in range(ticks):
        snap = snapshot(float(i), pids_at(i))  # type: ignore[operator]
        t0 = time.perf_counter()
        h.append(snap)
        times.append(time.perf_counter() - t0)
    return h, 1e6 * statistics.median(times[-1000:])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="20 minutes of ticks, not 1 h")
    ticks = 1200 if parser.parse_args().quick else 3600
    steady = [[g * 100 + j for j in range(N_PROCS)] for g in range(N_GPUS)]
    plain, plain_us = run(ticks, lambda i: [[] for _ in range(N_GPUS)])
    listed, listed_us = run(ticks, lambda i: steady)
    storm, storm_us = run(ticks, lambda i: [[g * 1_000_000 + i] for g in range(N_GPUS)])
    extra = (listed.nbytes - plain.nbytes) / MB
    cap = (len(FIELDS) * MAX_PROCESSES + 1) * listed.capacity * 4 * N_GPUS / MB
    print(f"{N_GPUS} GPUs, capacity {listed.capacity} points (1 h at 1 s), {ticks} ticks")
    print(f"History without processes: {plain.nbytes / MB:7.2f} MB, append {plain_us:6.1f} µs")
    print(f"with {N_PROCS} processes a GPU: {listed.nbytes / MB:7.2f} MB "
          f"({extra:+.2f} MB, {listed.nbytes / plain.nbytes:.2f}x), append {listed_us:6.1f} µs "
          f"({listed_us / plain_us:.2f}x)")
    print(f"a new process a GPU every tick: {storm.nbytes / MB:7.2f} MB "
          f"({(storm.nbytes - plain.nbytes) / MB:+.2f} MB; the cap of {MAX_PROCESSES} a GPU "
          f"is {cap:.2f} MB), append {storm_us:6.1f} µs, "
          f"{max(len(storm.processes(g)) for g in range(N_GPUS))} processes kept a GPU")
    met = extra <= TARGET_MB and (storm.nbytes - plain.nbytes) / MB <= cap + 1e-9
    print(f"target: per-process series <= {TARGET_MB:g} MB, the storm within the cap: "
          f"{'met' if met else 'NOT met'}")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
