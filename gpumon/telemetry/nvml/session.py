"""An NVML session of its own for one GPU by its UUID, for the code that runs where no
NvmlSource does: the playground kernel's free-memory guard (free.py), the lesson's process
memory (free.py) and its busy-watch (busy.py).

    with nvml_session(uuid) as gpu:  # None: no NVML, or no GPU with that UUID
        if gpu is not None:
            mem = gpu.call(pynvml.nvmlDeviceGetMemoryInfo, gpu.handle)

The session's calls are guarded as the monitor's readers expect (``readers.Guarded``), so
those readers serve here too: None for what the GPU or the driver does not support or could
not read, and a function the driver lacks is not called again. NVML never creates a CUDA
context, where CUDA's own calls would on a GPU the process has not used yet.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

import pynvml

from gpumon.device_ids import normalize_uuid
from gpumon.telemetry.nvml.readers import first_of

T = TypeVar("T")


class GpuSession:
    """One GPU's handle with NVML calls guarded as ``readers.Guarded`` says."""

    def __init__(self) -> None:
        self.handle: Any = None
        self._missing: set[str] = set()

    def call(self, fn: Callable[..., T], *args: Any, name: str | None = None) -> T | None:
        if (name or fn.__name__) in self._missing:
            return None
        try:
            return fn(*args)
        except pynvml.NVMLError_FunctionNotFound:
            self._missing.add(name or fn.__name__)
            return None
        except (pynvml.NVMLError, OSError):
            return None

    def first(self, fns: Sequence[Callable[..., T]], *args: Any) -> T | None:
        return first_of(self, fns, *args)

    def lacks(self, name: str) -> bool:
        return name in self._missing

    def find(self, uuid: str) -> Any:
        """The handle of the GPU whose UUID is ``uuid`` (any of NVML's or torch's spellings:
        device_ids.normalize_uuid), or None. None for a MIG instance too: NVML's GPUs by
        index are whole GPUs, whose UUIDs are not the instance's."""
        want = normalize_uuid(uuid)
        if want is None:
            return None
        for i in range(self.call(pynvml.nvmlDeviceGetCount) or 0):
            handle = self.call(pynvml.nvmlDeviceGetHandleByIndex, i)
            if handle is not None and \
                    normalize_uuid(self.call(pynvml.nvmlDeviceGetUUID, handle)) == want:
                return handle
        return None


@contextmanager
def nvml_session(uuid: str) -> Iterator[GpuSession | None]:
    """NVML started for the GPU whose UUID is ``uuid`` (GpuSession.find), and shut down at
    the end; None where NVML cannot be started or does not know the GPU."""
    try:
        pynvml.nvmlInit()
    except (pynvml.NVMLError, OSError):
        yield None
        return
    try:
        gpu = GpuSession()
        gpu.handle = gpu.find(uuid)
        yield gpu if gpu.handle is not None else None
    finally:
        try:
            pynvml.nvmlShutdown()
        except (pynvml.NVMLError, OSError):
            pass


__all__ = ["GpuSession", "nvml_session"]
