"""Helpers shared by the playground tests: torch's own error for a call, build markers."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch

from gpumon.playground.errors import qualified_type_name


def torch_error(fn: Callable[[], object]) -> tuple[str, str] | None:
    """(type name, message) torch raises for ``fn`` right now, or None when it succeeds."""
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 - we want whatever torch raises
        return qualified_type_name(exc), str(exc)
    return None


cpu_only_build = pytest.mark.skipif(
    torch.backends.cuda.is_built(), reason="checks the errors of a CPU-only torch build"
)
