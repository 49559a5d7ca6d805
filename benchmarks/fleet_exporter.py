"""Many ``gpumon exporter --simulate`` machines in one process, one loopback port each, for a
real Prometheus to scrape (benchmarks): each port serves the /metrics page of a simulated
machine, rendered by prometheus_client from gpumon's own collector.

Usage: python benchmarks/fleet_exporter.py --machines 64 --gpus 8
Prints one line of ports (space-separated) once listening; serves until stdin closes.
"""

from __future__ import annotations

import argparse
import sys
import threading
from functools import partial
from pathlib import Path
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from prometheus_client import CollectorRegistry, make_wsgi_app  # noqa: E402

from gpumon.telemetry.exporter.reader import GpuCollector  # noqa: E402
from gpumon.telemetry.sources.simulated import SimulatedSource  # noqa: E402


class _Quiet(WSGIRequestHandler):
    def log_message(self, *_: object) -> None:
        pass


def serve(machines: int, gpus: int) -> tuple[list[WSGIServer], list[GpuCollector]]:
    servers, collectors = [], []
    for i in range(machines):
        collector = GpuCollector(partial(SimulatedSource, n_gpus=gpus, seed=i), 1.0,
                                 host=f"node-{i:03d}")
        registry = CollectorRegistry(auto_describe=False)
        registry.register(collector)
        server = make_server("127.0.0.1", 0, make_wsgi_app(registry), handler_class=_Quiet)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        collectors.append(collector)
    return servers, collectors


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--machines", type=int, default=64)
    parser.add_argument("--gpus", type=int, default=8)
    args = parser.parse_args()
    servers, collectors = serve(args.machines, args.gpus)
    print(" ".join(str(s.server_address[1]) for s in servers), flush=True)
    sys.stdin.read()  # until the parent closes our stdin; the servers' threads are daemons
    for c in collectors:
        c.close()


if __name__ == "__main__":
    main()
