"""Plain-value descriptions of torch objects: previews, devices, sizes, operand records.

Functions take torch objects but never import torch at module level (type names only).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpumon.i18n import tr
from gpumon.playground.data.errors import OperandInfo

if TYPE_CHECKING:
    import torch

MAX_PREVIEW_LINES = 16
MAX_PREVIEW_CHARS = 1500
#: Above this many elements the preview is a one-line summary plus torch's own summary.
HUGE_NUMEL = 10_000_000


class ReprFailed(Exception):
    """The ``__repr__`` of the user's object raised (or gave no string): the user's error,
    never gpumon's (``type('R', (), {'__repr__': lambda s: 1/0})()`` was reported as a bug
    of gpumon's, asking to report it)."""

    def __init__(self, value: object, error: BaseException) -> None:
        super().__init__(str(error))
        self.error = error
        try:
            self.type_name = str(type(value).__name__)[:80]
        except Exception:  # a metaclass's own __name__ may raise too
            self.type_name = "?"


def user_repr(value: object) -> str:
    """``repr(value)``; ReprFailed when the object's own ``__repr__`` fails (SystemExit
    too: exit() in a __repr__ must not end the kernel)."""
    try:
        return repr(value)
    except (Exception, SystemExit) as exc:  # whatever the user's code raises
        raise ReprFailed(value, exc) from None


def dtype_name(dtype: torch.dtype) -> str:
    """``torch.float32`` -> ``float32``."""
    return str(dtype).removeprefix("torch.")


def shorten(text: str) -> str:
    """At most MAX_PREVIEW_LINES lines and MAX_PREVIEW_CHARS characters, marked with '…'."""
    lines = text.splitlines()
    cut = len(lines) > MAX_PREVIEW_LINES
    if cut:
        lines = lines[: MAX_PREVIEW_LINES - 1]
    out = "\n".join(lines)
    if len(out) > MAX_PREVIEW_CHARS:
        out, cut = out[: MAX_PREVIEW_CHARS - 1], True
    return out + ("\n…" if cut and "\n" in out else "…" if cut else "")


def tensor_preview(t: torch.Tensor) -> str:
    """torch's repr (which already elides the middle of long tensors), shortened to fit.

    Printing a cuda tensor copies the printed elements to the host, as the lesson says.
    """
    text = user_repr(t)  # a subclass of Tensor may have a __repr__ of the user's
    if t.numel() > HUGE_NUMEL:
        head = "# " + tr("{count} elements, {shape}, {dtype}, {device}", count=f"{t.numel():,}",
                         shape=tuple(t.shape), dtype=dtype_name(t.dtype),
                         device=str(t.device)) + "\n"
        text = head + text
    return shorten(text)


def value_preview(value: object) -> str:
    """repr of a query's answer, shortened; ReprFailed when the object's repr fails."""
    return shorten(user_repr(value))


def model_devices(model: torch.nn.Module) -> str:
    """The device of a model's parameters and buffers; ``mixed`` when they differ."""
    found = sorted({str(t.device) for t in (*model.parameters(), *model.buffers())})
    if not found:
        return "cpu"
    return found[0] if len(found) == 1 else "mixed"


def model_bytes(model: torch.nn.Module) -> int:
    """Memory held by a model's parameters and buffers (0 on meta)."""
    return sum(
        t.nbytes for t in (*model.parameters(), *model.buffers()) if t.device.type != "meta"
    )


def model_dtype(model: torch.nn.Module) -> str | None:
    for p in model.parameters():
        return dtype_name(p.dtype)
    return None


def tensor_bytes(t: torch.Tensor) -> int:
    """Memory the tensor's elements take (0 on meta, which holds no data)."""
    return 0 if t.device.type == "meta" else int(t.nbytes)


def operand_info(code: str, value: object) -> OperandInfo:
    """Record an input as it was when the action ran."""
    import torch

    if isinstance(value, torch.Tensor):
        return OperandInfo(code, "tensor", str(value.device), tuple(value.shape),
                           dtype_name(value.dtype))
    if isinstance(value, torch.nn.Module):
        return OperandInfo(code, "model", model_devices(value), None, model_dtype(value))
    return OperandInfo(code, type(value).__name__, "?")
