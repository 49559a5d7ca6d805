"""A window whose environment has no torch (a plain install with the gui extra only): the
Playground's status line is the kernel's one sentence that names the extra to install, the
forms stay off, and the monitor goes on."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtWidgets import QLabel, QPushButton

pytestmark = pytest.mark.slow  # a real kernel process: seconds

# tests/gpu/noqt's sitecustomize hides the packages GPUMON_HIDE_MODULES names from every Python
# started with it first on PYTHONPATH: here the kernel, as where torch is not installed.
HIDE = Path(__file__).resolve().parents[1] / "gpu" / "noqt"


def test_the_playground_names_the_extra_that_brings_torch(  # type: ignore[no-untyped-def]
        qtbot, make_window, monkeypatch) -> None:
    monkeypatch.setenv("PYTHONPATH", str(HIDE))
    monkeypatch.setenv("GPUMON_HIDE_MODULES", "torch")
    window = make_window()
    window.tabs.setCurrentWidget(window.playground)  # starts the kernel
    status = window.playground.findChild(QLabel, "playgroundStatus")
    qtbot.waitUntil(lambda: window.engine.load_status is not None, timeout=60000)
    assert window.engine.load_status.torch_missing
    assert status.text() == ("The playground needs PyTorch, which comes with the playground "
                             "extra: pip install 'gpumon[playground]'")
    assert not window.playground.findChild(QPushButton, "runCreateButton").isEnabled()
    seen = window.snapshot_count
    qtbot.waitUntil(lambda: window.snapshot_count > seen + 2, timeout=10000)  # still sampling
