"""CSV exports: used, reserved, free and total memory in both files; one instant per row."""

from __future__ import annotations

import csv
from datetime import datetime
from pathlib import Path

from gpumon.telemetry.model.types import GpuSample, MachineInfo, Snapshot, SourceState, SourceStatus
from gpumon.telemetry.sources.simulated import SimulatedSource
from gpumon.ui.window.exports import CsvRecorder

MEMORY = ("mem_used_bytes [B]", "mem_reserved_bytes [B]", "mem_free_bytes [B]",
          "mem_total_bytes [B]")


def _read(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def _check_memory(rows: list[dict[str, str]]) -> None:
    assert rows and set(MEMORY) <= set(rows[0])
    for r in rows:
        used, reserved, free, total = (int(float(r[c])) for c in MEMORY)
        assert used + reserved + free == total, r


def test_history_export_and_recording_carry_free_and_reserved(qtbot, make_window, tmp_path):
    w = make_window(lambda: SimulatedSource(2, seed=3))
    qtbot.waitUntil(lambda: w.latest_snapshot is not None, timeout=5000)
    files = w.menus.files
    assert files.start_recording(tmp_path / "rec.csv")
    qtbot.waitUntil(lambda: files.recorder.rows >= 6 and w.history.count(0) >= 4, timeout=5000)
    files.stop_recording()
    _check_memory(_read(tmp_path / "rec.csv"))
    w.set_paused(True)
    with qtbot.waitSignal(files.exportFinished, timeout=10000):
        assert files.export_window(tmp_path / "window.csv")
    _check_memory(_read(tmp_path / "window.csv"))


def test_iso_and_epoch_timestamps_are_the_same_instant(qtbot, tmp_path):
    recorder = CsvRecorder()
    machine = MachineInfo("host", "NVML")
    status = SourceStatus(SourceState.OK, "ok")
    # .0005 s fractions: rounding and truncation to milliseconds disagree on these.
    stamps = [1_700_000_000.0 + k * 0.2 + 0.0005 + f for k, f in
              enumerate([0.0, 0.0004, 0.0009, 0.0001, 0.0006, 0.0007])]
    recorder.start(tmp_path / "t.csv")
    for t in stamps:
        recorder.add(Snapshot(t, machine, status,
                              samples=(GpuSample(index=0, timestamp_s=t),)))
    recorder.stop()
    for r in _read(tmp_path / "t.csv"):
        iso = datetime.fromisoformat(r["timestamp_iso"]).timestamp()
        assert abs(iso - float(r["timestamp_epoch_s"])) < 1e-6, r
