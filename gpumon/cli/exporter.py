"""``gpumon exporter``: serve this machine's GPU numbers at /metrics for Prometheus.

Loopback only unless ``--listen`` says otherwise; port 9401 by default, beside
dcgm-exporter's 9400. Runs until SIGINT or SIGTERM. Never imports Qt or torch.
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading
from collections.abc import Callable
from functools import partial

from gpumon.cli.argtypes import add_lang_argument, seconds
from gpumon.cli.argtypes import gpu_count as _count
from gpumon.i18n import tr
from gpumon.interval import EXPORTER
from gpumon.telemetry.exporter import DEFAULT_LISTEN, GpuCollector
from gpumon.telemetry.types import Source


def parse_listen(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:9401`` for IPv6) as (host, port); a sentence when malformed."""
    host, sep, port_text = text.rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise argparse.ArgumentTypeError(
            tr("must be HOST:PORT, for example {listen} or 0.0.0.0:9401, got {text}",
               listen=DEFAULT_LISTEN, text=repr(text)))
    return host, int(port_text)


_seconds = seconds(EXPORTER)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gpumon exporter",
        description=tr("Serve this machine's GPU numbers at http://HOST:PORT/metrics for "
                       "Prometheus, with dcgm-exporter's metric names."))
    parser.add_argument("--listen", type=parse_listen, default=DEFAULT_LISTEN,
                        metavar="HOST:PORT",
                        help=tr("address to serve on (default {listen}: this machine only; "
                                "0.0.0.0:9401 lets a Prometheus server elsewhere scrape it)",
                                listen=DEFAULT_LISTEN))
    parser.add_argument("--simulate", type=_count, metavar="N", default=None,
                        help=tr("export N simulated GPUs, labelled simulated=\"1\""))
    parser.add_argument("--seed", type=int, default=0, help=tr("seed of the simulated GPUs"))
    parser.add_argument("--interval", type=_seconds, default=EXPORTER.default,
                        metavar="SECONDS",
                        help=tr("read the GPUs at most once per this many seconds, however "
                                "many scrapers ask (default 1)"))
    parser.add_argument("--hostname", default=None, metavar="NAME",
                        help=tr("the Hostname label (default: this machine's name)"))
    add_lang_argument(parser)
    return parser


def _factory(simulate: int | None, seed: int) -> Callable[[], Source]:
    """Simulated GPUs, or NVML (imported when first opened: a missing binding is a status)."""
    if simulate is not None:
        from gpumon.telemetry.simulated import SimulatedSource

        return partial(SimulatedSource, n_gpus=simulate, seed=seed)

    def nvml() -> Source:
        from gpumon.telemetry.nvml import NvmlSource

        return NvmlSource()

    return nvml


def main(argv: list[str]) -> int:
    """Serve until SIGINT/SIGTERM; 1 with a sentence when the address cannot be used."""
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="gpumon exporter: %(message)s")
    from prometheus_client import CollectorRegistry

    from gpumon.telemetry.exporter_http import make_app, serve
    from gpumon.telemetry.exposition import Exposition

    collector = GpuCollector(_factory(args.simulate, args.seed), args.interval, args.hostname)
    registry = CollectorRegistry()
    registry.register(collector)  # the official client's collector; it also answers OpenMetrics
    host, port = args.listen
    try:
        server, thread = serve(host, port, make_app(Exposition(collector), registry))
    except OSError as exc:
        print("gpumon exporter: " + tr("cannot listen on {address} ({reason}).",
                                       address=f"{host}:{port}", reason=exc.strerror or exc),
              file=sys.stderr)
        return 1
    logging.info("serving http://%s:%d/metrics%s", host, port,
                 " (simulated GPUs)" if args.simulate else "")
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    while not stop.wait(3600):
        pass
    server.shutdown()
    server.server_close()
    thread.join(5)
    collector.close()
    return 0
