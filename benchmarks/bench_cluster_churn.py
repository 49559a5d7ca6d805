"""The cluster source's memory while one scrape target reports fresh GPU UUIDs every tick.

A Prometheus whose target relabels its GPUs on every scrape (a relabelling gone wrong, MIG
reconfigured in a loop) took the window from 238 MB to 3.25 GB in 240 s while the fleet kept
every UUID it had seen (issue 53). Here a ``PrometheusSource`` reads a scripted server (the
tests' ``scripted_prometheus``): one target with 8 GPUs whose UUIDs change at every tick,
beside 50 steady machines of 8 GPUs, at a tick every ``--interval`` seconds for ``--seconds``
(10 minutes; ``--quick``: 60 s), the source's clock running 5 s a tick, as Prometheus's does.

Baseline, same run: the same fleet with steady UUIDs for as long. Prints the process's RSS
and the fleet's tables at the start, every minute and at the end, for both. Target: the RSS
grows no more under churn than the baseline does, plus 20 MB, and the tables stay at the cap.

Run from the repository root: ``python benchmarks/bench_cluster_churn.py [--quick]``.
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from pathlib import Path

import psutil

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests" / "telemetry"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from machine import describe  # noqa: E402
from scripted_prometheus import scripted  # noqa: E402

from gpumon.telemetry.cluster.fleet import MAX_GPUS_PER_TARGET  # noqa: E402
from gpumon.telemetry.cluster.prometheus import PrometheusSource  # noqa: E402

SLACK_MB = 20.0
STEADY_MACHINES = 50


def fleet(tick: int, churn: bool) -> dict[str, list[tuple[dict[str, str], float]]]:
    gpus = [{"Hostname": f"m{m}", "gpu": str(i), "UUID": f"GPU-{m}-{i}", "job": "dcgm",
             "instance": f"10.0.{m // 250}.{m % 250}:9400", "modelName": "NVIDIA H200"}
            for m in range(STEADY_MACHINES) for i in range(8)]
    gpus += [{"Hostname": "churn", "gpu": str(i), "job": "dcgm", "instance": "10.9.9.9:9400",
              "UUID": f"GPU-{tick if churn else 0}-{i}", "modelName": f"H200 {tick}"}
             for i in range(8)]
    up = [({"job": "dcgm", "instance": g["instance"]}, 1.0) for g in gpus if g["gpu"] == "0"]
    return {"DCGM_FI_DEV_GPU_UTIL": [(g, 50.0) for g in gpus],
            "DCGM_FI_DEV_FB_USED": [(g, 1024.0) for g in gpus],
            "DCGM_FI_DEV_FB_FREE": [(g, 1024.0) for g in gpus], "up": up}


def run(churn: bool, seconds: float, interval: float) -> tuple[float, float, int]:
    """RSS (MB) at the start and the end, and the fleet's largest table, of one run."""
    me = psutil.Process()
    series = fleet(0, churn)
    now = [1e9]
    with scripted(series) as server:
        source = PrometheusSource(server.url, clock=lambda: now[0])
        source.sample()
        gc.collect()
        start_mb = me.memory_info().rss / 1e6
        began = time.monotonic()
        tick, largest, next_line = 0, 0, 60.0
        while (elapsed := time.monotonic() - began) < seconds:
            tick += 1
            series.update(fleet(tick, churn))
            now[0] += 5.0
            source.sample()
            f = source._fleet
            largest = max(largest, len(f), len(f._infos), len(f._seen))
            if elapsed >= next_line:
                print(f"  {'churn' if churn else 'steady'} {elapsed:5.0f} s: tick {tick}, "
                      f"RSS {me.memory_info().rss / 1e6:.0f} MB, fleet {len(f)} GPUs")
                next_line += 60.0
            time.sleep(interval)
        source.close()
    gc.collect()
    return start_mb, me.memory_info().rss / 1e6, largest


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--seconds", type=float, default=600.0)
    parser.add_argument("--interval", type=float, default=0.1)
    args = parser.parse_args()
    seconds = 60.0 if args.quick else args.seconds
    print(describe())
    print(f"{STEADY_MACHINES} machines of 8 GPUs and one whose 8 UUIDs change every tick; "
          f"{seconds:.0f} s each run, a tick every {args.interval} s + its read")
    b0, b1, _ = run(False, seconds, args.interval)
    c0, c1, largest = run(True, seconds, args.interval)
    steady_growth, churn_growth = b1 - b0, c1 - c0
    cap = STEADY_MACHINES * 8 + MAX_GPUS_PER_TARGET
    print(f"baseline (steady UUIDs): RSS {b0:.0f} -> {b1:.0f} MB ({steady_growth:+.1f} MB)")
    print(f"churning UUIDs:          RSS {c0:.0f} -> {c1:.0f} MB ({churn_growth:+.1f} MB); "
          f"largest fleet table {largest} GPUs (cap {cap})")
    met = churn_growth <= steady_growth + SLACK_MB and largest <= cap
    print(f"target: growth under churn <= baseline + {SLACK_MB:.0f} MB and tables <= the cap: "
          + ("met" if met else "NOT met"))
    return 0 if met else 1


if __name__ == "__main__":
    raise SystemExit(main())
