"""GPM-like activity and a PCIe topology for the simulated GPUs (simulated.py).

Only the Hopper models (H100, H200) have GPM, as on real GPUs; the others say
``UNSUPPORTED``, so a demo shows both a GPU with activity and one that explains why it has
none. The figures follow the workload phase: a training phase looks like the H200 measured
under a bf16 matmul loop (SM activity ~96 % of GPU-Util, occupancy ~14 %, tensor ~94 % of
the SM activity, DRAM ~17 %), inference is memory-bound, data loading keeps the JPEG
decoders busy. Every value is a pure function of its arguments.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from gpumon.telemetry.model.activity import ActivityState
from gpumon.telemetry.model.metrics import ACTIVITY_KEYS
from gpumon.telemetry.model.topology import GpuPlace, Topology, cpu_list
from gpumon.telemetry.model.types import GpuInfo

GPM_MODELS = ("H100", "H200")  # Hopper: the GPUs NVML's GPM answers for
# Not a fault's to switch off one by one: whether a GPU has activity is its model's.
NOT_FAULTABLE = ("activity_state", "nvlink_links", *ACTIVITY_KEYS)


@dataclass(frozen=True, slots=True)
class _Profile:
    sm: float  # SM activity per GPU-Util
    occupancy: float  # % while busy
    tensor: float  # tensor activity per SM activity
    int8: float  # the share of the tensor work in int8 (IMMA), the rest fp16/bf16 (HMMA)
    dram: float  # DRAM activity per GPU-Util
    fp32: float  # FP32 pipe per GPU-Util
    jpeg: float  # NVJPG activity while busy (%)


PROFILES: dict[str, _Profile] = {
    "idle": _Profile(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0),
    "training": _Profile(0.964, 14.3, 0.971, 0.0, 0.166, 0.02, 0.0),
    "inference": _Profile(0.72, 31.0, 0.52, 0.35, 0.58, 0.06, 0.0),
    "data loading": _Profile(0.45, 9.0, 0.08, 0.0, 0.22, 0.15, 38.0),
}


def has_gpm(name: str) -> bool:
    return any(model in name for model in GPM_MODELS)


def activity(name: str, phase: str, util: float, wobble: float, gpm: bool) -> dict[str, object]:
    """The activity fields of a simulated GPU ``name`` at GPU-Util ``util`` in ``phase``;
    ``wobble`` in [-1, 1] moves occupancy a little; ``gpm``: reading is on (``--no-gpm``)."""
    state = (ActivityState.OFF if not gpm else
             ActivityState.READING if has_gpm(name) else ActivityState.UNSUPPORTED)
    values: dict[str, object] = dict.fromkeys(ACTIVITY_KEYS)
    values["activity_state"] = state
    if state is not ActivityState.READING:
        return values
    p = PROFILES.get(phase, PROFILES["idle"])
    busy = util > 5.0
    sm = min(100.0, util * p.sm)
    tensor = sm * p.tensor
    values.update(
        graphics_active_pct=round(util, 1),
        sm_active_pct=round(sm, 1),
        sm_occupancy_pct=round(max(0.0, p.occupancy * (1 + 0.08 * wobble)), 1) if busy else 0.0,
        tensor_active_pct=round(tensor, 1),
        tensor_hmma_active_pct=round(tensor * (1 - p.int8), 1),
        tensor_imma_active_pct=round(tensor * p.int8, 1),
        tensor_dfma_active_pct=0.0,
        dram_active_pct=round(min(100.0, util * p.dram), 1),
        fp64_active_pct=0.0,
        fp32_active_pct=round(util * p.fp32, 1),
        fp16_active_pct=round(util * p.fp32 / 4, 1),
        int_active_pct=round(util * 0.03, 1),
        nvdec_active_pct=0.0,
        nvjpg_active_pct=p.jpeg if busy else 0.0,
        nvofa_active_pct=0.0,
        nvenc_active_pct=0.0,
    )
    return values


def topology(gpus: Sequence[GpuInfo], read_at_s: float) -> Topology:
    """A two-socket PCIe machine without NVLink: the first half of the GPUs on NUMA node 0,
    the rest on node 1 (16 CPUs each); NODE within a node, SYS across; P2P OK within."""
    node = [0 if i < (len(gpus) + 1) // 2 else 1 for i in range(len(gpus))]
    places = tuple(GpuPlace(g.index, g.pci_bus_id, (), None,
                            cpu_list(range(16 * node[i], 16 * node[i] + 16)), str(node[i]), None)
                   for i, g in enumerate(gpus))
    paths = tuple(tuple("X" if i == j else "NODE" if node[i] == node[j] else "SYS"
                        for j in range(len(gpus))) for i in range(len(gpus)))
    p2p = tuple(tuple("X" if i == j else "OK" if node[i] == node[j] else "CNS"
                      for j in range(len(gpus))) for i in range(len(gpus)))
    return Topology(places, paths, p2p, read_at_s)
