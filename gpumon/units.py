"""Amounts as people read them: the byte units and the one byte formatter, a reading with its
unit or ``N/A``, a run time, and the two ways a moment is written (a clock time, and
nvidia-smi's date).

Every view formats bytes with :func:`format_bytes`, so the monitor and the playground print the
same amount the same way. Qt-free, numpy-free: the terminal outputs use it too.
"""

from __future__ import annotations

import math
import time

KIB = 1024
MIB = 1024**2
GIB = 1024**3
TIB = 1024**4
UNITS = ("B", "KiB", "MiB", "GiB", "TiB")  # binary steps of 1024; TiB is the last
_SIZE = {unit: 1024**i for i, unit in enumerate(UNITS)}
NA = "N/A"  # a value the source does not have (nvidia-smi's word, in every language)
DECIMALS = 2


def format_bytes(n: float | None, unit: str | None = None, *, decimals: int = DECIMALS,
                 sep: str = " ", suffix: bool = True) -> str:
    """``1.50 GiB``, ``256.00 MiB``, ``12.00 KiB``, ``8 B``; ``N/A`` for None, nan or inf.

    The format: the largest unit (up to TiB) in which the amount is at least 1, with two
    decimals; whole bytes below 1 KiB. Two decimals because the monitor has always shown
    memory so (``12.34 / 80.00 GiB`` above a panel's graph) and torch's out-of-memory message,
    which the playground shows, does too (``Tried to allocate 20.00 GiB``); and the same
    precision in every unit keeps the shown amount within 0.5 % of the real one wherever it
    falls: one decimal hides 50 MiB in ``1.5 GiB``, whole MiB make a 1.5 MiB tensor read
    ``2 MiB``. A column of sizes lines up, too. An amount that rounds to 1024 of a unit is
    shown in the next (``1.00 MiB``, not ``1024.00 KiB``). Rounding is to nearest; negative
    amounts keep their sign.

    A caller that needs another presentation says so here rather than with its own code:
    ``unit`` fixes the unit (``format_bytes(n, "GiB")``: ``0.50 GiB``, as a graph in GiB is
    labelled), ``decimals`` the precision above B, ``sep`` what stands between number and
    unit (nvidia-smi's table writes ``1234MiB``: ``format_bytes(n, "MiB", decimals=0,
    sep="")``) and ``suffix=False`` leaves the unit out (``12.34`` before ``/ 80.00 GiB``).
    """
    if n is None or not math.isfinite(n):
        return NA
    if unit is None:
        unit = byte_unit(n, decimals=decimals)
    elif unit not in _SIZE:
        raise ValueError(f"unknown byte unit {unit!r}; expected one of {UNITS}")
    places = 0 if unit == "B" else decimals
    text = f"{n / _SIZE[unit]:.{places}f}"
    return f"{text}{sep}{unit}" if suffix else text


def byte_unit(n: float, *, decimals: int = DECIMALS) -> str:
    """The unit :func:`format_bytes` writes ``n`` bytes in: the largest (up to TiB) in which
    the amount is at least 1, the next one up where it rounds to 1024 of it. A graph of
    memory labels its axis in the unit of its highest value (155 MiB read "0.15 GiB")."""
    unit = next(u for u in reversed(UNITS) if abs(n) >= _SIZE[u] or u == "B")
    places = 0 if unit == "B" else decimals
    if unit != UNITS[-1] and round(abs(n) / _SIZE[unit], places) >= 1024:
        unit = UNITS[UNITS.index(unit) + 1]  # 1023.999 KiB: 1.00 MiB, not 1024.00 KiB
    return unit


def unit_size(unit: str) -> int:
    """Bytes in one ``unit`` (one of UNITS)."""
    return _SIZE[unit]


def format_number(v: float | None, unit: str = "", *, decimals: int = 0, sep: str = "") -> str:
    """A reading with its unit, as the nvidia-smi-like views write it: ``87%``, ``71C``,
    ``215.50 W`` (``decimals=2, sep=" "``); ``N/A`` for None, nan or inf, as format_bytes."""
    if v is None or not math.isfinite(v):
        return NA
    return f"{v:.{decimals}f}{sep}{unit}"


def format_clock(t: float) -> str:
    """The local time of day of ``t`` (seconds since the epoch): ``14:03:12``."""
    return time.strftime("%H:%M:%S", time.localtime(t))


def format_smi_date(t: float) -> str:
    """The local date and time of ``t`` as nvidia-smi's header writes it:
    ``Tue Mar 05 14:03:12 2024``."""
    return time.strftime("%a %b %d %H:%M:%S %Y", time.localtime(t))


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
