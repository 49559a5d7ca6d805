"""The internal errors an answer from the kernel carries, so the window logs each once."""

from __future__ import annotations

from typing import Any

from gpumon.playground.data.errors import INTERNAL
from gpumon.playground.data.outcome import Outcome


def internal_errors_in(data: Any) -> list[str]:
    """The internal errors an answer carries: an Outcome's, or each of a lesson step's."""
    outcomes = [data] if isinstance(data, Outcome) else getattr(data, "outcomes", None)
    if not isinstance(outcomes, (list, tuple)):
        return []
    return [o.error.message for o in outcomes if isinstance(o, Outcome)
            and o.error is not None and o.error.type_name == INTERNAL]
