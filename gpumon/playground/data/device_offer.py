"""The devices the playground's forms offer: torch's, plus the GPUs NVML sees that torch
cannot use, so that a learner can pick ``cuda:1`` (or ``cuda:0`` on a machine without CUDA)
and read torch's real error instead of having to type the name. Qt-free, no torch import.
"""

from __future__ import annotations

from collections.abc import Sequence

from gpumon.device_ids import cuda_index
from gpumon.i18n import N_, tr
from gpumon.playground.data.devices import DeviceOption

#: Marks a device torch cannot use here; shown as ``tr(NOT_HERE)``.
NOT_HERE = N_("not available here")


def _unavailable(index: int, why: str) -> DeviceOption:
    label = tr("{device} — {not_here} ({why}); pick it to see what torch says",
               device=f"cuda:{index}", not_here=tr(NOT_HERE), why=why)
    return DeviceOption(f"cuda:{index}", label, available=False)


def offered(torch_options: Sequence[DeviceOption], nvml_gpus: int) -> list[DeviceOption]:
    """``torch_options`` (cpu, torch's cuda:i, meta...), then ``cuda:i`` for each of the
    ``nvml_gpus`` GPUs NVML sees beyond torch's, and ``cuda:0`` when torch sees none, each
    marked :data:`NOT_HERE`; cuda devices come before the other non-cpu ones."""
    torch_cuda = [o for o in torch_options if cuda_index(o.name) is not None]
    have = {o.name for o in torch_cuda}
    why = (tr("PyTorch sees no CUDA device") if not torch_cuda
           else tr("PyTorch sees {n} of them", n=len(torch_cuda)))
    extra = [_unavailable(i, why) for i in range(max(nvml_gpus, 1))
             if f"cuda:{i}" not in have]
    if torch_cuda and nvml_gpus <= len(torch_cuda):
        extra = []  # every GPU NVML sees is one torch can use
    cpu = [o for o in torch_options if o.name == "cpu"]
    rest = [o for o in torch_options if o.name != "cpu" and cuda_index(o.name) is None]
    return [*cpu, *torch_cuda, *extra, *rest]


def is_unavailable(option: DeviceOption) -> bool:
    """True for a cuda device offered although torch cannot use it here (whatever the
    language of its label)."""
    return cuda_index(option.name) is not None and option.uuid is None and not option.available
