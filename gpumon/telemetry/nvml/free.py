"""Free memory of one GPU by its UUID, through NVML, in a session of its own (session.py).

For the playground kernel's size guard on a GPU where it has no CUDA context yet: CUDA's own
``cudaMemGetInfo`` would create one there; NVML never creates a CUDA context.
"""

from __future__ import annotations

import pynvml

from gpumon.telemetry.nvml.session import nvml_session


def free_memory_by_uuid(uuid: str) -> int | None:
    """Free memory in bytes of the GPU whose UUID is ``uuid`` (any spelling; a MIG instance's
    gives None), or None when NVML cannot say."""
    with nvml_session(uuid) as gpu:
        mem = None if gpu is None else gpu.call(pynvml.nvmlDeviceGetMemoryInfo, gpu.handle)
        return None if mem is None else int(mem.free)
