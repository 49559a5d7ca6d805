"""One process's GPU memory as NVML counts it (nvidia-smi's process table), on the GPU with a
given UUID, in an NVML session of its own.

For the lesson's memory step, which prints it beside torch's two counters: the process figure
is about the CUDA context plus what torch reserved. NVML never creates a CUDA context.
"""

from __future__ import annotations

from typing import Any

import pynvml

from gpumon.telemetry.nvml.free import on_gpu
from gpumon.telemetry.nvml.readers import NOT_AVAILABLE

_LISTS = (("nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetComputeRunningProcesses_v2"),
          ("nvmlDeviceGetGraphicsRunningProcesses_v3", "nvmlDeviceGetGraphicsRunningProcesses_v2"))


def _listed(handle: Any, names: tuple[str, ...]) -> list[Any]:
    """The first of NVML's process lists ``names`` that this driver answers; [] if none does."""
    for name in names:
        fn = getattr(pynvml, name, None)
        if fn is None:
            continue
        try:
            return list(fn(handle))
        except pynvml.NVMLError_FunctionNotFound:  # an older driver: its older entry point
            continue
    return []


def process_memory_by_uuid(uuid: str, pid: int) -> int | None:
    """Bytes of GPU memory NVML counts for process ``pid`` on the GPU whose UUID is ``uuid``
    (any spelling: device_ids.normalize_uuid); None when NVML cannot say: no NVML, no GPU with
    that UUID, ``pid`` not in its lists (in a container whose PIDs are not the host's, NVML
    lists the host's), or no figure for it. A PID in both lists counts once, its larger figure,
    as gpumon's process table does."""
    def read(handle: Any) -> int | None:
        used = [p.usedGpuMemory for names in _LISTS for p in _listed(handle, names)
                if p.pid == pid]
        known = [int(m) for m in used if m is not None and m != NOT_AVAILABLE]
        return max(known, default=None)

    return on_gpu(uuid, read)
