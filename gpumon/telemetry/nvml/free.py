"""Free memory of one GPU by its UUID, through NVML, in a session of its own.

For the playground kernel's size guard on a GPU where it has no CUDA context yet: CUDA's own
``cudaMemGetInfo`` would create one there; NVML never creates a CUDA context.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import pynvml

from gpumon.device_ids import normalize_uuid

T = TypeVar("T")


def on_gpu(uuid: str, read: Callable[[Any], T | None]) -> T | None:
    """``read(handle)`` for the GPU whose UUID is ``uuid`` (any of NVML's or torch's
    spellings: device_ids.normalize_uuid), in an NVML session of its own; None when NVML
    cannot say (no NVML, no such GPU, an error). None for a MIG instance too: NVML's GPUs by
    index are whole GPUs, whose UUIDs are not the instance's."""
    want = normalize_uuid(uuid)
    if want is None:
        return None
    try:
        pynvml.nvmlInit()
    except (pynvml.NVMLError, OSError):
        return None
    try:
        for i in range(pynvml.nvmlDeviceGetCount()):
            handle = pynvml.nvmlDeviceGetHandleByIndex(i)
            if normalize_uuid(pynvml.nvmlDeviceGetUUID(handle)) == want:
                return read(handle)
        return None
    except (pynvml.NVMLError, OSError):
        return None
    finally:
        try:
            pynvml.nvmlShutdown()
        except (pynvml.NVMLError, OSError):
            pass


def free_memory_by_uuid(uuid: str) -> int | None:
    """Free memory in bytes of the GPU whose UUID is ``uuid`` (on_gpu), or None when NVML
    cannot say."""
    return on_gpu(uuid, lambda handle: int(pynvml.nvmlDeviceGetMemoryInfo(handle).free))
