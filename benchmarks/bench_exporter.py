"""Cost of one scrape of ``gpumon exporter`` against the raw NVML calls it stands on.

A scrape is what the exporter's HTTP handler does for GET /metrics, without the socket: the
exporter's WSGI app called with Prometheus's Accept header (no gzip): the NvmlSource read
(real nvidia-ml-py binding on the fake NVML library from tests/telemetry/fakenvml) and the
text rendered from it (``exposition.Exposition``, byte for byte what prometheus_client's
``generate_latest`` writes for the same reading, checked here once per GPU count). The
collector's clock advances 1 s per scrape with a 1 s interval, so every scrape reads NVML
and renders once, and reads the slow fields every 5th, as the raw baseline does.
Baseline, same run: the pynvml calls NvmlSource makes per tick, called directly
(``bench_sampling.raw_step``). One process per GPU. Also printed, without a target: a whole
scrape over loopback HTTP (``urllib``); the scrape's parts (NVML read, rendering); a second
scrape within the interval (cached bytes); a scrape with gzip, as Prometheus asks for it; and
prometheus_client's ``generate_latest`` over the collector, which still answers clients that
accept only OpenMetrics or filter with ``name[]``. Target: scrape <= 3x raw.

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
from prometheus_client import CollectorRegistry, generate_latest  # noqa: E402

from gpumon.telemetry.exporter import GpuCollector  # noqa: E402
from gpumon.telemetry.exporter_http import App, make_app, serve  # noqa: E402
from gpumon.telemetry.exposition import Exposition  # noqa: E402
from gpumon.telemetry.nvml import NvmlSource  # noqa: E402

TARGET = 3.0
# GET /metrics as Prometheus 2.x sends it, without Accept-Encoding (the gzip case is printed too).
PROMETHEUS_GET = {
    "REQUEST_METHOD": "GET", "PATH_INFO": "/metrics", "QUERY_STRING": "",
    "HTTP_ACCEPT": "application/openmetrics-text;version=1.0.0,application/openmetrics-text;"
                   "version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1",
}


def _start_response(status: str, headers: list[tuple[str, str]]) -> None:
    """WSGI's start_response; the benchmark keeps only the body."""


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

            exposition = Exposition(collector)
            app = make_app(exposition, registry)

            def scrape(_i: int, clock: FakeClock = clock, app: App = app,
                       environ: dict[str, str] = PROMETHEUS_GET) -> object:
                clock.t += 1.0
                return b"".join(app(dict(environ), _start_response))

            def cached(_i: int, app: App = app) -> object:
                return b"".join(app(dict(PROMETHEUS_GET), _start_response))  # same interval

            def gzipped(_i: int, clock: FakeClock = clock, app: App = app) -> object:
                clock.t += 1.0
                return b"".join(app(dict(PROMETHEUS_GET, HTTP_ACCEPT_ENCODING="gzip"),
                                    _start_response))

            def official(_i: int, clock: FakeClock = clock,
                         registry: CollectorRegistry = registry) -> object:
                clock.t += 1.0
                return generate_latest(registry)

            def read(_i: int, clock: FakeClock = clock,
                     collector: GpuCollector = collector) -> object:
                clock.t += 1.0
                return collector.read()

            body = scrape(0)
            assert isinstance(body, bytes) and body == generate_latest(registry)  # same reading
            size = len(body)
            pynvml.nvmlInit()
            try:
                handles = [pynvml.nvmlDeviceGetHandleByIndex(g) for g in range(n)]
                steps = {"scrape": scrape, "raw": raw_step(handles), "read": read,
                         "cached": cached, "gzip": gzipped, "official": official}
                results: dict[str, list[float]] = {k: [] for k in steps}
                for step in steps.values():
                    timed(step, reps // 10, [])
                for _ in range(rounds):
                    for name, step in steps.items():
                        timed(step, reps, results[name])
                server, thread = serve("127.0.0.1", 0, app)
                url = f"http://127.0.0.1:{server.server_address[1]}/metrics"
                http: list[float] = []
                timed(lambda _i, url=url: urllib.request.urlopen(url).read(), reps // 5, http)
                server.shutdown()
                server.server_close()
                thread.join()
            finally:
                pynvml.nvmlShutdown()
                collector.close()
            med = {name: stats(times)[0] for name, times in results.items()}
            scrape_p95 = stats(results["scrape"])[1]
            raw_med = med["raw"]
            ratio = med["scrape"] / raw_med
            met &= ratio <= TARGET
            print(f"{n:2d} GPUs: scrape {med['scrape']:7.1f} µs (p95 {scrape_p95:.1f}), "
                  f"raw NVML {raw_med:6.1f} µs, ratio {ratio:.2f}x (target <= {TARGET:g}x: "
                  f"{'met' if ratio <= TARGET else 'NOT met'}); /metrics {size} bytes; "
                  f"over loopback HTTP {stats(http)[0] / 1000:.2f} ms")
            print(f"         of which: NVML read (Sampler.tick) {med['read']:.1f} µs "
                  f"({med['read'] / raw_med:.2f}x raw), rendering the text "
                  f"{max(0.0, med['scrape'] - med['read']):.1f} µs")
            print(f"         also: a second scrape in the same interval {med['cached']:.1f} µs; "
                  f"with gzip (as Prometheus asks) {med['gzip']:.1f} µs "
                  f"({med['gzip'] / raw_med:.2f}x raw); prometheus_client's generate_latest "
                  f"(OpenMetrics-only clients, name[] filters) {med['official']:.1f} µs "
                  f"({med['official'] / raw_med:.2f}x raw)")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
