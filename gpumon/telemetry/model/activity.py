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

from gpumon.i18n import N_, sentences, tr

#: A one-shot reading (``--once``, ``gpumon dmon``'s first line) waits this long after GPM's
#: first sample before the reading it shows: GPM needs two samples over 0.1 s apart, and a
#: real H200 gave every metric at 0.5 s (DRAM was NaN at 0.05 s).
FIRST_READING_WAIT_S = 0.5


class ActivityState(enum.Enum):
    """Whether a GPU's activity fields were read on this tick, and if not, why."""

    READING = "reading"  # read this tick (a metric the GPU does not answer is still None)
    WARMING = "warming"  # the first reading: GPM needs two samples >= 0.1 s apart
    OFF = "off"  # turned off (--no-gpm), e.g. because DCGM's profiling uses the counters
    UNSUPPORTED = "unsupported"  # the GPU has no GPM (older than Hopper: RTX 30/40, A100)
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
                                  "(H100) or newer GPU."),
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


# --- what the figures mean, in one or two sentences ---------------------------------------
# A few rules, each a threshold on the current values; the first that applies says what
# works, and a low occupancy under busy SMs adds why that is no fault. Where none applies
# nothing is said (a view then shows the numbers alone). docs/gpu-activity.md lists them.
IDLE_PCT = 5.0  # GPU-Util and SM activity both below: the GPU is idle or nearly so
FEW_SMS_SHARE = 0.25  # SM activity below this share of GPU-Util (from 20 %): tiny kernels
FEW_SMS_FROM_PCT = 20.0
LAUNCH_WAIT_BELOW_PCT = 80.0  # GPU-Util below this, with few SMs busy: it waits for launches
MEMORY_BOUND_PCT = 60.0  # DRAM activity from here: moving data sets the pace
TENSOR_PCT = 50.0  # tensor activity from here: the tensor cores do the work
NO_TENSOR_PCT = 5.0  # tensor activity below, with SM activity from BUSY_SM_PCT / 2
BUSY_SM_PCT = 80.0  # SM activity from here counts as busy SMs
LOW_OCCUPANCY_PCT = 25.0  # occupancy below this, with busy SMs: few warps to switch between

IDLE = N_("GPU-Util {util}, SM activity {sm}: the GPU is idle or nearly so.")
FEW_SMS = N_("GPU-Util {util} but SM activity {sm}: each GPU kernel keeps few SMs busy, as "
             "tiny ones do while the GPU mostly waits for their launches.")
FEW_SMS_NO_WAIT = N_("GPU-Util {util} but SM activity {sm}: the GPU kernels that ran kept few "
                     "SMs busy, as tiny ones or ones with few blocks do.")
MEMORY_BOUND = N_("DRAM {dram}: memory-bound, moving data sets the pace, not arithmetic.")
TENSOR = N_("SM activity {sm}, tensor {tensor}: the tensor cores do the work.")
NO_TENSOR = N_("SM activity {sm}, tensor {tensor}: the SMs work on their ordinary pipes, not "
               "on the tensor cores.")
SM_SHARE = N_("GPU-Util {util}, SM activity {sm}: while GPU kernels ran, about {share} of "
              "the SMs had work.")
LOW_OCCUPANCY = N_("Occupancy {occupancy}: few warps per SM, normal for large matrix "
                   "products.")
LOW_OCCUPANCY_MEMORY = N_("Occupancy {occupancy}: few warps per SM to switch between while "
                          "they wait for memory, which may be what holds this work back.")


def percent(value: float) -> str:
    """A percentage as the sentences write it: whole numbers, one decimal for what would
    round to 0 or 1 (``96 %``, ``0.2 %``: an H200's SM activity under tiny products)."""
    return f"{value:.1f} %" if 0 < value < 0.95 else f"{value:.0f} %"


def meaning(util: float | None, sm: float | None, occupancy: float | None = None,
            tensor: float | None = None, dram: float | None = None) -> str:
    """What GPU-Util ``util`` and GPM's SM activity, occupancy, tensor and DRAM activity (in
    percent; None: not known) mean together, in one or two translated sentences; "" where
    the figures say nothing sure (or SM activity is not known: ``why_empty`` says why).

    The first of these that holds says what works: both GPU-Util and SM activity under 5 %:
    idle; SM activity under a quarter of GPU-Util (GPU-Util 20 % or more): kernels that keep
    few SMs busy, and, with GPU-Util under 80 %, a GPU that waits for their launches (an
    H200 running 10 x 10 products in a Python loop: 36 % and 0.24 %; at 100 % a kernel ran
    all the time, so nothing waited); DRAM 60 % or more: memory-bound; tensor 50 % or more:
    the tensor cores do the work; SM activity 40 % or more with tensor under 5 %: the
    ordinary pipes do it; else the share of SMs busy while kernels ran (SM activity over
    GPU-Util). Then, with SM activity 80 % or more and occupancy under 25 %: with tensor
    50 % or more, that occupancy is normal for large products (an H200's bf16 8192 x 8192
    product: occupancy 14.3 % at SM activity 96.4 %, tensor 93.6 %); with DRAM 60 % or more
    and the tensor cores not busy, it may be what holds a memory-bound kernel back (fewer
    warps to switch between while they wait); otherwise nothing is said of it."""
    if sm is None:
        return ""
    first = ""
    values = {"util": percent(util or 0.0), "sm": percent(sm)}
    if util is not None and util < IDLE_PCT and sm < IDLE_PCT:
        first = tr(IDLE, **values)
    elif util is not None and util >= FEW_SMS_FROM_PCT and sm < FEW_SMS_SHARE * util:
        # the occupancy of kernels this small says nothing
        return tr(FEW_SMS if util < LAUNCH_WAIT_BELOW_PCT else FEW_SMS_NO_WAIT, **values)
    elif dram is not None and dram >= MEMORY_BOUND_PCT:
        first = tr(MEMORY_BOUND, dram=percent(dram))
    elif tensor is not None and tensor >= TENSOR_PCT:
        first = tr(TENSOR, tensor=percent(tensor), **values)
    elif tensor is not None and tensor < NO_TENSOR_PCT and sm >= BUSY_SM_PCT / 2:
        first = tr(NO_TENSOR, tensor=percent(tensor), **values)
    elif util is not None and util >= IDLE_PCT:
        first = tr(SM_SHARE, share=percent(min(100.0, 100.0 * sm / util)), **values)
    if occupancy is None or occupancy >= LOW_OCCUPANCY_PCT or sm < BUSY_SM_PCT:
        return first
    if tensor is not None and tensor >= TENSOR_PCT:
        return sentences(first, tr(LOW_OCCUPANCY, occupancy=percent(occupancy)))
    if dram is not None and dram >= MEMORY_BOUND_PCT:
        return sentences(first, tr(LOW_OCCUPANCY_MEMORY, occupancy=percent(occupancy)))
    return first


def meaning_of(sample: Any) -> str:
    """``meaning`` of a GpuSample's current values ("" for None or a lost GPU)."""
    if sample is None or getattr(sample, "lost", False):
        return ""
    return meaning(sample.gpu_util_pct, sample.sm_active_pct, sample.sm_occupancy_pct,
                   sample.tensor_active_pct, sample.dram_active_pct)



@dataclass(frozen=True, slots=True)
class LinkRate:
    """One active NVLink of a GPU on one tick: data received and sent (bytes/s), from the
    link's data counters (NVML fields 138/139) between two readings; None on the first."""

    link: int
    rx_bytes_per_s: float | None = None
    tx_bytes_per_s: float | None = None
