"""Free memory of one GPU by its UUID, through NVML, in a session of its own.

For the playground kernel's size guard on a GPU where it has no CUDA context yet: CUDA's own
``cudaMemGetInfo`` would create one there; NVML never creates a CUDA context.
"""

from __future__ import annotations

import pynvml


def free_memory_by_uuid(uuid: str) -> int | None:
    """Free memory in bytes of the GPU whose UUID is ``uuid`` (any of NVML's or torch's
    spellings), or None when NVML cannot say."""
    want = _uuid_digits(uuid)
    if want is None:
        return None
    try:
        pynvml.nvmlInit()
    except (pynvml.NVMLError, OSError):
        return None
    try:
        for i in range(pynvml.nvmlDeviceGetCount()):
            handle = pynvml.nvmlDeviceGetHandleByIndex(i)
            if _uuid_digits(pynvml.nvmlDeviceGetUUID(handle)) == want:
                return int(pynvml.nvmlDeviceGetMemoryInfo(handle).free)
        return None
    except (pynvml.NVMLError, OSError):
        return None
    finally:
        try:
            pynvml.nvmlShutdown()
        except (pynvml.NVMLError, OSError):
            pass


def _uuid_digits(text: str | bytes) -> str | None:
    """The 32 hex digits of ``GPU-5f3c...``, ``5f3c...`` or ``{5f3c-...}``; None otherwise."""
    s = (text.decode() if isinstance(text, bytes) else str(text)).strip().lower()
    s = s.removeprefix("gpu-").strip("{}").replace("-", "")
    return s if len(s) == 32 and all(c in "0123456789abcdef" for c in s) else None
