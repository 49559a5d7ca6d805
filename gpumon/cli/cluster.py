"""``gpumon --prometheus URL``: the GPUs of every machine a Prometheus server knows; and
``gpumon --exporter URL[,URL...]``: the same, read from the exporters themselves.

``--once`` prints them grouped by machine (or one line saying why not, exit 1) without
importing Qt; otherwise the window opens with the cluster overview.
"""

from __future__ import annotations

import argparse
import sys

from gpumon import extras
from gpumon.i18n import ntr, tr
from gpumon.telemetry.cluster.exporters import ExporterSource
from gpumon.telemetry.cluster.promapi import check_url, parse_header
from gpumon.telemetry.cluster.prometheus import PrometheusSource
from gpumon.telemetry.model.readouts import duplicate_note
from gpumon.telemetry.model.types import GpuInfo, GpuSample, HostView, MigSample, Snapshot
from gpumon.units import NA, format_bytes, format_number
from gpumon.untrusted import for_terminal


def _gpu_line(sample: GpuSample, name: str, why: bool = True) -> str:
    if sample.lost:
        return f"  GPU {sample.index}  {name[:28]:<28}  LOST" + (f": {sample.message}"
                                                               if why else "")
    mem = (f"{format_bytes(sample.mem_used_bytes)} / {format_bytes(sample.mem_total_bytes)}"
           if sample.mem_used_bytes is not None else NA)
    util = format_number(sample.gpu_util_pct, "%")
    return (f"  GPU {sample.index}  {name[:28]:<28}  util {util:>4}"
            f"  mem {mem:<21}  {format_number(sample.temperature_c, '°C'):>5}"
            f"  {format_number(sample.power_w, 'W', sep=' '):>6}")


def render_cluster(snapshot: Snapshot) -> str:
    """Every machine and its GPUs, one line per GPU, as ``--once`` prints them. Names,
    messages and host names come from remote machines: their control characters are shown
    as escapes, never sent to the terminal."""
    lines = [f"{snapshot.machine.host_name}: {snapshot.status.message}"]
    for host in snapshot.hosts:
        lines += [""] + _host_lines(host)
    return "\n".join(for_terminal(line) for line in lines) + "\n"


def _duplicate_line(info: GpuInfo) -> str:
    return "      " + duplicate_note(info)


def _mig_line(mig: MigSample) -> str:
    gi = "?" if mig.gpu_instance_id is None else str(mig.gpu_instance_id)
    mem = (f"{format_bytes(mig.mem_used_bytes)} / {format_bytes(mig.mem_total_bytes)}"
           if mig.mem_used_bytes is not None else NA)
    return f"      MIG {gi}  {mig.name[:40]:<40}  mem {mem}"


def _host_lines(host: HostView) -> list[str]:
    name = (tr("{host} (simulated)", host=host.host) if any(g.simulated for g in host.gpus)
            else host.host)
    head = ntr("{host}: {n} GPU", "{host}: {n} GPUs", len(host.gpus), host=name)
    lines = [head if host.up else tr("{head}, down: {reason}", head=head, reason=host.message)]
    if host.up and host.message:
        lines.append(f"  {host.message}")
    if host.driver_version:
        lines.append("  " + tr("Driver {version}", version=host.driver_version))
    for info, sample in zip(host.gpus, host.samples, strict=False):
        lines.append(_gpu_line(sample, info.name, why=host.up))
        if info.duplicates:
            lines.append(_duplicate_line(info))
        lines += [_mig_line(m) for m in host.migs if m.gpu_index == info.index]
    return lines


def make_source(args: argparse.Namespace) -> PrometheusSource | ExporterSource:
    """The source for ``--prometheus`` (or ``--exporter``) and its headers; ValueError with
    a sentence."""
    headers = dict(parse_header(h) for h in args.prometheus_header)
    if getattr(args, "exporter", None):
        urls = [check_url(u) for u in args.exporter.split(",") if u.strip()]
        if not urls:
            raise ValueError(tr("--exporter needs at least one URL"))
        return ExporterSource(urls, headers)
    return PrometheusSource(args.prometheus, headers)


def main(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    if args.simulate is not None:
        parser.error(tr("--prometheus and --simulate cannot be used together"))
    if args.prometheus is not None and getattr(args, "exporter", None):
        parser.error(tr("--prometheus and --exporter cannot be used together"))
    try:
        source = make_source(args)
    except ValueError as exc:
        parser.error(str(exc))
    if args.once:
        source.open()
        snapshot = source.sample()
        source.close()
        if not snapshot.status.usable:
            print(f"gpumon: {snapshot.status.message}", file=sys.stderr)
            return 1
        sys.stdout.write(render_cluster(snapshot))
        return 0
    try:
        from gpumon.ui.window import launch
        from gpumon.ui.window.cluster_window import ClusterWindow
    except ImportError as exc:
        print("gpumon: " + (extras.window_needs(exc) or (
            tr("cannot open the window ({error}).", error=exc) + "\n"
            + tr("Try `gpumon --prometheus URL --once` for a text snapshot."))),
              file=sys.stderr)
        return 1
    where = source.where if isinstance(source, ExporterSource) else None
    return launch.run(None, args.interval, make_window=lambda interval, settings: ClusterWindow(
        source, interval, settings=settings, where=where), lang=args.lang)
