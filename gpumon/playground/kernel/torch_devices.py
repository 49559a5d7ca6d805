"""torch's side of the devices: what this torch offers, and a device string resolved as torch
does, with a refusal for a cuda index it does not have. Imports torch when called (from the
engine's thread); the data types are data/devices.py.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpumon.device_ids import normalize_uuid
from gpumon.i18n import tr
from gpumon.playground.data.devices import (
    DeviceOption,
    cpu_option,
    cuda_index_problem,
    no_such_gpu,
)
from gpumon.playground.data.errors import Refusal
from gpumon.playground.kernel import cuda_calls
from gpumon.units import format_bytes

if TYPE_CHECKING:
    import torch

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
    except Exception:  # a broken driver means no CUDA devices to offer
        count = 0
    uuids: list[str] = []
    infos: list[tuple[str, int | None]] = []
    for i in range(count):
        try:  # cudaGetDeviceProperties: no context on any GPU (see cuda_calls.py)
            props = cuda_calls.properties(torch, i)
            uuids.append(str(props.uuid))
            infos.append((props.name, int(props.total_memory)))
        except Exception:
            uuids.append("")
            infos.append((tr("unknown GPU"), None))
    for i, (name, total) in enumerate(infos):
        size = "" if total is None else f" ({format_bytes(total, 'GiB', decimals=0)})"
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
    except Exception:  # an older torch without torch.backends.mps
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
