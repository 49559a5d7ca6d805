"""512 GPUs from Prometheus: one PrometheusSource tick, one drawn overview frame, and RSS.

A recorded Prometheus (``recorded_prometheus.py``, in its own process so that this process's
RSS is gpumon's alone) answers for 64 machines x 8 simulated GPUs, with the series that
``gpumon exporter --simulate 8`` exports. Measured here, in this process, like the app:
(a) ``PrometheusSource.sample()``: every instant query over loopback HTTP and the snapshot
    (the app runs it in the sampling thread);
(b) one frame on the GUI thread: ``ClusterWindow._on_snapshot`` (overview + the machine in
    focus's panels, tables, History) and the paint it causes (``processEvents()``), with the
    Overview page shown, window 1400x900, offscreen unless QT_QPA_PLATFORM says otherwise;
(c) RSS after all ticks, against the RSS of the same process with Qt and a QApplication loaded
    and no window (baseline, same run).
Baseline for (a): the same HTTP requests with ``urllib`` and ``json.loads`` and nothing more.
Targets: (b) median <= 8 ms; (c) <= 300 MB.

Run from the repository root: ``python benchmarks/bench_cluster.py [--quick]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import psutil  # noqa: E402
from machine import describe  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from gpumon.telemetry.prometheus import (  # noqa: E402
    FIELDS,
    NVML_UP,
    PROCESS_MEMORY,
    PrometheusSource,  # noqa: E402
)
from gpumon.ui.window.cluster_window import ClusterWindow  # noqa: E402

FRAME_TARGET_MS = 8.0
RSS_TARGET_MB = 300.0


def rss_mb() -> float:
    return psutil.Process().memory_info().rss / 1e6


def raw_tick(url: str) -> None:
    """The requests of one tick, fetched and decoded, nothing built from them."""
    import json

    queries = [*FIELDS, "up", NVML_UP, PROCESS_MEMORY + '{Hostname="node-00"}']
    for q in queries:
        with urllib.request.urlopen(f"{url}/api/v1/query?"
                                    + urllib.parse.urlencode({"query": q})) as r:
            json.loads(r.read())


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    ticks = 30 if args.quick else 120
    print(describe())
    server = subprocess.Popen([sys.executable, str(Path(__file__).with_name(
        "recorded_prometheus.py")), "--hosts", "64", "--gpus", "8"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)})
    try:
        assert server.stdout is not None
        url = server.stdout.readline().strip()
        app = QApplication.instance() or QApplication([])
        base_rss = rss_mb()
        source = PrometheusSource(url, backfill_s=3600)
        window = ClusterWindow(source, 1.0)
        window.resize(1400, 900)
        window.show()
        app.processEvents()
        tick_ms, raw_ms, frame_ms = [], [], []
        for i in range(ticks + 3):
            t0 = time.perf_counter()
            snap = source.sample()
            t1 = time.perf_counter()
            window._on_snapshot(snap)  # what the sampling thread's signal runs
            app.processEvents()
            t2 = time.perf_counter()
            raw_tick(url)
            t3 = time.perf_counter()
            if i >= 3:  # the first ticks build the panels and fill the history
                tick_ms.append((t1 - t0) * 1e3)
                frame_ms.append((t2 - t1) * 1e3)
                raw_ms.append((t3 - t2) * 1e3)
            time.sleep(0.05)
        assert snap.status.usable and sum(len(h.gpus) for h in snap.hosts) == 512, snap.status
        end_rss = rss_mb()
        window.close()
    finally:
        if server.stdin is not None:
            server.stdin.close()
        server.wait(10)

    def med(xs: list[float]) -> float:
        return statistics.median(xs)

    p95 = statistics.quantiles(frame_ms, n=20)[18]
    frame_ok, rss_ok = med(frame_ms) <= FRAME_TARGET_MS, end_rss <= RSS_TARGET_MB
    print(f"512 GPUs (64 machines x 8), {ticks} ticks")
    print(f"(a) PrometheusSource tick: median {med(tick_ms):.1f} ms "
          f"(raw HTTP + json of the same queries {med(raw_ms):.1f} ms, "
          f"{med(tick_ms) / med(raw_ms):.2f}x)")
    print(f"(b) drawn frame (overview shown): median {med(frame_ms):.2f} ms, p95 {p95:.2f} ms, "
          f"max {max(frame_ms):.2f} ms; target <= {FRAME_TARGET_MS:g} ms: "
          f"{'met' if frame_ok else 'NOT met'}")
    print(f"(c) RSS {end_rss:.0f} MB (Qt + QApplication alone {base_rss:.0f} MB, "
          f"+{end_rss - base_rss:.0f} MB); target <= {RSS_TARGET_MB:g} MB: "
          f"{'met' if rss_ok else 'NOT met'}")
    return 0 if frame_ok and rss_ok else 1


if __name__ == "__main__":
    sys.exit(main())
