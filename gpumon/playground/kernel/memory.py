"""Memory figures around an action, and the size guard that refuses what cannot fit.

torch's ``memory_allocated``/``memory_reserved`` are read only when CUDA is already
initialised, so reading them never creates a CUDA context; process RSS comes from psutil.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable
from dataclasses import replace

import psutil

from gpumon.device_ids import cuda_index
from gpumon.i18n import tr
from gpumon.playground.data.errors import Refusal
from gpumon.playground.data.outcome import MemoryReading
from gpumon.playground.kernel.cgroup import cgroup_headroom
from gpumon.units import format_bytes

#: Refuse a host tensor above this share of the memory psutil says is available.
HOST_SHARE = 0.8
#: Refuse a GPU tensor above this share of free GPU memory (incl. torch's unused cache).
GPU_SHARE = 0.9


def torch_memory_counters() -> dict[int, tuple[int, int]]:
    """``{cuda index: (allocated, reserved)}``; ``{}`` if torch is not loaded or CUDA not started.

    Safe from any thread (the sampler calls it each tick) and never imports torch itself.
    """
    torch = sys.modules.get("torch")
    cuda = getattr(torch, "cuda", None)
    if cuda is None:
        return {}
    try:
        if not cuda.is_initialized():
            return {}
        # Host-side allocator counters: no CUDA context on any GPU (cuda_calls.py).
        return {
            i: (int(cuda.memory_allocated(i)), int(cuda.memory_reserved(i)))
            for i in range(cuda.device_count())
        }
    except Exception:  # a half-imported torch or a lost GPU: no figures
        return {}


def cuda_contexts() -> frozenset[int]:
    """CUDA devices on which this process has a primary context (what nvidia-smi counts).

    Never creates one and never imports torch: empty until CUDA is initialised. torch's
    ``_cuda_hasPrimaryContext`` is how its own tests check (test_cuda_primary_ctx.py);
    without it, the current device stands for all.
    """
    torch = sys.modules.get("torch")
    cuda = getattr(torch, "cuda", None)
    try:
        if cuda is None or not cuda.is_initialized():
            return frozenset()
        has = getattr(torch._C, "_cuda_hasPrimaryContext", None)  # type: ignore[union-attr]
        if has is None:
            return frozenset({int(cuda.current_device())})
        return frozenset(i for i in range(cuda.device_count()) if has(i))
    except Exception:  # a half-imported torch or a lost GPU: none known
        return frozenset()


def nvml_process_bytes(index: int) -> int | None:
    """This process's memory on ``cuda:index`` as NVML counts it (nvidia-smi's process table),
    matched by UUID; None when torch or NVML cannot say. Creates no CUDA context (the UUID
    comes from get_device_properties, cuda_calls.py) and never imports torch."""
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    from gpumon.playground.kernel import cuda_calls
    from gpumon.telemetry.nvml.process_memory import process_memory_by_uuid

    try:
        uuid = str(cuda_calls.properties(torch, index).uuid)
    except Exception:  # no UUID: nothing to match NVML's GPUs by
        return None
    return process_memory_by_uuid(uuid, os.getpid())


def with_process_memory(readings: Iterable[MemoryReading],
                        read: Callable[[int], int | None] = nvml_process_bytes,
                        ) -> tuple[MemoryReading, ...]:
    """``readings`` with NVML's figure for this process added to each CUDA device's."""
    out = []
    for r in readings:
        index = cuda_index(r.device)
        out.append(r if index is None else replace(r, process_bytes=read(index)))
    return tuple(out)


#: Linux: writing "5" here resets this process's RSS high-water mark (VmHWM) to its RSS now.
CLEAR_REFS = "/proc/self/clear_refs"
STATUS = "/proc/self/status"


def start_peaks() -> bool:
    """Reset the peaks an action's readings give after it: torch's peak allocated memory on
    each CUDA device it has started (``reset_peak_memory_stats``; a device not started has
    held nothing yet), and this process's RSS high-water mark. Whether the RSS peak read after
    is the action's own: not where the kernel cannot reset it (no ``/proc``, not Linux)."""
    torch = sys.modules.get("torch")
    for index in torch_memory_counters():  # only where CUDA is initialised: no new context
        try:
            torch.cuda.reset_peak_memory_stats(index)  # type: ignore[union-attr]
        except Exception:
            pass
    try:
        with open(CLEAR_REFS, "w", encoding="ascii") as f:
            f.write("5")
        return True
    except OSError:
        return False


