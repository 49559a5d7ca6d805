"""GPU activity: how busy the parts of a GPU are, beyond GPU-Util, as NVML's GPM (GPU
Performance Monitoring, Hopper and newer) measures it, and why a GPU has none.

GPU-Util says only that a kernel ran at some time in the sample period; the activity fields
say how much of the GPU worked: the share of SMs busy (``sm_active_pct``), the warps
resident per SM against the most it holds (``sm_occupancy_pct``), the tensor cores, the
memory interface, the FP pipes. On a real H200 under a bf16 matmul loop: GPU-Util 100 %,
SM activity 96.4 %, occupancy 14.3 %, tensor 93.6 %, DRAM 16.6 % (docs/gpu-activity.md).

The values are GpuSample (and MigSample) fields, units in their names, ``None`` when not
read; ``activity_state`` says why a GPU's activity fields are empty, in one line for a
view (``why_empty``). Per-link NVLink rates are ``LinkRate`` values.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

from gpumon.i18n import N_, tr

#: A one-shot reading (``--once``, ``gpumon dmon``'s first line) waits this long after GPM's
#: first sample before the reading it shows: GPM needs two samples over 0.1 s apart, and a
#: real H200 gave every metric at 0.5 s (DRAM was NaN at 0.05 s).
FIRST_READING_WAIT_S = 0.5


class ActivityState(enum.Enum):
    """Whether a GPU's activity fields were read on this tick, and if not, why."""

    READING = "reading"  # read this tick (a metric the GPU does not answer is still None)
    WARMING = "warming"  # the first reading: GPM needs two samples >= 0.1 s apart
    OFF = "off"  # turned off (--no-gpm), e.g. because DCGM's profiling uses the counters
    UNSUPPORTED = "unsupported"  # the GPU has no GPM (older than Hopper)
    NO_DRIVER = "no_driver"  # the driver's NVML has no GPM functions
    MIG = "mig"  # in MIG mode: read per GPU instance (the MIG devices), not for the GPU
    FAILED = "failed"  # a GPM call failed on this tick (failed_reads says which)


#: Why the activity fields are empty, one line per state (through tr()).
WHY_EMPTY: dict[ActivityState, str] = {
    ActivityState.READING: "",
    ActivityState.WARMING: N_("Activity needs two readings at least 0.1 s apart: it appears "
                              "with the next one."),
    ActivityState.OFF: N_("Activity (GPM) reading is off (--no-gpm)."),
    ActivityState.UNSUPPORTED: N_("This GPU has no GPM counters: activity needs a Hopper "
                                  "(H100) or newer data-center GPU."),
    ActivityState.NO_DRIVER: N_("This driver has no GPM functions: activity needs a newer "
                                "NVIDIA driver."),
    ActivityState.MIG: N_("In MIG mode activity is read for each GPU instance: see the MIG "
                          "devices."),
    ActivityState.FAILED: N_("The GPU's performance counters did not answer on this reading."),
}


def warming(snap: Any) -> bool:
    """Whether any GPU or GPU instance of a Snapshot waits for GPM's second sample."""
    return any(x.activity_state is ActivityState.WARMING for x in (*snap.samples, *snap.migs))


def why_empty(state: ActivityState | None) -> str:
    """One translated line: why a GPU shows no activity; "" while it is read, and for a
    source that does not say (None: a Prometheus server, where a missing series is all)."""
    if state is None:
        return ""
    text = WHY_EMPTY[state]
    return tr(text) if text else ""


#: GpuSample fields of the activity, in percent of the period between two readings (GPM's
#: own 0-100 scale). Graphics activity: a graphics or compute engine was busy; SM activity:
#: the share of SMs with at least one warp; occupancy: resident warps over the SMs' maximum;
#: tensor: any tensor pipe, then by kind (HMMA: fp16/bf16, IMMA: int8, DFMA: fp64); DRAM:
#: the memory interface; FP64/FP32/FP16 and integer: the non-tensor pipes; NVDEC, NVJPG,
#: NVOFA, NVENC: the mean over the engines of that kind the GPU has.
ACTIVITY_PCT_KEYS: tuple[str, ...] = (
    "graphics_active_pct", "sm_active_pct", "sm_occupancy_pct", "tensor_active_pct",
    "tensor_hmma_active_pct", "tensor_imma_active_pct", "tensor_dfma_active_pct",
    "dram_active_pct", "fp64_active_pct", "fp32_active_pct", "fp16_active_pct",
    "int_active_pct", "nvdec_active_pct", "nvjpg_active_pct", "nvofa_active_pct",
    "nvenc_active_pct",
)
#: NVLink data rates of all links together (bytes/s): GPM's where the GPU has GPM, else the
#: sum of the links' counters (``LinkRate``). PCIe's rates are the GPU's pcie_*_bytes_per_s
#: (GPM's where it has GPM: they cost no wait, unlike nvmlDeviceGetPcieThroughput).
NVLINK_KEYS: tuple[str, ...] = ("nvlink_rx_bytes_per_s", "nvlink_tx_bytes_per_s")
ACTIVITY_KEYS: tuple[str, ...] = ACTIVITY_PCT_KEYS + NVLINK_KEYS


@dataclass(frozen=True, slots=True)
class LinkRate:
    """One active NVLink of a GPU on one tick: data received and sent (bytes/s), from the
    link's data counters (NVML fields 138/139) between two readings; None on the first."""

    link: int
    rx_bytes_per_s: float | None = None
    tx_bytes_per_s: float | None = None
