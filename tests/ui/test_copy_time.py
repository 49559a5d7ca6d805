"""The no-driver snapshot copied with Ctrl+Shift+C (and printed by lesson step 1) shows the
time of the copy, not the time the window opened."""

from __future__ import annotations

import dataclasses
import time

import pytest
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QApplication

from gpumon.telemetry.model.facts import as_copied_at

STAMP = "%a %b %d %H:%M:%S %Y"


def _stamp_of(text: str) -> float:
    return time.mktime(time.strptime(text.splitlines()[0], STAMP))


def test_no_driver_copy_shows_the_time_of_the_copy(qtbot, make_window):
    from gpumon.telemetry.nvml.source import NvmlSource

    w = make_window(NvmlSource)
    qtbot.waitUntil(lambda: w.latest_snapshot is not None, timeout=5000)
    snap = w.latest_snapshot
    if snap.status.usable:
        pytest.skip("this machine has a usable NVIDIA driver")
    hour_ago = snap.timestamp_s - 3600  # as if the window had opened an hour ago
    w.latest_snapshot = dataclasses.replace(snap, timestamp_s=hour_ago)
    before = time.time()
    w.findChild(QAction, "actionCopySnapshot").trigger()
    text = QApplication.clipboard().text()
    assert int(before) - 1 <= _stamp_of(text) <= time.time() + 1, text.splitlines()[0]


def test_a_snapshot_with_readings_keeps_its_own_time(qtbot, make_window):
    w = make_window()
    qtbot.waitUntil(lambda: w.latest_snapshot is not None, timeout=5000)
    snap = w.latest_snapshot
    assert as_copied_at(snap, snap.timestamp_s + 3600) is snap  # readings are of their time
