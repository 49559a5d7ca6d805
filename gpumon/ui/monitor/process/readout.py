"""What a process's own window writes about the process, Qt-free: the newest numbers beside
each graph's title, the readings at the time under the pointer, and the unit of a memory
graph.

The four graphs are keyed ``gpu_mem`` (bytes, a curve per GPU), ``sm`` (% per GPU), ``cpu``
(host CPU %) and ``rss`` (host resident memory, bytes).
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable

from gpumon.i18n import tr
from gpumon.telemetry.history.process_trace import ProcessTrace, Series, latest_value, value_at
from gpumon.ui.monitor.process.fields import format_pct
from gpumon.units import byte_unit, format_bytes, unit_size

MIN_UNIT = "MiB"  # a graph of a few KiB still reads in MiB: nothing a GPU process holds is less


def memory_unit(top: float) -> tuple[str, float]:
    """(unit, bytes in it) for a memory graph whose highest value is ``top`` bytes: the unit
    ``format_bytes`` writes that value in, as the monitor's readings do, and at least MiB. A
    155 MiB process read "0.145-0.155" on an axis fixed in GiB."""
    unit = byte_unit(top) if math.isfinite(top) and top > 0 else MIN_UNIT
    if unit_size(unit) < unit_size(MIN_UNIT):
        unit = MIN_UNIT
    return unit, float(unit_size(unit))


Pairs = list[tuple[str, str]]  # (what, its newest value) for the line above a graph


def _per_gpu(table: dict[int, Series], text: Callable[[float | None], str]) -> Pairs:
    return [(f"GPU {gpu}", text(latest_value(series))) for gpu, series in sorted(table.items())]


def current_values(trace: ProcessTrace) -> dict[str, Pairs]:
    """The newest reading of each graph, for the line above it: ("GPU 0", "1.20 GiB") for
    each curve of the per-GPU graphs, ("", value) on the host's."""
    return {"gpu_mem": _per_gpu(trace.gpu_mem, format_bytes),
            "sm": _per_gpu(trace.sm_pct, format_pct),
            "cpu": [("", format_pct(latest_value(trace.cpu_pct)))],
            "rss": [("", format_bytes(latest_value(trace.rss_bytes)))]}


def readings_at(trace: ProcessTrace, t: float) -> list[str]:
    """The process's readings at time ``t`` (the newest at or before it), a line per GPU and
    one for the host; one line saying so once it had exited."""
    if trace.exited_s is not None and t >= trace.exited_s:
        return [tr("exited")]
    lines = [tr("GPU {gpu}: memory {memory} · SM {sm}", gpu=gpu,
                memory=format_bytes(value_at(series, t)),
                sm=format_pct(value_at(trace.sm_pct.get(gpu, deque()), t)))
             for gpu, series in sorted(trace.gpu_mem.items())]
    lines.append(tr("CPU {cpu} · RSS {rss}", cpu=format_pct(value_at(trace.cpu_pct, t)),
                    rss=format_bytes(value_at(trace.rss_bytes, t))))
    return lines
