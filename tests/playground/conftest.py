"""Fixtures for the playground tests (no Qt): a fresh engine per test."""

from __future__ import annotations

import pytest

from gpumon.playground.engine import Engine


@pytest.fixture
def engine() -> Engine:
    return Engine()
