"""Many ``gpumon exporter --simulate`` machines in one process, one loopback port each, for a
real Prometheus to scrape (benchmarks): each port serves a simulated machine through the
exporter's own reader, pages and HTTP server, as ``gpumon exporter`` does.

Usage: python benchmarks/fleet_exporter.py --machines 64 --gpus 8
Prints one line of ports (space-separated) once listening; serves until stdin closes.
"""

from __future__ import annotations

import argparse
import sys
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gpumon.telemetry.exporter.page import Pages
from gpumon.telemetry.exporter.reader import GpuReader
from gpumon.telemetry.exporter.routes import serve
from gpumon.telemetry.exporter.server import HttpServer
from gpumon.telemetry.sources.simulated import SimulatedSource


def start(machines: int, gpus: int) -> tuple[list[HttpServer], list[GpuReader]]:
    """One exporter per machine, each reading once a second (Prometheus scrapes as often)."""
    servers, readers = [], []
    for i in range(machines):
        pages = Pages(f"node-{i:03d}")
        reader = GpuReader(partial(SimulatedSource, n_gpus=gpus, seed=i), pages.publish, 1.0)
        reader.start()
        servers.append(serve("127.0.0.1", 0, pages))
        readers.append(reader)
    return servers, readers


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--machines", type=int, default=64)
    parser.add_argument("--gpus", type=int, default=8)
    args = parser.parse_args()
    servers, readers = start(args.machines, args.gpus)
    print(" ".join(str(s.port) for s in servers), flush=True)
    sys.stdin.read()  # until the parent closes our stdin
    for server, reader in zip(servers, readers, strict=True):
        server.close()
        reader.stop()


if __name__ == "__main__":
    main()
