"""Fixtures for the playground tests (no Qt): a fresh engine per test; a kernel client and
the inbox its messages go to (kernel_helpers.py, shared with tests/gpu)."""

from __future__ import annotations

import pytest

from gpumon.playground.kernel.engine import Engine
from tests.playground.kernel_helpers import client, inbox

__all__ = ["client", "engine", "inbox"]


@pytest.fixture
def engine() -> Engine:
    return Engine()
