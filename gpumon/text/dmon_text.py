"""``gpumon dmon``: one line per GPU per reading, as ``nvidia-smi dmon --gpm-metrics`` prints
them: a ``#`` header of short names and units, then right-aligned integers, ``-`` where the
GPU does not report a value (its activity_state says why: no GPM, warming up, turned off).

Columns: power, GPU temperature, GPU-Util (NVML's), then GPM's graphics and SM activity, SM
occupancy, tensor and DRAM activity, the FP64/FP32/FP16 pipes (percent), and the PCIe and
NVLink rates in MiB/s. A GPU in MIG mode is followed by one row per GPU instance, named
``GPU/GI`` (``0/1``): GPM reads MIG per instance.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from gpumon.i18n import tr
from gpumon.telemetry.model.types import GpuSample, MigSample, Snapshot
from gpumon.units import MIB

Row = GpuSample | MigSample


def _field(key: str, scale: float = 1.0) -> Callable[[Row], float | None]:
    def get(s: Row) -> float | None:
        v = getattr(s, key, None)
        return None if v is None else float(v) / scale
    return get


#: (name, unit, value): nvidia-smi dmon's short names where it has them (pwr, gtemp, sm).
COLUMNS: tuple[tuple[str, str, Callable[[Row], float | None]], ...] = (
    ("pwr", "W", _field("power_w")),
    ("gtemp", "C", _field("temperature_c")),
    ("sm", "%", _field("gpu_util_pct")),
    ("gract", "%", _field("graphics_active_pct")),
    ("smact", "%", _field("sm_active_pct")),
    ("smocc", "%", _field("sm_occupancy_pct")),
    ("tensor", "%", _field("tensor_active_pct")),
    ("dram", "%", _field("dram_active_pct")),
    ("fp64", "%", _field("fp64_active_pct")),
    ("fp32", "%", _field("fp32_active_pct")),
    ("fp16", "%", _field("fp16_active_pct")),
    ("pcitx", "MiB/s", _field("pcie_tx_bytes_per_s", MIB)),
    ("pcirx", "MiB/s", _field("pcie_rx_bytes_per_s", MIB)),
    ("nvltx", "MiB/s", _field("nvlink_tx_bytes_per_s", MIB)),
    ("nvlrx", "MiB/s", _field("nvlink_rx_bytes_per_s", MIB)),
)
_W = 7  # each column's width: "100.0" fits, "65536" fits
_ID_W = 5


def header(simulated: bool = False) -> str:
    """The two ``#`` lines: names, then units (after a third that says so when the GPUs are
    simulated)."""
    names = "# gpu".ljust(_ID_W + 1) + "".join(n.rjust(_W) for n, _, _ in COLUMNS)
    units = "# Idx".ljust(_ID_W + 1) + "".join(u.rjust(_W) for _, u, _ in COLUMNS)
    note = "# " + tr("SIMULATED: these GPUs are simulated; no real GPU was read.") + "\n"
    return (note if simulated else "") + names + "\n" + units


def _text(v: float | None) -> str:
    return "-" if v is None or not math.isfinite(v) else f"{v:.0f}"


def _line(name: str, s: Row) -> str:
    return name.rjust(_ID_W) + " " + "".join(_text(get(s)).rjust(_W) for _, _, get in COLUMNS)


def rows(snap: Snapshot) -> str:
    """One line per GPU of ``snap`` (a lost GPU: its index and ``LOST``), each GPU instance of
    a GPU in MIG mode after it."""
    out: list[str] = []
    for s in snap.samples:
        if s.lost:
            out.append(str(s.index).rjust(_ID_W) + " " + "LOST".rjust(_W))
            continue
        out.append(_line(str(s.index), s))
        seen: set[int] = set()
        for m in snap.migs:
            gi = m.gpu_instance_id
            if m.gpu_index == s.index and gi is not None and gi not in seen:
                seen.add(gi)
                out.append(_line(f"{s.index}/{gi}", m))
    return "\n".join(out)