def _rss_peak() -> int | None:
    """This process's RSS high-water mark (VmHWM) in bytes; None where it cannot be read."""
    try:
        with open(STATUS, encoding="ascii") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def _cuda_peak(index: int) -> int | None:
    torch = sys.modules.get("torch")
    try:
        if torch is None or not torch.cuda.is_initialized():
            return None
        return int(torch.cuda.max_memory_allocated(index))  # host-side: no context
    except Exception:
        return None


def read_memory(devices: Iterable[str], peaks: bool = False,
                rss_peak: bool = False) -> tuple[MemoryReading, ...]:
    """Readings for the devices touched, in the given order; meta and unknown types skipped.
    ``peaks``: after an action, with each CUDA device's peak allocated since
    :func:`start_peaks`, and the RSS peak where ``rss_peak`` (start_peaks reset it)."""
    readings: list[MemoryReading] = []
    for name in devices:
        if name == "cpu":
            try:
                rss: int | None = int(psutil.Process().memory_info().rss)
            except (psutil.Error, OSError):
                rss = None
            peak = _rss_peak() if peaks and rss_peak else None
            if peak is not None and rss is not None:
                peak = max(peak, rss)  # psutil and /proc read a moment apart
            readings.append(MemoryReading("cpu", rss_bytes=rss, peak_bytes=peak))
        elif (index := cuda_index(name)) is not None:
            counters = torch_memory_counters()
            if counters or _cuda_available():
                alloc, reserved = counters.get(index, (0, 0))
                readings.append(MemoryReading(name, alloc, reserved,
                                              peak_bytes=_cuda_peak(index) if peaks else None))
    return tuple(readings)


def _cuda_available() -> bool:
    torch = sys.modules.get("torch")
    try:
        return bool(torch is not None and torch.cuda.is_available())
    except Exception:
        return False


def host_available_bytes() -> int:
    """Memory the system could give this process now: psutil's ``available``, or less when
    the process's cgroup (a container's limit) leaves less."""
    available = int(psutil.virtual_memory().available)
    headroom = cgroup_headroom()
    return available if headroom is None else min(available, headroom)


def check_fits(nbytes: int, device_type: str, device_index: int | None) -> None:
    """Raise :class:`Refusal` before allocating ``nbytes`` that would not fit on the device.

    meta holds no data, so anything fits there. For cuda, free memory is what the driver
    reports plus what torch's cache holds unused.
    """
    if nbytes <= 0 or device_type == "meta":
        return
    if device_type == "cpu":
        available = host_available_bytes()
        if nbytes > HOST_SHARE * available:
            raise Refusal(
                tr("Not allocated: {size} would not fit in the {available} of main memory "
                   "available now.", size=format_bytes(nbytes), available=format_bytes(available)),
                tr("gpumon refuses tensors that would not fit in free memory, before "
                   "allocating."),
            )
        return
    if device_type == "cuda":
        import torch

        from gpumon.playground.kernel import cuda_calls

        if not torch.cuda.is_available():
            return  # let torch raise its own "not compiled" / "no device" error
        index = cuda_calls.current_index(torch) if device_index is None else device_index
        # No context is created here on a GPU the user has not used yet (cuda_calls.py):
        # mem_get_info only where one exists, NVML's figure elsewhere, the total at worst.
        free, _where = cuda_calls.free_bytes(torch, index)
        if free is None:
            free = int(cuda_calls.properties(torch, index).total_memory)
        cached = torch.cuda.memory_reserved(index) - torch.cuda.memory_allocated(index)  # host
        usable = free + max(cached, 0)
        if nbytes > GPU_SHARE * usable:
            raise Refusal(
                tr("Not allocated: {size} would not fit in the {free} free on {device}.",
                   size=format_bytes(nbytes), free=format_bytes(usable), device=f"cuda:{index}"),
                tr("gpumon refuses tensors that would not fit in free GPU memory, before "
                   "allocating."),
            )
