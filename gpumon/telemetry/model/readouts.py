"""The text of the monitor's readouts: the hover readout beside the pointer, a GPU panel's
readout line and tooltip, and the header's status line. Qt-free: the views only put these
strings in labels.
"""

from __future__ import annotations

import math

from gpumon.i18n import N_, ntr, tr
from gpumon.telemetry.model.metrics import (
    BY_KEY,
    METRICS,
    SELF_MEM_KEY,
    TIME_KEY,
    format_reading,
    format_value,
)
from gpumon.telemetry.model.plausible import implausible_text
from gpumon.telemetry.model.types import GpuInfo, GpuSample, Snapshot
from gpumon.units import NA, format_bytes, format_clock

MINUS = "\u2212"  # the minus sign of the time axis and the readouts
READOUT_KEYS = ("mem_used_bytes", "gpu_util_pct", "mem_util_pct", "temperature_c", "power_w")
TOOLTIP_KEYS = tuple(m.key for m in METRICS if m.panel == "tooltip")
LINE_KEYS = tuple(m.key for m in METRICS if m.panel in ("line", "cap"))
# Series beside the metrics that the hover readout names in words (others by their key).
EXTRA_LABELS = {SELF_MEM_KEY: N_("gpumon's own memory"),
                "torch_allocated_bytes": N_("torch allocated"),
                "torch_reserved_bytes": N_("torch reserved")}


def readout_parts(gpu: int, t_now: float, values: dict[str, float]) -> tuple[str, list[str]]:
    """The hover readout as a heading and one line per value: ``("GPU 0 at 14:03:12
    (−12.3 s)", ["Memory used 12.34 GiB", "GPU util 45 %", …])``; a sentence and no lines
    when there is no data at that time."""
    if not values:
        return tr("GPU {gpu}: no data at this time", gpu=gpu), []
    t = values.get(TIME_KEY, math.nan)
    clock = format_clock(t) if math.isfinite(t) else "?"
    parts = []
    for key in READOUT_KEYS:
        parts.append(f"{tr(BY_KEY[key].label)} {format_reading(values.get(key), key)}")
    for key, v in values.items():
        if key in BY_KEY or key == TIME_KEY or not math.isfinite(v):
            continue
        label = (tr(EXTRA_LABELS[key]) if key in EXTRA_LABELS
                 else key.removesuffix("_bytes").replace("_", " "))
        parts.append(f"{label} {format_bytes(v) if key.endswith('_bytes') else f'{v:g}'}")
    heading = tr("GPU {gpu} at {clock} ({offset} s)", gpu=gpu, clock=clock,
                 offset=signed(t - t_now))
    return heading, parts


def signed(seconds: float) -> str:
    """``+1.5`` / ``−12.3``: one decimal, always signed, with a real minus sign (as wide as
    "+", and what typesetting uses; "-" is a hyphen)."""
    return f"{seconds:+.1f}".replace("-", MINUS)


def format_readout(gpu: int, t_now: float, values: dict[str, float]) -> str:
    """'GPU 0 at 14:03:12 (−12.3 s): Memory used 12.34 GiB · GPU util 45 % · …' (one line)."""
    heading, parts = readout_parts(gpu, t_now, values)
    if not parts:
        return heading
    t = values.get(TIME_KEY, math.nan)
    clock = format_clock(t) if math.isfinite(t) else "?"
    return tr("GPU {gpu} at {clock} ({offset} s): {values}", gpu=gpu, clock=clock,
              offset=signed(t - t_now), values=" · ".join(parts))


def read_every_text(s: GpuSample | None, key: str) -> str:
    """`` (read every 14 s)`` for a field the source reads less often than each reading
    (the driver's call is costly: GpuSample.read_every_s), else empty."""
    every = None if s is None else dict(s.read_every_s).get(key)
    return "" if every is None else tr(" (read every {seconds} s)", seconds=f"{every:.0f}")


def implausible_lines(s: GpuSample | None) -> list[str]:
    """Why readings of ``s`` are N/A although the driver answered: the value it gave."""
    if s is None:
        return []
    return [implausible_text(key, tr(BY_KEY[key].label) if key in BY_KEY else key, value)
            for key, value in s.implausible]


