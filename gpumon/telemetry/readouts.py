"""The text of the monitor's readouts: the hover line under the toolbar and the extra
readouts of a GPU panel's tooltip. Qt-free: the views only put these strings in labels.
"""

from __future__ import annotations

import math
import time

from gpumon.telemetry.history import TIME_KEY
from gpumon.telemetry.metrics import BY_KEY, NA, format_bytes, format_value, value_of
from gpumon.telemetry.types import GpuSample

READOUT_KEYS = ("mem_used_bytes", "gpu_util_pct", "mem_util_pct", "temperature_c", "power_w")
EXTRA_KEYS = ("pcie_rx_bytes_per_s", "pcie_tx_bytes_per_s", "encoder_util_pct",
              "decoder_util_pct")


def format_readout(gpu: int, t_now: float, values: dict[str, float]) -> str:
    """'GPU 0 at 14:03:12 (-12.3 s): Memory used 12.34 GiB · GPU util 45 % · …'."""
    if not values:
        return f"GPU {gpu}: no data at this time"
    t = values.get(TIME_KEY, math.nan)
    clock = time.strftime("%H:%M:%S", time.localtime(t)) if math.isfinite(t) else "?"
    parts = []
    for key in READOUT_KEYS:
        v = values.get(key, math.nan)
        m = BY_KEY[key]
        text = "N/A" if not math.isfinite(v) else f"{v / m.scale:.{m.decimals}f} {m.unit}"
        parts.append(f"{m.label} {text}")
    for key, v in values.items():
        if key in BY_KEY or key == TIME_KEY or not math.isfinite(v):
            continue
        label = key.removesuffix("_bytes").replace("_", " ")
        parts.append(f"{label} {format_bytes(v) if key.endswith('_bytes') else f'{v:g}'}")
    return f"GPU {gpu} at {clock} ({t - t_now:+.1f} s): " + " · ".join(parts)


def extra_readouts(s: GpuSample | None) -> str:
    """The readouts the panel has no room for, one per line: memory free and reserved,
    PCIe RX/TX, encoder/decoder utilization (N/A where the GPU does not report them)."""
    free = value_of(s, "mem_free_bytes")
    lines = [f"Memory free: {NA if free is None else format_bytes(free)}",
             f"Memory reserved: {format_value(s, 'mem_reserved_bytes')}"]
    for key in EXTRA_KEYS:
        lines.append(f"{BY_KEY[key].label}: {format_value(s, key)}")
    return "\n".join(lines)
