"""The CSV recorder's columns and rows, Qt-free: the window's recording, its history export
and ``gpumon --once --csv`` / ``--watch --csv`` write the same header and cells (the window's
recording and export add the history's extra series at the end)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import datetime

from gpumon.telemetry.model.metrics import METRICS, SELF_MEM_KEY, value_of
from gpumon.telemetry.model.types import Snapshot
from gpumon.untrusted import for_csv

_UNITS = (("_bytes_per_s", "B/s"), ("_bytes", "B"), ("_pct", "%"), ("_mhz", "MHz"),
          ("_c", "degC"), ("_w", "W"), ("_s", "s"), ("_mj", "mJ"))
RECORD_KEYS: tuple[str, ...] = tuple(m.key for m in METRICS)
ID_COLUMNS = ("timestamp_iso", "timestamp_epoch_s", "gpu_index", "uuid", "name")


def unit_of(key: str) -> str:
    """The raw unit of a series from its name (values are written unscaled)."""
    return next((u for suffix, u in _UNITS if key.endswith(suffix)), "")


def column(key: str) -> str:
    """A CSV header cell: ``mem_used_bytes [B]``."""
    unit = unit_of(key)
    return f"{key} [{unit}]" if unit else key


def iso(t: float) -> str:
    return datetime.fromtimestamp(t).astimezone().isoformat(timespec="milliseconds")


def stamps(t: float) -> tuple[str, str]:
    """``timestamp_iso`` and ``timestamp_epoch_s`` of one instant, both to the millisecond:
    the time is rounded once (isoformat alone truncates, "%.3f" rounds: they disagreed)."""
    ms = round(t * 1000)
    return iso(ms / 1000), f"{ms // 1000}.{ms % 1000:03d}"


def cell(v: float | None) -> str:
    """Exact: whole numbers without a decimal point, others as Python's shortest repr."""
    if v is None or not math.isfinite(v):
        return ""
    return str(int(v)) if float(v).is_integer() else repr(float(v))


def record_header(extra_keys: Sequence[str] = ()) -> list[str]:
    """The recorder's header: the ids, ``lost``, every metric with its unit, then the
    ``extra_keys`` series (the window's recording: its own memory, torch's counters)."""
    return [*ID_COLUMNS, "lost", *(column(k) for k in RECORD_KEYS),
            *(column(k) for k in extra_keys)]


def record_rows(snap: Snapshot, extra_keys: Sequence[str] = ()) -> list[list[object]]:
    """One row per GPU of ``snap``; a lost GPU has ``lost=1`` and empty values.
    ``extra_keys``: more columns, from ``extra_values`` (empty where a GPU has none)."""
    infos = {g.index: g for g in snap.gpus}
    rows: list[list[object]] = []
    for s in snap.samples:
        info = infos.get(s.index)
        extra = extra_values(snap, s.index) if extra_keys and not s.lost else {}
        rows.append([*stamps(s.timestamp_s), s.index, for_csv(info.uuid) if info else "",
                     for_csv(info.name) if info else "", 1 if s.lost else 0,
                     *(cell(value_of(s, k)) for k in RECORD_KEYS),  # None when lost
                     *(cell(extra.get(k)) for k in extra_keys)])
    return rows


def extra_values(snap: Snapshot, gpu_index: int) -> dict[str, float | None]:
    """The series the history keeps beside the metrics, for one GPU of ``snap``: the memory
    this process holds there (``self_mem_bytes``, None when none) and the snapshot's extra
    series (torch's allocator counters). Same values as ``History.append`` stores."""
    own = [p.gpu_mem_bytes for p in snap.processes
           if p.is_self and p.gpu_index == gpu_index and p.gpu_mem_bytes is not None]
    values: dict[str, float | None] = {SELF_MEM_KEY: float(sum(own)) if own else None}
    values.update(snap.extra.get(gpu_index, {}))
    return values
