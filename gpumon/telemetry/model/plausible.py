"""Readings no GPU can give, caught before any view sees them.

A driver answers some failures with a sentinel instead of an error: utilization 4294967295 %
(0xFFFFFFFF), a temperature of -1 °C (TemperatureV's int of the same bits), free memory of
1.7e13 MiB (used above total, subtracted unsigned). ``screen`` turns each value outside what a
GPU can physically report into None, so it shows as N/A, is written as an empty cell, and
never sets a graph's scale; the raw value is kept in ``GpuSample.implausible`` for the
tooltips to say why.
"""

from __future__ import annotations

from typing import Any

from gpumon.i18n import tr

# The widest range each kind of reading can take, by the unit in the field's name. A fan may
# report above 100 % (NVML's documentation allows it); the largest GPU has 288 GB, the
# fastest link carries 1.8 TB/s, the hungriest board draws some 1.2 kW.
_PIB = float(1 << 50)
_RANGES: tuple[tuple[str, float, float], ...] = (
    ("fan_pct", 0.0, 200.0),
    ("_pct", 0.0, 100.0),
    # NVML's older call is unsigned and a powered die is warmer than its air: below 0 C is
    # a sentinel (TemperatureV's int of 0xFFFFFFFF is -1), not a reading.
    ("_c", 0.0, 200.0),
    ("_bytes_per_s", 0.0, float(1 << 42)),
    ("_bytes", 0.0, _PIB),
    ("_mhz", 0.0, 100_000.0),
    ("_w", 0.0, 100_000.0),
)


def physical_range(key: str) -> tuple[float, float] | None:
    """The values a reading ``key`` can take, or None when any number will do (counters)."""
    for suffix, low, high in _RANGES:
        if key.endswith(suffix):
            return low, high
    return None


def screen(values: dict[str, Any]) -> tuple[tuple[str, float], ...]:
    """Set to None every reading in ``values`` outside its physical range, and the used or
    free memory above the total; return the (key, raw value) pairs it removed."""
    out = []
    for key, value in values.items():
        if value is None or value.__class__ not in (int, float):
            continue
        bounds = physical_range(key)
        if bounds is not None and not bounds[0] <= value <= bounds[1]:
            out.append((key, float(value)))
    total = None if any(k == "mem_total_bytes" for k, _ in out) else values.get(
        "mem_total_bytes")
    if total is not None:
        for key in ("mem_used_bytes", "mem_free_bytes", "mem_reserved_bytes"):
            value = values.get(key)
            if value is not None and value > total and all(k != key for k, _ in out):
                out.append((key, float(value)))
    for key, _ in out:
        values[key] = None
    return tuple(out)


def implausible_text(key: str, label: str, value: float) -> str:
    """One line for a tooltip: which reading is N/A and the value the driver gave."""
    shown = str(int(value)) if value.is_integer() and abs(value) < 1e21 else f"{value:.6g}"
    return tr("{name}: N/A, the driver gave {value}, which no GPU can read", name=label,
              value=shown)
