"""Errors as content, the data both sides share: a refusal, torch's error as it was raised, and
the operands an action had. Explanations are added in the kernel (kernel/explain.py).

Every internal error (a bug of gpumon's own) is logged once on the ``gpumon.internal`` logger:
by the engine where it runs in this process, and by the kernel client for what crosses the
kernel's pipe. The test suite fails any test during which that logger spoke, unless the test
is marked ``internal_error``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

#: The logger every bug of gpumon's playground code is reported on.
INTERNAL_LOG = logging.getLogger("gpumon.internal")
INTERNAL = "InternalError"


class Refusal(Exception):
    """The engine declined an action before torch saw it; the text says why, in plain words."""

    def __init__(self, message: str, explanation: str = "") -> None:
        super().__init__(message)
        self.explanation = explanation or message


REFUSED = "Refused"  # ErrorInfo.type_name of a refusal


@dataclass(frozen=True)
class OperandInfo:
    """One input of an action as it was when the action ran (after any inline ``.cpu()``)."""

    code: str  # "x" or "x.cpu()"
    kind: str  # "tensor" or "model"
    device: str  # "cpu", "cuda:0", "meta"; for a model, its parameters' device(s)
    shape: tuple[int, ...] | None = None
    dtype: str | None = None  # "float32"


@dataclass(frozen=True)
class ErrorInfo:
    """What went wrong: torch's exception, or the engine's refusal (``by_torch`` False)."""

    type_name: str  # "RuntimeError", "torch.AcceleratorError", or "Refused"
    message: str  # str(exc), exactly as torch wrote it
    explanation: str  # one line, plain words
    by_torch: bool = True

    def headline(self) -> str:
        """``RuntimeError: message`` as Python prints it (first line of the message)."""
        first = self.message.splitlines()[0] if self.message else ""
        return f"{self.type_name}: {first}" if first else self.type_name


def report_internal(text: str) -> None:
    """Log a bug of gpumon's own code (with its traceback) on ``gpumon.internal``."""
    INTERNAL_LOG.error("a bug in gpumon's playground code:\n%s", text)
