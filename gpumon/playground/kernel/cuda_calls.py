"""The CUDA calls the playground makes on its own account, none of which creates a CUDA
context on a GPU the user did not use.

A context costs hundreds of MiB on its GPU and puts the kernel in that GPU's NVML process
list, which would make the lesson's context / reserved / allocated lines wrong. How each call
was checked (torch 2.x sources, and torch's own tests):

- ``device_count()``, ``is_available()``, ``is_initialized()``: no context. torch's
  test/test_cuda_primary_ctx.py calls ``device_count()`` in ``setUp`` and then asserts
  ``torch._C._cuda_hasPrimaryContext(i)`` is False for every device.
- ``get_device_properties(i)`` (name, total memory, UUID; ``get_device_name`` reads it):
  ATen/cuda/CUDAContext.cpp ``initDeviceProperty`` calls ``cudaGetDeviceProperties(&prop, i)``
  with no device guard; device queries are answered from the table the driver builds when
  CUDA initialises, as the driver API's cuDeviceGetName / cuDeviceTotalMem / cuDeviceGetUuid
  take a device, not a context.
- ``current_device()``: ``cudaGetDevice``, a read of the thread's selected device. Only
  selecting a device creates a context: c10/cuda's ExchangeDevice test asserts that
  ``MaybeExchangeDevice(0)`` leaves ``hasPrimaryContext(0)`` False and ``ExchangeDevice(1)``
  makes ``hasPrimaryContext(1)`` True.
- ``memory_allocated(i)`` / ``memory_reserved(i)``: torch/cuda/memory.py ``memory_stats``
  returns ``{}`` before CUDA is initialised, and otherwise reads the caching allocator's
  host-side counters.
- ``torch._C._cuda_hasPrimaryContext(i)``: ``cuDevicePrimaryCtxGetState``, a query
  (pytorch PR #22229, which added it so that ``pin_memory`` would stop creating contexts).
- These DO create a context on ``i``, so they are called only where one exists already:
  ``synchronize(i)`` (torch/cuda/__init__.py: ``with torch.cuda.device(i)``, a device guard,
  which since CUDA 12 creates the primary context; torch's docs/source/notes/cuda.rst,
  PR #98986) and ``mem_get_info(i)`` (torch/csrc/cuda/shared/cudart.cpp:
  ``c10::cuda::CUDAGuard guard(device)``, then ``cudaMemGetInfo``).

``tests/playground/test_cuda_calls.py`` spies on these calls on any machine;
``tests/gpu/test_kernel_cuda.py`` checks the result through NVML's process list on a GPU.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def has_context(torch: Any, index: int) -> bool:
    """Whether this process already holds CUDA's primary context on ``cuda:index``.

    False before CUDA is initialised (no context can exist yet) and when torch lacks the
    query, so that callers then take the path that creates none.
    """
    probe = getattr(torch._C, "_cuda_hasPrimaryContext", None)
    try:
        if probe is None or not torch.cuda.is_initialized():
            return False
        return bool(probe(index))
    except Exception:  # an unknown answer must not create a context
        return False


def current_index(torch: Any) -> int:
    """The index ``'cuda'`` without a number means (``cudaGetDevice``: no context)."""
    return int(torch.cuda.current_device())


def properties(torch: Any, index: int) -> Any:
    """``get_device_properties(index)``: name, total memory, UUID (no context, see above)."""
    return torch.cuda.get_device_properties(index)


def reserved_bytes(torch: Any, index: int) -> int:
    """torch's reserved memory on ``cuda:index`` (host-side counters: no context)."""
    return int(torch.cuda.memory_reserved(index))


def free_bytes(torch: Any, index: int) -> tuple[int | None, str]:
    """Free memory on ``cuda:index`` and where the figure came from, creating no context.

    Where this process has a context there already, CUDA's own ``mem_get_info``; else NVML's
    reading of the GPU with the same UUID (NVML never creates a CUDA context); else
    ``(None, "unknown")``.
    """
    if has_context(torch, index):
        free, _total = torch.cuda.mem_get_info(index)  # a context exists: creates none
        return int(free), "cuda"
    from gpumon.telemetry.nvml.free import free_memory_by_uuid

    try:
        uuid = str(properties(torch, index).uuid)
    except Exception:  # no UUID: nothing to match NVML's GPUs by
        return None, "unknown"
    free = free_memory_by_uuid(uuid)
    return (free, "nvml") if free is not None else (None, "unknown")


def synchronize(torch: Any, indices: Iterable[int]) -> None:
    """Wait for queued work on these devices only; each must hold the action's tensors
    (and so has a context already): ``synchronize(i)`` would create one elsewhere. A device
    without a primary context is skipped (torch._C._cuda_hasPrimaryContext, the query torch's
    own test_cuda_primary_ctx.py uses): nothing can be queued there."""
    has_context = getattr(torch._C, "_cuda_hasPrimaryContext", None)
    for index in sorted(set(indices)):
        if has_context is None or has_context(index):
            torch.cuda.synchronize(index)
