"""Cost of one scrape of ``gpumon exporter`` against the raw NVML calls it stands on.

A scrape is what the exporter's HTTP handler does for GET /metrics, without the socket:
``generate_latest(registry)`` over the GpuCollector, the NvmlSource read (real nvidia-ml-py
binding on the fake NVML library from tests/telemetry/fakenvml) plus building the metric
families and their text. The collector's clock advances 1 s per scrape with a 1 s interval,
so every scrape reads NVML once and the slow fields every 5th, as the raw baseline does.
Baseline, same run: the pynvml calls NvmlSource makes per tick, called directly
(``bench_sampling.raw_step``). One process per GPU. Also printed, without a target: a whole
scrape over loopback HTTP (``urllib``), what Prometheus pays, and the scrape's parts: the NVML
read, building the metric families, and prometheus_client's text exposition (the rest).
Target: scrape <= 3x raw.

Run from the repository root: ``python benchmarks/bench_exporter.py [--quick]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests" / "telemetry"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import pynvml  # noqa: E402
from bench_sampling import FakeClock, raw_step, stats, timed  # noqa: E402
from fakenvml import build_fake_nvml, use_fake_nvml  # noqa: E402
from machine import describe  # noqa: E402
from prometheus_client import CollectorRegistry, generate_latest, start_http_server  # noqa: E402

from gpumon.telemetry.exporter import GpuCollector  # noqa: E402
from gpumon.telemetry.nvml import NvmlSource  # noqa: E402

TARGET = 3.0


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    reps, rounds = (200, 3) if args.quick else (500, 5)
    print(describe())
    met = True
    with tempfile.TemporaryDirectory() as tmp, use_fake_nvml(build_fake_nvml(Path(tmp))) as fake:
        for n in (1, 8, 16):
            fake.reset()
            fake.set_gpu_count(n)
            for g in range(n):
                fake.add_process(g, os.getpid(), 2 << 30)
            clock = FakeClock()
            collector = GpuCollector(NvmlSource, interval_s=1.0, host="bench", clock=clock)
            registry = CollectorRegistry()
            registry.register(collector)

            def scrape(_i: int, clock: FakeClock = clock,
                       registry: CollectorRegistry = registry) -> object:
                clock.t += 1.0
                return generate_latest(registry)

            def read(_i: int, clock: FakeClock = clock,
                     collector: GpuCollector = collector) -> object:
                clock.t += 1.0
                return collector.read()

            def families(_i: int, collector: GpuCollector = collector) -> object:
                return list(collector.collect())  # the cached reading: families only

            size = len(scrape(0))
            pynvml.nvmlInit()
            try:
                handles = [pynvml.nvmlDeviceGetHandleByIndex(g) for g in range(n)]
                steps = {"scrape": scrape, "raw": raw_step(handles), "read": read,
                         "families": families}
                results: dict[str, list[float]] = {k: [] for k in steps}
                for step in steps.values():
                    timed(step, reps // 10, [])
                for _ in range(rounds):
                    for name, step in steps.items():
                        timed(step, reps, results[name])
                server, thread = start_http_server(0, "127.0.0.1", registry)
                url = f"http://127.0.0.1:{server.server_address[1]}/metrics"
                http: list[float] = []
                timed(lambda _i, url=url: urllib.request.urlopen(url).read(), reps // 5, http)
                server.shutdown()
                server.server_close()
                thread.join()
            finally:
                pynvml.nvmlShutdown()
                collector.close()
            scrape_med, scrape_p95 = stats(results["scrape"])
            raw_med, _ = stats(results["raw"])
            ratio = scrape_med / raw_med
            met &= ratio <= TARGET
            print(f"{n:2d} GPUs: scrape {scrape_med:7.1f} µs (p95 {scrape_p95:.1f}), "
                  f"raw NVML {raw_med:6.1f} µs, ratio {ratio:.2f}x (target <= {TARGET:g}x: "
                  f"{'met' if ratio <= TARGET else 'NOT met'}); /metrics {size} bytes; "
                  f"over loopback HTTP {stats(http)[0] / 1000:.2f} ms")
            read_med, fam_med = stats(results["read"])[0], stats(results["families"])[0]
            print(f"         of which: NVML read (Sampler.tick) {read_med:.1f} µs "
                  f"({read_med / raw_med:.2f}x raw), metric families {fam_med:.1f} µs, "
                  f"prometheus_client's text exposition "
                  f"{max(0.0, scrape_med - read_med - fam_med):.1f} µs")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
