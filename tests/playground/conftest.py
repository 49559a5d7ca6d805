"""Fixtures for the playground tests (no Qt): a fresh engine per test; a kernel client and
the inbox its messages go to."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from gpumon.playground.engine import Engine
from gpumon.playground.kernel_client import KernelClient
from tests.playground.kernel_helpers import Inbox


@pytest.fixture
def engine() -> Engine:
    return Engine()


@pytest.fixture
def inbox() -> Inbox:
    return Inbox()


@pytest.fixture
def client(inbox: Inbox) -> Iterator[KernelClient]:
    """A kernel client; afterwards its kernel has exited and no process is left behind."""
    c = KernelClient(inbox)
    yield c
    assert c.shutdown(timeout_s=1.0) is not None or c._gen is None  # noqa: SLF001
    gen = c._gen  # noqa: SLF001
    assert gen is None or gen.proc.poll() is not None
