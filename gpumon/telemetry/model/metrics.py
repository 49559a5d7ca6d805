"""One table of the metrics gpumon shows: what NvmlSource reads (``readers.READERS``
has one entry per row, except the activity rows, ``gpm=True``, which GPM and the NVLink
counters give: nvml/gpm.py, nvml/links.py), what a GPU panel shows and where (``panel``),
what the History keeps and what the CSV files write all come from it. A new metric is a row
here, a GpuSample field and its NVML call."""

from __future__ import annotations

import math
from dataclasses import dataclass

from gpumon.i18n import N_
from gpumon.telemetry.model.types import GpuSample
from gpumon.units import MIB, NA, UNITS, format_bytes

# Memory held by this process on the GPU (is_self): a series beside the metrics, in the
# History and the CSV files; and the key of a sample's own time in History.value_at(). Here,
# not in history.py, so the terminal outputs (--once --json, --csv) and the readouts' text do
# not import numpy for a name: a GPU machine may have torch and NVML but no numpy.
SELF_MEM_KEY = "self_mem_bytes"
TIME_KEY = "timestamp_s"


@dataclass(frozen=True, slots=True)
class Metric:
    key: str  # a GpuSample field name
    label: str  # N_(): shown through tr() (readouts.py)
    unit: str  # a byte unit (GiB): the value is bytes, shown by units.format_bytes in it
    description: str
    scale: float = 1.0  # value shown = raw / scale (not for bytes)
    range_max: float | None = None  # fixed axis maximum, None = from data
    decimals: int = 0
    history: bool = True  # kept in the ring buffers and plottable
    # Where a GPU panel shows it: "graph" (its own labels above the graphs), "line" (the
    # readout line, as ``short``), "cap" (after the metric before it: "120 / 250 W"), or
    # "tooltip" (the panel's tooltip, as ``label``), "header" (in words, by the panel's
    # header), or "activity" (the panel's activity view, GPM's figures beside GPU util).
    panel: str = "tooltip"
    short: str = ""  # the name on the readout line; the label when empty
    gpm: bool = False  # read by GPM or the NVLink counters (model/activity.py), not a reader


def _activity(key: str, label: str, description: str) -> Metric:
    """A row of GPM's activity: percent of the time between two readings, 0-100."""
    return Metric(key, label, "%", description + " (GPM)", range_max=100, decimals=1,
                  panel="activity", gpm=True)


METRICS: tuple[Metric, ...] = (
    Metric("mem_used_bytes", N_("Memory used"), "GiB", "Device memory in use (all processes)",
           panel="graph"),
    Metric("mem_total_bytes", N_("Memory total"), "GiB", "Device memory the driver reports",
           panel="graph"),
    Metric("mem_reserved_bytes", N_("Memory reserved"), "GiB",
           "Memory the driver reserves for itself"),
    Metric("mem_free_bytes", N_("Memory free"), "GiB",
           "Device memory neither used nor reserved (nvidia-smi -q: Free)"),
    Metric("gpu_util_pct", N_("GPU util"), "%",
           "Share of the last sample period in which a kernel was running", range_max=100,
           panel="graph"),
    Metric("mem_util_pct", N_("Mem util"), "%",
           "Share of the last sample period in which device memory was read or written",
           range_max=100, panel="graph"),
    Metric("temperature_c", N_("Temp"), "°C", "GPU core temperature", panel="line"),
    Metric("power_w", N_("Power"), "W", "Board power draw", decimals=0, panel="line"),
    Metric("power_limit_w", N_("Power cap"), "W", "Enforced power limit", history=False,
           panel="cap"),
    Metric("fan_pct", N_("Fan"), "%", "Fan speed as a share of its maximum", range_max=100,
           panel="line"),
    Metric("sm_clock_mhz", N_("SM clock"), "MHz", "Streaming multiprocessor clock", panel="line",
           short="SM"),
    Metric("mem_clock_mhz", N_("Mem clock"), "MHz", "Memory clock", panel="line", short=N_("Mem")),
    Metric("pcie_rx_bytes_per_s", N_("PCIe RX"), "MiB/s", "PCIe receive throughput", scale=MIB,
           decimals=1),
    Metric("pcie_tx_bytes_per_s", N_("PCIe TX"), "MiB/s", "PCIe transmit throughput", scale=MIB,
           decimals=1),
    Metric("encoder_util_pct", N_("Encoder"), "%", "Video encoder utilization", range_max=100),
    Metric("decoder_util_pct", N_("Decoder"), "%", "Video decoder utilization", range_max=100),
    Metric("clocks_event_reasons", N_("Clock event reasons"), "",
           "Why the clocks are held down: NVML's clock event reasons bitmask (health.py "
           "decodes it; the panel's header says it in words)", panel="header"),
    Metric("energy_mj", N_("Energy"), "kJ", "Energy used since the driver loaded",
           scale=1000.0, decimals=1),
    Metric("mem_temperature_c", N_("Memory temp"), "°C", "Device memory temperature"),
    _activity("graphics_active_pct", N_("Graphics activity"),
              "Share of the time a graphics or compute engine was busy"),
    _activity("sm_active_pct", N_("SM activity"),
              "Share of the time the SMs had at least one warp, averaged over the SMs"),
    _activity("sm_occupancy_pct", N_("SM occupancy"),
              "Warps resident on the SMs as a share of the most they can hold"),
    _activity("tensor_active_pct", N_("Tensor activity"),
              "Share of the time any tensor-core pipe was busy"),
    _activity("tensor_hmma_active_pct", N_("Tensor HMMA"),
              "Share of the time the fp16/bf16 tensor pipe (HMMA) was busy"),
    _activity("tensor_imma_active_pct", N_("Tensor IMMA"),
              "Share of the time the integer tensor pipe (IMMA) was busy"),
    _activity("tensor_dfma_active_pct", N_("Tensor DFMA"),
              "Share of the time the fp64 tensor pipe (DFMA) was busy"),
    _activity("dram_active_pct", N_("DRAM activity"),
              "Share of the time device memory was sending or receiving data"),
    _activity("fp64_active_pct", N_("FP64 pipe"), "Share of the time the FP64 pipe was busy"),
    _activity("fp32_active_pct", N_("FP32 pipe"), "Share of the time the FP32 pipe was busy"),
    _activity("fp16_active_pct", N_("FP16 pipe"), "Share of the time the FP16 pipe was busy"),
    _activity("int_active_pct", N_("Integer pipe"),
              "Share of the time the integer pipe was busy"),
    _activity("nvdec_active_pct", N_("NVDEC"), "Video decoders busy, mean over the engines"),
    _activity("nvjpg_active_pct", N_("NVJPG"), "JPEG decoders busy, mean over the engines"),
    _activity("nvofa_active_pct", N_("NVOFA"),
              "Optical-flow accelerators busy, mean over the engines"),
    _activity("nvenc_active_pct", N_("NVENC"), "Video encoders busy, mean over the engines"),
    Metric("nvlink_rx_bytes_per_s", N_("NVLink RX"), "MiB/s",
           "NVLink data received, all links", scale=MIB, decimals=1, panel="activity",
           gpm=True),
    Metric("nvlink_tx_bytes_per_s", N_("NVLink TX"), "MiB/s",
           "NVLink data sent, all links", scale=MIB, decimals=1, panel="activity", gpm=True),
)

