"""The devices the playground offers, and how CUDA's numbering maps to NVML's.

NVML numbers GPUs in PCI bus order; CUDA puts the fastest first by default and honours
``CUDA_VISIBLE_DEVICES``, so ``cuda:0`` need not be NVML GPU 0. They are matched by UUID
(gpumon/device_ids.py reads every spelling of one).
Plain data and pure helpers; torch's side (listing and resolving devices) is
kernel/torch_devices.py.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpumon.device_ids import normalize_uuid
from gpumon.i18n import tr


def match_cuda_to_nvml(cuda_uuids: list[str], nvml_uuids: list[str]) -> dict[int, int | None]:
    """Map each cuda index to the NVML index with the same UUID, or None when there is none.

    Works for a ``CUDA_VISIBLE_DEVICES`` subset and for reordered lists; an unreadable UUID
    on either side matches nothing rather than guessing by position.
    """
    by_uuid: dict[str, int] = {}
    for nvml_index, raw in enumerate(nvml_uuids):
        key = normalize_uuid(raw)
        if key is not None:
            by_uuid.setdefault(key, nvml_index)
    result: dict[int, int | None] = {}
    for cuda_index, raw in enumerate(cuda_uuids):
        key = normalize_uuid(raw)
        result[cuda_index] = None if key is None else by_uuid.get(key)
    return result


def cuda_index_problem(index: int, cuda_count: int) -> str | None:
    """A sentence when ``cuda:index`` does not exist among ``cuda_count`` devices, else None."""
    if 0 <= index < cuda_count:
        return None
    if cuda_count == 1:
        return tr("There is no cuda:{index}: PyTorch sees 1 CUDA device, cuda:0.", index=index)
    return tr("There is no cuda:{index}: PyTorch sees {count} CUDA devices, cuda:0 to "
              "cuda:{last}.", index=index, count=cuda_count, last=cuda_count - 1)


def no_such_gpu() -> str:
    """The explanation under a refused cuda index, in the chosen language."""
    return tr("There is no GPU with that index: torch numbers the visible GPUs from 0 "
              "(CUDA_VISIBLE_DEVICES can hide some).")


def cpu_option() -> DeviceOption:
    """``cpu``, labelled in the chosen language."""
    return DeviceOption("cpu", tr("cpu — main memory"))


@dataclass(frozen=True)
class DeviceOption:
    """A device a user can pick, with what the UI needs to label it and find its graph."""

    name: str  # "cpu", "cuda:0", "meta"
    label: str  # "cuda:0 — NVIDIA H100 (80 GiB)"
    uuid: str | None = None  # torch's UUID of a cuda device (its NVML GPU is matched by it)
    total_memory_bytes: int | None = None
    available: bool = True  # False: offered although torch cannot use it (device_offer.py)
