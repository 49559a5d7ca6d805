"""File menu work: clipboard text, PNG/SVG graphs, CSV recording and export, write errors."""

from __future__ import annotations

import csv
import os
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from PySide6.QtGui import QAction, QImage
from PySide6.QtWidgets import QApplication, QLabel, QMessageBox

from gpumon.telemetry.history.csv_rows import column
from gpumon.telemetry.sources.simulated import SimulatedFaults, SimulatedSource


def _read(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def _close_boxes(w) -> None:
    for box in w.findChildren(QMessageBox):
        box.close()


def test_copy_snapshot_as_text(qtbot, make_window):
    w = make_window()
    qtbot.waitUntil(lambda: w.latest_snapshot is not None, timeout=5000)
    w.findChild(QAction, "actionCopySnapshot").trigger()
    text = QApplication.clipboard().text()
    assert "Memory-Usage" in text and "GPU-Util" in text
    assert "SIMULATED" in text.upper()
    assert w.latest_snapshot.gpus[0].name in text


def test_save_graph_png_and_svg(qtbot, make_window, tmp_path):
    w = make_window()
    qtbot.waitUntil(lambda: w.history.count(0) >= 3, timeout=5000)
    png, svg = tmp_path / "mem.png", tmp_path / "util.svg"
    assert w.files.save_graph(0, "memory", png)
    assert w.files.save_graph(1, "utilization", svg)
    image = QImage(str(png))
    assert not image.isNull() and image.width() > 0 and image.height() > 0
    root = ET.parse(svg).getroot()
    assert root.tag.endswith("svg")


def test_recording_survives_a_lost_gpu(qtbot, make_window, tmp_path):
    faults = SimulatedFaults(lost_after_s={1: 0.5})
    w = make_window(lambda: SimulatedSource(3, seed=1, faults=faults))
    qtbot.waitUntil(lambda: w.latest_snapshot is not None, timeout=5000)
    path = tmp_path / "rec.csv"
    files = w.files
    assert files.start_recording(path)
    rec = w.findChild(QLabel, "recIndicator")
    assert rec.isVisible() and w.findChild(QAction, "actionRecord").isChecked()

    def lost_for_a_while() -> bool:
        snap = w.latest_snapshot
        return snap is not None and snap.sample_for(1).lost and files.recorder.rows >= 30

    qtbot.waitUntil(lost_for_a_while, timeout=8000)
    w.findChild(QAction, "actionRecord").trigger()  # stop
    assert not files.recorder.recording and not rec.isVisible()
    rows = _read(path)
    assert column("mem_used_bytes") in rows[0] and "mem_used_bytes [B]" in rows[0]
    assert {"timestamp_iso", "timestamp_epoch_s", "gpu_index", "uuid", "name", "lost"} \
        <= set(rows[0])
    lost = [r for r in rows if r["gpu_index"] == "1" and r["lost"] == "1"]
    assert lost and all(r["mem_used_bytes [B]"] == "" for r in lost)
    assert all(r["uuid"] for r in lost)
    first_lost = min(float(r["timestamp_epoch_s"]) for r in lost)
    after = [r for r in rows
             if r["gpu_index"] == "0" and float(r["timestamp_epoch_s"]) > first_lost]
    assert after and all(r["lost"] == "0" and r["mem_used_bytes [B]"] for r in after)


def test_export_visible_window(qtbot, make_window, tmp_path):
    w = make_window()
    qtbot.waitUntil(lambda: w.history.count(0) >= 5, timeout=5000)
    w.set_paused(True)
    path = tmp_path / "window.csv"
    files = w.files
    with qtbot.waitSignal(files.exportFinished, timeout=10000) as done:
        assert files.export_window(path)
    n = done.args[1]
    rows = _read(path)
    assert n == len(rows) == sum(w.history.count(i) for i in range(4))
    assert {r["gpu_index"] for r in rows} == {"0", "1", "2", "3"}
    gpu0 = [r for r in rows if r["gpu_index"] == "0"]
    _, used = w.history.series(0, "mem_used_bytes")
    assert float(gpu0[-1]["mem_used_bytes [B]"]) == used[-1]
    assert "gpu_util_pct [%]" in rows[0]


def test_unwritable_paths_give_a_sentence(qtbot, make_window, tmp_path):
    w = make_window()
    qtbot.waitUntil(lambda: w.gpu_panel(0) is not None, timeout=5000)
    files = w.files
    missing = tmp_path / "no such folder"
    assert not files.save_graph(0, "memory", missing / "m.png")
    assert "could not be saved" in files.last_message
    assert not files.save_graph(0, "memory", missing / "m.svg")
    with qtbot.waitSignal(files.exportFinished, timeout=10000) as done:
        assert files.export_window(missing / "h.csv")
    assert done.args[1] == -1 and "could not be written" in files.last_message
    assert not files.start_recording(tmp_path)  # a folder, not a file
    assert "Recording could not start" in files.last_message
    box = w.findChild(QMessageBox, "fileErrorBox")
    assert box is not None and "Recording could not start" in [
        b.text()[:25] for b in w.findChildren(QMessageBox)][-1]
    assert w.statusBar().currentMessage() == files.last_message
    _close_boxes(w)


def _point_at_dev_full(path: Path) -> None:
    """Every open descriptor of ``path`` in this process now writes to /dev/full, which
    answers each write with ENOSPC: the disk is full from here on, for real."""
    full = os.open("/dev/full", os.O_WRONLY)
    try:
        fds = [int(fd) for fd in os.listdir("/proc/self/fd")
               if os.path.realpath(f"/proc/self/fd/{fd}") == str(path.resolve())]
        assert fds, f"{path} is not open"
        for fd in fds:
            os.dup2(full, fd)
    finally:
        os.close(full)


@pytest.mark.skipif(not os.path.exists("/dev/full") or not os.path.isdir("/proc/self/fd"),
                    reason="needs Linux's /dev/full and /proc/self/fd")
def test_disk_full_while_recording_stops_with_a_message(qtbot, make_window, tmp_path):
    w = make_window()
    qtbot.waitUntil(lambda: w.latest_snapshot is not None, timeout=5000)
    files = w.files
    assert not files.start_recording("/dev/full")  # full from the header on
    assert "no space left on device" in files.last_message.lower()
    _close_boxes(w)
    path = tmp_path / "rec.csv"
    assert files.start_recording(path)
    _point_at_dev_full(path)  # the disk fills up while recording
    qtbot.waitUntil(lambda: not files.recorder.recording, timeout=5000)  # at the next flush
    assert files.last_message.startswith("Recording stopped: disk full.")
    assert str(path) in files.last_message
    assert not w.findChild(QLabel, "recIndicator").isVisible()
    count = w.snapshot_count
    qtbot.waitUntil(lambda: w.snapshot_count > count + 2, timeout=5000)  # still running
    _close_boxes(w)


def test_export_writes_on_a_worker_thread_and_refuses_a_second_meanwhile(
        qtbot, make_window, tmp_path, monkeypatch):
    import threading

    from gpumon.telemetry.history import csv_export as ex

    w = make_window()
    qtbot.waitUntil(lambda: w.history.count(0) >= 3, timeout=5000)
    release = threading.Event()
    writer_threads: list[str] = []
    real_write = ex.write_history_csv

    def slow_write(table, path):
        writer_threads.append(threading.current_thread().name)
        assert release.wait(10)
        return real_write(table, path)

    monkeypatch.setattr(ex, "write_history_csv", slow_write)
    files = w.files
    assert files.export_window(tmp_path / "a.csv")  # returns while the write waits
    start = w.snapshot_count
    qtbot.waitUntil(lambda: w.snapshot_count >= start + 2, timeout=5000)  # the GUI goes on
    assert files.exporting and writer_threads == ["gpumon-csv-export"]
    assert not files.export_window(tmp_path / "b.csv")
    assert "still being written" in files.last_message
    with qtbot.waitSignal(files.exportFinished, timeout=10000) as done:
        release.set()
    assert done.args[1] > 0 and (tmp_path / "a.csv").exists() and not files.exporting
    assert not (tmp_path / "b.csv").exists()
    _close_boxes(w)
