"""The cluster view's sampling on 10,000 GPUs (1,250 machines x 8) at a 1 s interval: how
often it reads and how much of a core the reading takes, with the cadence that reads less
often when a reading is slow (``telemetry/model/cadence.py``), against the same sampling
held to the interval (the baseline, same run: ``READ_SHARE`` set so high that the period
never stretches, which is how gpumon read before).

A stand-in Prometheus server in another process answers the tick's query with the same
pre-built JSON every time (so its own CPU is not counted); PrometheusSource parses it, builds
every machine and GPU, as in the window. Only the sampling thread runs (no window): what the
window's reading costs, not its drawing. Target: a reading takes at most half the time
between readings (``READ_SHARE``), and the status says so.

Run from the repository root: ``python benchmarks/bench_cluster_cadence.py [--quick]``.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from machine import describe  # noqa: E402

MACHINES, PER_MACHINE = 1250, 8
METRICS = ("DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_FB_FREE",
           "DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_SM_CLOCK")

SERVER = """
import json, sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
body = open(sys.argv[1], "rb").read()
empty = json.dumps({"status": "success", "data": {"resultType": "vector", "result": []}}).encode()
matrix = json.dumps({"status": "success", "data": {"resultType": "matrix", "result": []}}).encode()
class H(BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def do_GET(self):
        data = matrix if "query_range" in self.path else body if "__name__" in self.path else empty
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
s = ThreadingHTTPServer(("127.0.0.1", 0), H)
print(s.server_address[1], flush=True)
s.serve_forever()
"""


def answer() -> bytes:
    result = []
    for m in range(MACHINES):
        instance = f"10.{m // 250}.{m % 250}.1:9400"
        result.append({"metric": {"__name__": "up", "job": "dcgm", "instance": instance},
                       "value": [1.0, "1"]})
        for g in range(PER_MACHINE):
            labels = {"job": "dcgm", "instance": instance, "Hostname": f"node{m:04d}",
                      "gpu": str(g), "UUID": f"GPU-{m:08x}-{g:04x}-0000-0000-000000000000",
                      "modelName": "NVIDIA H200"}
            result += [{"metric": {"__name__": name, **labels}, "value": [1.0, "42"]}
                       for name in METRICS]
    return json.dumps({"status": "success",
                       "data": {"resultType": "vector", "result": result}}).encode()


def measure(url: str, seconds: float, stretch: bool) -> tuple[int, float, float, str]:
    """(readings, CPU share of one core, mean reading s, last status text) of the sampling
    thread for ``seconds``."""
    from PySide6.QtCore import QCoreApplication

    from gpumon.telemetry.cluster.prometheus import PrometheusSource
    from gpumon.telemetry.model import cadence
    from gpumon.telemetry.model.readouts import status_summary
    from gpumon.ui.window.workers import SamplingThread

    cadence.READ_SHARE = 0.5 if stretch else 1e12
    app = QCoreApplication.instance() or QCoreApplication([])
    snaps: list = []
    thread = SamplingThread(lambda: PrometheusSource(url, timeout_s=30), 1.0)
    thread.snapshot.connect(snaps.append)
    thread.start()
    while not snaps:  # the first reading (and the first machines' history) before counting
        app.processEvents()
        time.sleep(0.01)
    first = len(snaps)
    cpu0 = sum(resource.getrusage(resource.RUSAGE_SELF)[:2])
    t0 = time.monotonic()
    while time.monotonic() - t0 < seconds:
        app.processEvents()
        time.sleep(0.01)
    cpu = sum(resource.getrusage(resource.RUSAGE_SELF)[:2]) - cpu0
    wall = time.monotonic() - t0
    thread.stop()
    done = snaps[first:]
    reads = sum(s.read_duration_s for s in done) / max(1, len(done))
    return len(done), cpu / wall, reads, status_summary(snaps[-1], 1.0)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="15 s per case instead of 40")
    args = parser.parse_args()
    seconds = 15.0 if args.quick else 40.0
    print(describe())
    with tempfile.NamedTemporaryFile(prefix="gpumon-bench-cadence-", suffix=".json",
                                     delete=False) as f:
        f.write(answer())
    body = Path(f.name)
    print(f"{MACHINES * PER_MACHINE:,} GPUs; the tick's answer is {body.stat().st_size / 2**20:.0f}"
          " MiB of JSON")
    server = subprocess.Popen([sys.executable, "-c", SERVER, str(body)], stdout=subprocess.PIPE,
                              text=True)
    try:
        assert server.stdout is not None
        url = f"http://127.0.0.1:{server.stdout.readline().strip()}"
        rows = []
        for name, stretch in (("held to the interval (baseline)", False),
                              ("cadence that stretches", True)):
            n, share, read_s, status = measure(url, seconds, stretch)
            rows.append((name, n, share, read_s, status))
            print(f"{name}: {n} readings in {seconds:g} s, {share * 100:.0f} % of a core, "
                  f"a reading {read_s:.2f} s; status: {status}")
        base, ours = rows[0][2], rows[1][2]
        within = rows[1][3] <= 0.5 * (seconds / max(1, rows[1][1])) + 1e-9
        met = within and "sampling every" in rows[1][4]
        print(f"CPU {ours / base:.2f}x the baseline; a reading within half the period and said "
              f"so: {'met' if met else 'NOT met'}")
    finally:
        server.terminate()
        server.wait(10)
        body.unlink()
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