def extra_readouts(s: GpuSample | None) -> str:
    """The readouts the panel has no room for, one per line: every "tooltip" metric of the
    table (memory free and reserved, PCIe, encoder, decoder …), N/A where not reported, and
    how often it is read where that is less often than each reading; then the NVML calls
    that failed on this tick, whose readings are N/A until the next one."""
    lines = [tr("{name}: {value}", name=tr(BY_KEY[key].label), value=format_value(s, key))
             + read_every_text(s, key) for key in TOOLTIP_KEYS]
    every = None if s is None else dict(s.read_every_s).get("processes")
    if every is not None:
        lines.append(tr("Per-process utilization: read every {seconds} s",
                        seconds=f"{every:.0f}"))
    lines += implausible_lines(s)
    if s is not None and s.failed_reads:
        lines.append(tr("N/A on this tick because NVML failed to read them:"))
        lines += [f"  {failure}" for failure in s.failed_reads]
    return "\n".join(lines)


def readout_line(s: GpuSample | None) -> list[tuple[str, bool]]:
    """The panel's readout line as (text, bold) runs: each "line" metric of the table by its
    short name, a "cap" after the metric before it ("Power 120 / 250 W"), then the
    performance state. ``Temp 45 °C · Power 120 / 250 W · Fan 40 % · … · Perf P0``."""
    runs: list[tuple[str, bool]] = []
    for i, key in enumerate(LINE_KEYS):
        m = BY_KEY[key]
        if m.panel == "cap":
            runs.append((f" / {format_value(s, key)}", False))
            continue
        capped = i + 1 < len(LINE_KEYS) and BY_KEY[LINE_KEYS[i + 1]].panel == "cap"
        runs.append((f"{' · ' if runs else ''}{tr(m.short or m.label)} ", False))
        runs.append((format_value(s, key, with_unit=not capped), True))
    pstate = s.pstate if s is not None and not s.lost and s.pstate else NA
    runs += [(" · " + tr("Perf") + " ", False), (pstate, True)]
    return runs


def status_summary(snap: Snapshot, interval_s: float) -> str:
    """The normal status line: what was read, how fast."""
    if not snap.status.usable:
        return snap.status.message
    lost = sum(1 for s in snap.samples if s.lost)
    n = len(snap.gpus)
    parts = [ntr("{n} GPU", "{n} GPUs", n)]
    host = snap.gpus[0].host if snap.gpus else None
    if snap.hosts and host:  # a cluster: which machine, and the whole beside it (the
        # overview counts every machine's GPUs; "2 GPUs" alone read as a contradiction)
        total = sum(len(h.gpus) for h in snap.hosts)
        parts = [tr("{host}: {gpus} of {total} on {machines}", host=host, gpus=parts[0],
                    total=total, machines=ntr("{n} machine", "{n} machines", len(snap.hosts)))]
    if lost:
        parts.append(tr("{n} lost", n=lost))
    if snap.period_s > interval_s * 1.001:  # reading cannot keep up: readings further apart
        parts.append(tr("reading takes {read} s: sampling every {period} s",
                        read=f"{snap.read_duration_s:.1f}", period=f"{snap.period_s:g}"))
        return " · ".join(parts)
    parts.append(tr("read in {ms} ms", ms=f"{snap.read_duration_s * 1000:.0f}"))
    parts.append(tr("every {seconds} s", seconds=f"{interval_s:g}"))
    return " · ".join(parts)


def window_label(seconds: int) -> str:
    """A time window as the toolbar offers it: ``5 min``, ``1 h``."""
    if seconds < 3600:
        return f"{seconds // 60} min"
    return f"{seconds // 3600} h"


def duplicate_note(info: GpuInfo) -> str:
    """Which other scrape targets report this GPU (same UUID), and which one is shown."""
    return tr("also reported by {targets} (same UUID {uuid}): shown once, from {source}",
              targets=", ".join(info.duplicates), uuid=info.uuid, source=info.source)