BY_KEY: dict[str, Metric] = {m.key: m for m in METRICS}

#: GpuSample (and MigSample) fields of the activity, the table's GPM rows in percent of the period
#: between two readings (GPM's own 0-100 scale). Graphics activity: a graphics or compute engine
#: was busy; SM activity: the share of SMs with at least one warp; occupancy: resident warps over
#: the SMs' maximum; tensor: any tensor pipe, then by kind (HMMA: fp16/bf16, IMMA: int8, DFMA:
#: fp64); DRAM: the memory interface; FP64/FP32/FP16 and integer: the non-tensor pipes; NVDEC,
#: NVJPG, NVOFA, NVENC: the mean over the engines of that kind the GPU has.
ACTIVITY_PCT_KEYS: tuple[str, ...] = tuple(m.key for m in METRICS
                                           if m.gpm and m.key.endswith("_pct"))
#: NVLink data rates of all links together (bytes/s): GPM's where the GPU has GPM, else the
#: sum of the links' counters (``LinkRate``). PCIe's rates are the GPU's pcie_*_bytes_per_s
#: (GPM's where it has GPM: they cost no wait, unlike nvmlDeviceGetPcieThroughput).
NVLINK_KEYS: tuple[str, ...] = tuple(m.key for m in METRICS
                                     if m.gpm and not m.key.endswith("_pct"))
ACTIVITY_KEYS: tuple[str, ...] = ACTIVITY_PCT_KEYS + NVLINK_KEYS
HISTORY_KEYS: tuple[str, ...] = tuple(m.key for m in METRICS if m.history)


def value_of(sample: GpuSample | None, key: str) -> float | None:
    """The raw value of a metric in a sample, or None when unsupported or absent."""
    if sample is None or sample.lost:
        return None
    v = getattr(sample, key)
    return None if v is None else float(v)


def format_value(sample: GpuSample | None, key: str, with_unit: bool = True) -> str:
    """A metric of a sample as text, ``N/A`` when the GPU does not report it."""
    return format_reading(value_of(sample, key), key, with_unit)


def format_reading(v: float | None, key: str, with_unit: bool = True) -> str:
    """A metric's value as text in the metric's unit (memory: ``12.34 GiB``, by
    units.format_bytes); ``N/A`` for None or nan."""
    if v is None or not math.isfinite(v):
        return NA
    m = BY_KEY[key]
    if m.unit in UNITS:
        return format_bytes(v, m.unit, suffix=with_unit)
    text = f"{v / m.scale:.{m.decimals}f}"
    return f"{text} {m.unit}" if with_unit and m.unit else text
