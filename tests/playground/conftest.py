"""Fixtures for the playground tests (no Qt): a fresh engine per test; a kernel client and
the inbox its messages go to (kernel_helpers.py, shared with tests/gpu)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from gpumon.playground.kernel.engine import Engine
from tests.playground.kernel_helpers import client, inbox

__all__ = ["client", "engine", "inbox", "no_nvidia_smi"]


@pytest.fixture
def engine() -> Engine:
    return Engine()


@pytest.fixture
def no_nvidia_smi(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """PATH without the real nvidia-smi, even on a GPU machine: this test's own folder (it
    may put an ``nvidia-smi`` script there, returned) and one with links to the few programs
    such a script runs (sh, sleep, yes, head). Not /bin: where /bin is /usr/bin, as on most
    systems now, the driver's nvidia-smi is there."""
    tools = tmp_path / "tools"
    tools.mkdir()
    for name in ("sh", "sleep", "yes", "head"):
        found = shutil.which(name)
        if found is not None:
            (tools / name).symlink_to(found)
    monkeypatch.setenv("PATH", os.pathsep.join([str(tmp_path), str(tools)]))
    assert shutil.which("nvidia-smi") is None
    return tmp_path
