"""What the process table shows of a process and which rows its filter keeps. Qt-free.

``matches(process, query)``: every word of the query must match, case-insensitively, as part
of the process's user, command line, name, container/job or PID; ``gpu:N`` (or ``gpu=N``)
keeps the processes on GPU N. An empty query keeps everything.
"""

from __future__ import annotations

from gpumon.telemetry.model.types import GpuProcess
from gpumon.units import NA, format_run_time

__all__ = ["format_pct", "format_run_time", "matches", "run_time_s"]


def format_pct(value: float | None) -> str:
    return NA if value is None else f"{value:.0f} %"


def run_time_s(p: GpuProcess, now_s: float) -> float | None:
    return None if p.started_s is None else max(0.0, now_s - p.started_s)


def matches(p: GpuProcess, query: str) -> bool:
    """Whether ``p`` passes the filter ``query`` (see the module's docstring)."""
    words = query.casefold().split()
    if not words:
        return True
    haystack = " ".join(t for t in (p.user, p.command, p.name, p.container, str(p.pid)) if t
                        ).casefold()
    for word in words:
        key, sep, value = word.replace("=", ":").partition(":")
        if sep and key == "gpu":
            if not value.isdigit() or int(value) != p.gpu_index:
                return False
        elif word not in haystack:
            return False
    return True
