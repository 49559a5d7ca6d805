"""Resident memory over a fast-forwarded run: does gpumon's telemetry grow with run time?

8 simulated GPUs, Sampler + History (capacity for a 1-hour window), a fake clock advanced by
the interval each tick: 24 hours at 1 s = 86 400 ticks, in as long as the CPU takes.
RSS (psutil) is read after a warm-up of 1000 ticks (baseline), at tenths of the run and at
the end. Target: growth from the baseline to the end <= 5 MB.

Run from the repository root: ``python benchmarks/bench_memory.py [--quick] [--trace]``.
``--quick``: 3 hours (10 800 ticks; the 1-hour ring still wraps around three times).
``--trace``: also print tracemalloc's top allocation growth (slower; for finding a leak).
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
import tracemalloc
from pathlib import Path

import psutil

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from machine import describe  # noqa: E402 (benchmarks/machine.py, beside this script)

from gpumon.telemetry.history.store import History, capacity_for  # noqa: E402
from gpumon.telemetry.sources.sampler import Sampler  # noqa: E402
from gpumon.telemetry.sources.simulated import SimulatedSource  # noqa: E402

TARGET_MB = 5.0
WARMUP_TICKS = 1000
N_GPUS = 8
MB = 1024**2


class FakeClock:
    def __init__(self) -> None:
        self.t = 1_700_000_000.0

    def __call__(self) -> float:
        return self.t


def rss_mb() -> float:
    gc.collect()
    return psutil.Process().memory_info().rss / MB


def run(hours: float, interval_s: float, trace: bool) -> bool:
    clock = FakeClock()
    sampler = Sampler(SimulatedSource(N_GPUS, clock=clock), clock=clock, wall_clock=clock)
    history = History(capacity_for(3600, interval_s))
    ticks = round(hours * 3600 / interval_s)
    print(f"{N_GPUS} simulated GPUs, interval {interval_s:g} s, {hours:g} h = {ticks} ticks, "
          f"history capacity {history.capacity} points per series")

    def tick() -> None:
        clock.t += interval_s
        history.append(sampler.tick())

    for _ in range(WARMUP_TICKS):
        tick()
    if trace:
        tracemalloc.start(10)
    start = rss_mb()
    before = tracemalloc.take_snapshot() if trace else None
    print(f"{'tick':>8} {'sim time':>9} {'RSS MB':>8} {'growth MB':>10} {'history MB':>11}")
    print(f"{0:>8} {0.0:>8.1f}h {start:>8.1f} {0.0:>10.2f} {history.nbytes / MB:>11.2f}")
    t0 = time.perf_counter()
    peak = start
    step = max(1, ticks // 10)
    for i in range(1, ticks + 1):
        tick()
        if i % step == 0 or i == ticks:
            now = rss_mb()
            peak = max(peak, now)
            print(f"{i:>8} {i * interval_s / 3600:>8.1f}h {now:>8.1f} {now - start:>10.2f} "
                  f"{history.nbytes / MB:>11.2f}")
    elapsed = time.perf_counter() - t0
    end = rss_mb()
    growth = end - start
    print(f"\nran {ticks} ticks in {elapsed:.1f} s ({elapsed / ticks * 1e6:.0f} us per tick, "
          f"sampling + history)")
    print(f"RSS start {start:.1f} MB, end {end:.1f} MB, peak {peak:.1f} MB, "
          f"growth {growth:+.2f} MB")
    if before is not None:
        after = tracemalloc.take_snapshot()
        print("\ntracemalloc, top growth since the baseline:")
        for stat in after.compare_to(before, "lineno")[:10]:
            print(f"  {stat}")
        tracemalloc.stop()
    met = growth <= TARGET_MB
    print(f"target: growth <= {TARGET_MB:g} MB -> {'MET' if met else 'MISSED'}\n")
    return met


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="3 simulated hours instead of 24")
    parser.add_argument("--interval", type=float, default=1.0, help="seconds per tick")
    parser.add_argument("--hours", type=float, help="simulated hours (overrides --quick)")
    parser.add_argument("--trace", action="store_true", help="tracemalloc top growth")
    args = parser.parse_args()
    hours = args.hours if args.hours is not None else (3.0 if args.quick else 24.0)
    print(f"bench_memory: {describe()}")
    return 0 if run(hours, args.interval, args.trace) else 1


if __name__ == "__main__":
    sys.exit(main())
