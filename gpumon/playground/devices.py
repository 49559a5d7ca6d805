"""The devices the playground offers, and how CUDA's numbering maps to NVML's.

NVML numbers GPUs in PCI bus order; CUDA puts the fastest first by default and honours
``CUDA_VISIBLE_DEVICES``, so ``cuda:0`` need not be NVML GPU 0. They are matched by UUID.
The pure helpers here import nothing heavy; :func:`list_devices` and :func:`resolve_device`
import torch when called (from the engine's thread).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpumon.i18n import tr
from gpumon.playground import cuda_calls
from gpumon.playground.errors import Refusal

if TYPE_CHECKING:
    import torch

_HEX32 = re.compile(r"[0-9a-f]{32}")


def normalize_uuid(text: str) -> str | None:
    """32 lowercase hex digits from ``GPU-5f3c...``, ``5F3C...``, ``{5f3c-...}``; else None.

    NVML writes ``GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`` (``MIG-...`` for MIG instances);
    torch's ``get_device_properties(i).uuid`` prints the same digits, without the prefix in
    most versions.
    """
    s = str(text).strip().lower()
    for prefix in ("gpu-", "mig-"):
        if s.startswith(prefix):
            s = s[len(prefix):]
            break
    s = s.strip("{}").replace("-", "")
    return s if _HEX32.fullmatch(s) else None


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


def list_devices() -> list[DeviceOption]:
    """``cpu``, every ``cuda:i`` torch sees, ``mps`` where torch has Apple's Metal backend,
    and ``meta`` when there is no CUDA device.

    Imports torch. Never raises: a device whose properties cannot be read is still listed.
    Creates no CUDA context: names, sizes and UUIDs are device queries (cuda_calls.py).
    """
    import torch

    options = [cpu_option()]
    try:
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
    except Exception:  # noqa: BLE001 - a broken driver means no CUDA devices to offer
        count = 0
    uuids: list[str] = []
    infos: list[tuple[str, int | None]] = []
    for i in range(count):
        try:  # cudaGetDeviceProperties: no context on any GPU (see cuda_calls.py)
            props = cuda_calls.properties(torch, i)
            uuids.append(str(props.uuid))
            infos.append((props.name, int(props.total_memory)))
        except Exception:  # noqa: BLE001
            uuids.append("")
            infos.append((tr("unknown GPU"), None))
    for i, (name, total) in enumerate(infos):
        size = "" if total is None else f" ({total / 2**30:.0f} GiB)"
        options.append(
            DeviceOption(f"cuda:{i}", f"cuda:{i} — {name}{size}", normalize_uuid(uuids[i]),
                         total)
        )
    if _mps_available(torch):
        options.append(DeviceOption("mps", tr("mps — Apple GPU (Metal)")))
    if count == 0:
        options.append(DeviceOption("meta", tr("meta — shapes only, no data (no GPU here)")))
    return options


def _mps_available(torch: object) -> bool:
    """Whether this torch has a usable Metal device (macOS); False on any error."""
    try:
        return bool(torch.backends.mps.is_available())  # type: ignore[attr-defined]
    except Exception:  # noqa: BLE001 - an older torch without torch.backends.mps
        return False


def resolve_device(text: str) -> torch.device:
    """Parse a device string as torch does, then check a cuda index against device_count.

    A malformed string raises torch's own RuntimeError (its message is the lesson). A cuda
    index beyond the devices torch sees raises :class:`Refusal` before any CUDA call, but only
    when CUDA is available: on a CPU-only build torch's own "not compiled" error is shown.
    """
    import torch

    if not isinstance(text, str):
        raise Refusal(tr("A device is a name such as 'cpu' or 'cuda:0', not {text}.",
                         text=repr(text)))
    device = torch.device(text)
    # is_available and device_count: no CUDA context (cuda_calls.py)
    if device.type == "cuda" and device.index is not None and torch.cuda.is_available():
        problem = cuda_index_problem(device.index, torch.cuda.device_count())
        if problem is not None:
            raise Refusal(problem, no_such_gpu())
    return device


def check_cuda_index(index: int | None) -> None:
    """For ``.cuda(i)``: refuse an index that does not exist when CUDA is available."""
    import torch

    if index is None or not torch.cuda.is_available():
        return
    problem = cuda_index_problem(index, torch.cuda.device_count())
    if problem is not None:
        raise Refusal(problem, no_such_gpu())
