"""Which operations with a ``meta`` operand may run, so the lesson never shows garbage.

On a machine without a CUDA device the playground offers ``meta`` (shapes, no data) to show
the same-device rule. Measured on torch 2.13: ``cpu + meta``, ``cpu * meta``, 1-D ``@`` and a
Linear *with* bias fed an input on the other device raise ``Tensor on device meta is not on
the expected device cpu!`` (or the reverse). But a 2-D matrix product with one meta operand,
and a Linear *without* bias, silently return a cpu tensor of uninitialised numbers or a meta
tensor instead of raising. Those are refused here with a sentence instead of shown as results.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpumon.i18n import N_, tr
from gpumon.playground.data.errors import Refusal

if TYPE_CHECKING:
    import torch

EXPLANATION = N_(
    "meta tensors hold no data, and some torch kernels skip the device check for them, so "
    "gpumon refuses instead of showing made-up numbers."
)


def _mixed(*devices: torch.device) -> bool:
    types = {d.type for d in devices}
    return "meta" in types and len({str(d) for d in devices}) > 1


def check_matmul_meta(a: torch.Tensor, b: torch.Tensor) -> None:
    """Refuse ``a @ b`` mixing meta and another device unless both are vectors (torch raises)."""
    if _mixed(a.device, b.device) and not (a.dim() == 1 and b.dim() == 1):
        raise Refusal(
            tr("Not run: a matrix product of a {a} tensor and a {b} tensor does not raise the "
               "same-device error in this PyTorch; it returns made-up numbers. Try + or * to "
               "see the rule, or move both to one device.", a=str(a.device), b=str(b.device)),
            tr(EXPLANATION),
        )


def check_call_meta(model: torch.nn.Module, x: torch.Tensor) -> None:
    """Refuse calling a model across meta and another device unless every layer has a bias.

    Only Linear layers with a bias were measured to raise; any other module mixing meta and
    non-meta tensors is refused too rather than trusted.
    """
    import torch

    devices = [t.device for t in (*model.parameters(), *model.buffers())]
    if not _mixed(x.device, *devices):
        return
    modules = [m for m in model.modules() if len(list(m.parameters(recurse=False))) > 0]
    trusted = all(isinstance(m, torch.nn.Linear) and m.bias is not None for m in modules)
    if not trusted:
        raise Refusal(
            tr("Not run: this model's parameters are on {devices} and the input on {device}; "
               "without a bias, PyTorch does not raise the same-device error here but returns "
               "made-up numbers. Use nn.Linear with bias=True to see it.",
               devices=str(sorted({str(d) for d in devices})), device=str(x.device)),
            tr(EXPLANATION),
        )
