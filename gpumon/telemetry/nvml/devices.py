"""What NvmlSource reads about the machine and its devices rather than their metrics: the
driver's versions (MachineInfo), a GPU's name, UUID and PCI bus id (GpuInfo), and the MIG
devices of a GPU in MIG mode with their memory. Each through the source's guarded calls
(``readers.Guarded``); a lost GPU raises ``status.GpuLost`` as every guarded call does.
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from typing import Any, TypeVar

import pynvml

from gpumon.telemetry.model.types import GpuInfo, MachineInfo, MigSample
from gpumon.telemetry.nvml.readers import Guarded
from gpumon.telemetry.nvml.status import GpuLost, cuda_version_text
from gpumon.telemetry.procs.procinfo import self_pids

T = TypeVar("T")


def system(s: Guarded, fn: Callable[[], T]) -> T | None:
    """A call about the whole system: an "unknown error" there concerns no GPU."""
    try:
        return s.call(fn)
    except GpuLost:
        return None


def read_machine(s: Guarded) -> MachineInfo:
    return MachineInfo(
        host_name=socket.gethostname(),
        source_name="NVML",
        driver_version=system(s, pynvml.nvmlSystemGetDriverVersion),
        cuda_driver_version=cuda_version_text(
            system(s, pynvml.nvmlSystemGetCudaDriverVersion)),
        nvml_version=system(s, pynvml.nvmlSystemGetNVMLVersion),
        own_pid_namespace=len(self_pids()) > 1,  # NSpid names more than one PID
    )


def read_info(s: Guarded, index: int, handle: Any, mem: Any) -> GpuInfo:
    """GPU ``index``'s name, UUID and PCI bus id, with the total of its memory info ``mem``."""
    pci = s.call(pynvml.nvmlDeviceGetPciInfo_v3, handle)
    return GpuInfo(
        index=index,
        name=s.call(pynvml.nvmlDeviceGetName, handle) or "Unknown GPU",
        uuid=s.call(pynvml.nvmlDeviceGetUUID, handle) or "",
        pci_bus_id=pci.busId if pci is not None else "",
        mem_total_bytes=None if mem is None else mem.total,
    )


def list_migs(s: Guarded, index: int, handle: Any) -> list[tuple[Any, MigSample]]:
    """The MIG devices of GPU ``index``: each one's handle and what does not change (its
    instances, UUID and name). They change when an admin creates or destroys one."""
    found = []
    for slot in range(s.call(pynvml.nvmlDeviceGetMaxMigDeviceCount, handle) or 0):
        h = s.call(pynvml.nvmlDeviceGetMigDeviceHandleByIndex, handle, slot)
        if h is not None:
            found.append((h, MigSample(
                index, s.call(pynvml.nvmlDeviceGetGpuInstanceId, h),
                s.call(pynvml.nvmlDeviceGetComputeInstanceId, h),
                s.call(pynvml.nvmlDeviceGetUUID, h) or "",
                s.call(pynvml.nvmlDeviceGetName, h) or "MIG device")))
    return found


def with_memory(s: Guarded, devices: list[tuple[Any, MigSample]]) -> list[MigSample]:
    """Each listed MIG device with its memory now."""
    out = []
    for h, known in devices:
        mem = s.call(pynvml.nvmlDeviceGetMemoryInfo, h)
        out.append(MigSample(
            known.gpu_index, known.gpu_instance_id, known.compute_instance_id,
            known.uuid, known.name, None if mem is None else int(mem.total),
            None if mem is None else int(mem.used)))
    return out
