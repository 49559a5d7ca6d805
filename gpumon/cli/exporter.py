"""``gpumon exporter``: serve this machine's GPU numbers at /metrics for Prometheus.

Loopback only unless ``--listen`` says otherwise (then without a TLS web config it logs one
warning); port 9401 by default, beside dcgm-exporter's 9400. ``--web.config.file`` takes
exporter-toolkit's file (TLS, basic auth); a bad one stops it with a sentence. Runs until
SIGINT or SIGTERM, which end it within about a second even while a driver call hangs.
Never imports Qt or torch.
"""

from __future__ import annotations

import argparse
import ipaddress
import logging
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from gpumon.cli.argtypes import add_gpm_argument, add_lang_argument, seconds
from gpumon.cli.argtypes import gpu_count as _count
from gpumon.i18n import tr
from gpumon.interval import EXPORTER, IntervalRange
from gpumon.telemetry.choice import source_factory
from gpumon.telemetry.exporter.reader import DEFAULT_LISTEN, DEFAULT_READ_TIMEOUT_S
from gpumon.telemetry.exporter.series import OPTIONAL_PROCESS_LABELS, Options, View
from gpumon.telemetry.model.types import Snapshot

if TYPE_CHECKING:
    from gpumon.recording.writer import StreamRecordWriter


def parse_listen(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:9401`` for IPv6) as (host, port); a sentence when malformed."""
    host, sep, port_text = text.rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise argparse.ArgumentTypeError(
            tr("must be HOST:PORT, for example {listen} or 0.0.0.0:9401, got {text}",
               listen=DEFAULT_LISTEN, text=repr(text)))
    return host, int(port_text)


def parse_process_labels(text: str) -> tuple[str, ...]:
    """``user,command`` (either, both, or empty) as a tuple; a sentence for anything else."""
    names = tuple(n.strip() for n in text.split(",") if n.strip())
    wrong = [n for n in names if n not in OPTIONAL_PROCESS_LABELS]
    if wrong:
        raise argparse.ArgumentTypeError(
            tr("must be a comma-separated list of {choices}, got {text}",
               choices=", ".join(OPTIONAL_PROCESS_LABELS), text=repr(text)))
    return names


_seconds = seconds(EXPORTER)
#: How long one read of the GPUs may stand still before the driver counts as not answering.
READ_TIMEOUT = IntervalRange(low=0.5, high=60.0, default=DEFAULT_READ_TIMEOUT_S)


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
    parser.add_argument("--web.config.file", dest="web_config", type=Path, default=None,
                        metavar="FILE",
                        help=tr("TLS and basic authentication, in the file format of "
                                "Prometheus's exporters (exporter-toolkit)"))
    parser.add_argument("--simulate", type=_count, metavar="N", default=None,
                        help=tr("export N simulated GPUs, labelled simulated=\"1\""))
    parser.add_argument("--seed", type=int, default=0, help=tr("seed of the simulated GPUs"))
    parser.add_argument("--interval", type=_seconds, default=EXPORTER.default,
                        metavar="SECONDS",
                        help=tr("read the GPUs once per this many seconds, however many "
                                "scrapers ask (default 1)"))
    parser.add_argument("--read-timeout", type=seconds(READ_TIMEOUT),
                        default=READ_TIMEOUT.default, metavar="SECONDS",
                        help=tr("after this many seconds without an answer from the driver, "
                                "send gpumon_nvml_up 0 and no GPU values (default 5)"))
    parser.add_argument("--process-labels", type=parse_process_labels, default=(),
                        metavar="user,command,container",
                        help=tr("also label each process's series with its user, command "
                                "line and/or container or batch job (default: gpu, UUID and "
                                "pid only)"))
    parser.add_argument("--no-processes", action="store_true",
                        help=tr("send no per-process series at all"))
    parser.add_argument("--hostname", default=None, metavar="NAME",
                        help=tr("the hostname label (default: this machine's name)"))
    parser.add_argument("--record", metavar="FILE", type=Path, default=None,
                        help=tr("also record every reading to FILE, replayable with gpumon "
                                "--replay (gzip when it ends in .gz)"))
    add_gpm_argument(parser)
    add_lang_argument(parser)
    return parser


def _recording(publish: Callable[[View], None], writer: StreamRecordWriter
               ) -> Callable[[View], None]:
    """``publish``, and each new reading the View carries also to ``writer``."""
    last: list[Snapshot | None] = [None]

    def both(view: View) -> None:
        publish(view)
        snap = view.snapshot
        if snap is not None and snap is not last[0] and snap.status.usable:
            last[0] = snap
            writer.add(snap)

    return both


def is_loopback(host: str) -> bool:
    """Whether ``host`` is only reachable from this machine."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def raise_file_limit() -> None:
    """Let the server keep more connections open than the usual soft limit of 1,024 file
    descriptors allows (up to the hard limit, at most 65,536), as Go's runtime does."""
    try:
        import resource
    except ImportError:  # Windows: no such limit to raise
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = 65536 if hard == resource.RLIM_INFINITY else min(hard, 65536)
    if soft != resource.RLIM_INFINITY and soft < want:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
        except (ValueError, OSError):
            pass


