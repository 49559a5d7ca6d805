"""What the process table shows of a process and which rows its filter keeps. Qt-free.

``matches(process, query)``: every word of the query must match, case-insensitively, as part
of the process's user, command line, name, container/job or PID; ``gpu:N`` (or ``gpu=N``)
keeps the processes on GPU N. An empty query keeps everything.
"""

from __future__ import annotations

from gpumon.telemetry.types import GpuProcess
from gpumon.units import NA


def format_pct(value: float | None) -> str:
    return NA if value is None else f"{value:.0f} %"


def format_run_time(seconds: float | None) -> str:
    """How long a process has run, as ``ps -o etime`` writes it: ``MM:SS``, ``H:MM:SS``,
    ``D-HH:MM:SS``."""
    if seconds is None:
        return NA
    total = max(0, int(seconds))
    days, rest = divmod(total, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days}-{hours:02d}:{minutes:02d}:{secs:02d}"
    if hours:
        return f"{hours}:{minutes:02d}:{secs:02d}"
    return f"{minutes:02d}:{secs:02d}"


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
