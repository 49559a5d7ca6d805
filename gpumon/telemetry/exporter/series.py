"""What the exporter says at one moment (a ``View``) as prometheus_client metric families.

Metric names, types, units and labels follow NVIDIA dcgm-exporter's defaults
(``etc/default-counters.csv``: ``DCGM_FI_DEV_FB_USED`` in MiB, ``DCGM_FI_DEV_POWER_USAGE`` in W,
labels ``gpu``, ``UUID``, ``pci_bus_id``, ``device``, ``modelName``, ``hostname``); what
dcgm-exporter lacks is under ``gpumon_``, in base units (the table is ``exported.py``). The
profiling ratios (``DCGM_FI_PROF_*``) come from GPM and are sent only for a GPU whose activity
was read, each only where the GPU answered it: a GPU without GPM has no PROF series at all.

Prometheus's exporter guidelines: a value that could not be read is left out, never sent as 0
or repeated from an older reading. So while the driver does not answer only
``gpumon_nvml_up 0`` and each GPU's last-read time are sent, and a lost GPU keeps only its
``gpumon_gpu_lost 1`` and last-read time while the others keep all their series.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from prometheus_client.core import GaugeMetricFamily, Metric

from gpumon.telemetry.model.activity import ActivityState
from gpumon.telemetry.model.exported import (
    DCGM_FIELDS,
    DRIVER_LABEL,
    GPUMON_FIELDS,
    LAST_READ,
    LAST_READ_HELP,
    LOST,
    LOST_HELP,
    NVLINK_BANDWIDTH,
    NVML_UP,
    NVML_UP_HELP,
    PROCESS_MEMORY,
    PROF_FIELDS,
    PSTATE,
    PSTATE_HELP,
    XID_ERRORS,
    XID_LABELS,
    Field,
)
from gpumon.telemetry.model.health import XID_TABLE
from gpumon.telemetry.model.types import GpuInfo, GpuSample, Snapshot

MAX_COMMAND_CHARS = 64  # a process's command line is cut here: labels of bounded size
HOST_LABEL = "hostname"  # dcgm-exporter's since its pull request 655 (it was "Hostname")
GPU_LABELS = ("gpu", "UUID", "pci_bus_id", "device", "modelName", HOST_LABEL, DRIVER_LABEL)
# A process's series carry these always; OPTIONAL_PROCESS_LABELS only when asked for
# (``--process-labels``): command lines carry tokens, paths and user names.
PROCESS_LABELS = ("gpu", "UUID", "pid", "type", HOST_LABEL)  # "type": C, G or C+G
OPTIONAL_PROCESS_LABELS = ("user", "command", "container")
PROCESS_HELP = "GPU memory a process holds (bytes)."
FIELDS = DCGM_FIELDS + GPUMON_FIELDS  # every per-GPU gauge, in the order they are sent
OPTIONAL = (*PROF_FIELDS, NVLINK_BANDWIDTH)  # sent where some GPU has a value, after FIELDS


@dataclass(frozen=True)
class Options:
    """What the operator chose to publish about processes."""

    processes: bool = True  # False: no per-process series at all (large fleets)
    process_labels: tuple[str, ...] = ()  # any of OPTIONAL_PROCESS_LABELS


@dataclass(frozen=True)
class View:
    """What the exporter says now: its latest reading, and whether the driver answers.

    ``snapshot`` is the latest reading that finished (None before the first); ``up`` is False
    while the driver does not answer (a read past its deadline, no driver) and then no GPU
    values are sent. ``last_read`` is each GPU's (by UUID) last good reading, Unix seconds.
    """

    snapshot: Snapshot | None
    up: bool
    reason: str  # one line: why the exporter is or is not healthy
    healthy: bool
    gpus: tuple[GpuInfo, ...] = ()  # every GPU seen so far (kept while the driver is stuck)
    last_read: Mapping[str, float] = field(default_factory=dict)
    seq: int = 0  # grows with every new View; a page is rendered once per seq
    driver: str = ""  # the driver version, as NVML last said it (DCGM_FI_DRIVER_VERSION)


def gpu_label_values(info: GpuInfo, host: str, driver: str = "") -> list[str]:
    """dcgm-exporter's labels of one GPU, in GPU_LABELS's order."""
    return [str(info.index), info.uuid, info.pci_bus_id, f"nvidia{info.index}", info.name, host,
            driver]


def xid_message(code: int) -> str:
    """The err_msg label of an XID code: its meaning in English (labels are not translated:
    the table's untranslated text), empty for a code not in the table."""
    known = XID_TABLE.get(code)
    return known.meaning if known else ""


def _family(f: Field, labels: list[str]) -> Metric:
    """A gauge, or a counter under exactly dcgm-exporter's name (no ``_total`` added to the
    samples; page.py keeps the text format's TYPE line on that name too)."""
    if f.kind == "counter":
        return Metric(f.name, f.help, "counter")
    return GaugeMetricFamily(f.name, f.help, labels=labels)


def cut_command(command: str | None, limit: int = MAX_COMMAND_CHARS) -> str:
    """A command line on one line, cut to ``limit`` characters (an ellipsis says it was cut)."""
    text = " ".join((command or "").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


DEFAULT_OPTIONS = Options()


def families(view: View, host: str, options: Options = DEFAULT_OPTIONS) -> list[Metric]:
    """Every family to send for ``view``, in a stable order."""
    snap = view.snapshot
    simulated = snap is not None and snap.simulated
    extra = ["1"] if simulated else []
    tag = ["simulated"] if simulated else []
    nvml = GaugeMetricFamily(NVML_UP, NVML_UP_HELP, labels=[HOST_LABEL, *tag])
    nvml.add_metric([host, *extra], 1.0 if view.up else 0.0)
    out: list[Metric] = [nvml]
    labels = [*GPU_LABELS, *tag]
    last = GaugeMetricFamily(LAST_READ, LAST_READ_HELP, labels=labels)
    for info in view.gpus:
        at = view.last_read.get(info.uuid)
        if at is not None:
            last.add_metric(gpu_label_values(info, host, view.driver) + extra, at)
    times: list[Metric] = [last] if last.samples else []  # no GPU seen yet: no family
    if snap is None or not view.up:
        return out + times
    out += _gpu_families(snap, host, labels, extra, view.driver) + times
    if options.processes:
        out.append(_process_family(snap, host, options.process_labels, tag, extra))
    return out


def _gpu_families(snap: Snapshot, host: str, labels: list[str],
                  extra: list[str], driver: str) -> list[Metric]:
    gauges = [_family(f, labels) for f in FIELDS]
    optional = [_family(f, labels) for f in OPTIONAL]
    pstate = GaugeMetricFamily(PSTATE, PSTATE_HELP, labels=labels)
    lost = GaugeMetricFamily(LOST, LOST_HELP, labels=labels)
    xid = GaugeMetricFamily(XID_ERRORS.name, XID_ERRORS.help, labels=[*labels, *XID_LABELS])
    samples = {s.index: s for s in snap.samples}
    for info in snap.gpus:
        values = gpu_label_values(info, host, driver) + extra
        sample = samples.get(info.index)
        is_lost = sample is None or sample.lost
        lost.add_metric(values, 1.0 if is_lost else 0.0)
        if sample is None or is_lost:
            continue
        for f, gauge in zip(FIELDS, gauges, strict=True):
            _add(f, gauge, _value(sample, f.key), labels, values)
        reading = sample.activity_state is ActivityState.READING
        for f, gauge in zip(PROF_FIELDS, optional, strict=False):
            if reading:
                _add(f, gauge, _value(sample, f.key), labels, values)
        _add(NVLINK_BANDWIDTH, optional[-1], nvlink_total(sample), labels, values)
        if sample.pstate is not None and sample.pstate[1:].isdigit():
            pstate.add_metric(values, float(sample.pstate[1:]))
        if sample.xid_count is not None:  # XID events are watched on this GPU
            # dcgm-exporter sends 0 until the first XID: an alert "> 0" then fires on one
            code = sample.xid_last or 0
            xid.add_metric([*values, str(code), xid_message(code) if code else ""],
                           float(code))
    return [*gauges, *(g for g in optional if g.samples), xid, pstate, lost]


def _add(f: Field, family: Metric, value: float | None, labels: list[str],
         values: list[str]) -> None:
    """One GPU's sample of ``f`` in its unit; nothing for a value not read."""
    if value is None:
        return
    if f.kind == "counter":
        family.add_sample(f.name, dict(zip(labels, values, strict=True)), value / f.scale)
    else:
        family.add_metric(values, value / f.scale)  # type: ignore[attr-defined]


def nvlink_total(sample: GpuSample) -> float | None:
    """Bytes/s sent and received over all of a GPU's active NVLinks (their counters), None
    without NVLink or while a link's rate is unknown (the first reading)."""
    rates = [r for link in sample.nvlink_links for r in (link.rx_bytes_per_s, link.tx_bytes_per_s)]
    if not rates or any(r is None for r in rates):
        return None
    return sum(r for r in rates if r is not None)


def _process_family(snap: Snapshot, host: str, optional: tuple[str, ...], tag: list[str],
                    extra: list[str]) -> Metric:
    chosen = [name for name in OPTIONAL_PROCESS_LABELS if name in optional]
    family = GaugeMetricFamily(PROCESS_MEMORY, PROCESS_HELP,
                               labels=[*PROCESS_LABELS, *chosen, *tag])
    uuids = {g.index: g.uuid for g in snap.gpus}
    for p in snap.processes:
        if p.gpu_mem_bytes is None:
            continue
        more = {"user": p.user or "", "command": cut_command(p.command or p.name),
                # a delegated cgroup's name is a user's text: cut like a command line
                "container": cut_command(p.container)}
        family.add_metric([str(p.gpu_index), uuids.get(p.gpu_index, ""), str(p.pid),
                           p.type.value, host,
                           *(more[name] for name in chosen), *extra],
                          float(p.gpu_mem_bytes))
    return family


def _value(sample: GpuSample, key: str) -> float | None:
    v = getattr(sample, key)
    return None if v is None else float(v)
