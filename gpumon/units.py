"""Units shown to people: one formatter per kind of amount, used everywhere."""

from __future__ import annotations


def human_bytes(n: float) -> str:
    """``1.5 GiB``, ``12 KiB``, ``8 B``."""
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024:
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TiB"