def _fail(text: str) -> int:
    print("gpumon exporter: " + text, file=sys.stderr)
    return 1


def main(argv: list[str]) -> int:
    """Serve until SIGINT/SIGTERM; 1 with a sentence when the address or the web config
    cannot be used."""
    args = build_parser().parse_args(argv)
    # SIGINT and SIGTERM end the exporter at any moment: before it serves, at once (nothing
    # to close yet; a slow web config once held the start with SIGINT unanswered), then
    # cleanly, after the server and the reader stop.
    stop = threading.Event()

    def on_signal(signum: int, _frame: object) -> None:
        if not serving:
            raise SystemExit(128 + signum)
        stop.set()

    serving = False
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, on_signal)
    logging.basicConfig(level=logging.INFO, format="gpumon exporter: %(message)s")
    from gpumon.telemetry.exporter.page import Pages
    from gpumon.telemetry.exporter.reader import GpuReader
    from gpumon.telemetry.exporter.routes import serve
    from gpumon.telemetry.exporter.webconfig import WebConfig, WebConfigError, load

    web = WebConfig()
    if args.web_config is not None:
        try:
            web = load(args.web_config)
        except WebConfigError as err:
            return _fail(str(err))
    raise_file_limit()
    pages = Pages(args.hostname, Options(processes=not args.no_processes,
                                         process_labels=args.process_labels))
    publish: Callable[[View], None] = pages.publish
    writer: StreamRecordWriter | None = None
    if args.record is not None:
        from gpumon.recording.writer import StreamRecordWriter

        try:
            writer = StreamRecordWriter(args.record, lambda why: logging.error("%s", why),
                                        args.interval)
        except OSError as exc:
            return _fail(tr("cannot record to {path} ({reason}).", path=args.record,
                            reason=exc.strerror or exc))
        publish = _recording(pages.publish, writer)
    reader = GpuReader(source_factory(args.simulate, args.seed, not args.no_gpm), publish,
                       args.interval, args.read_timeout)
    # From the first answer on, a SIGTERM (a test, a quick systemd restart) ends the
    # exporter cleanly, not by the default action.
    serving = True
    host, port = args.listen
    try:
        server = serve(host, port, pages, web)
    except OSError as exc:
        return _fail(tr("cannot listen on {address} ({reason}).",
                        address=f"{host}:{port}", reason=exc.strerror or exc))
    reader.start()
    scheme = "https" if web.tls is not None else "http"
    shown = f"[{host}]" if ":" in host else host
    logging.info("serving %s://%s:%d/metrics%s", scheme, shown, port,
                 " (simulated GPUs)" if args.simulate else "")
    if web.tls is None and not is_loopback(host):
        logging.warning("listening on %s without TLS: anyone who can reach this port reads "
                        "it; see --web.config.file", host)
    for warning in [*web.warnings, web.key_warning(not is_loopback(host))]:
        if warning:
            logging.warning("%s", warning)
    while not stop.wait(3600):
        pass
    server.close()
    reader.stop(timeout_s=1.0)
    if writer is not None:
        writer.close()
    return 0
