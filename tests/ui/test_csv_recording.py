"""The window's CSV recording: every series the history export has, a new section when a
series appears, and rows written on the recording's worker thread."""

from __future__ import annotations

import csv
import threading
import time
from pathlib import Path

import pytest

import gpumon.telemetry.history.csv_rows as csv_rows
from gpumon.telemetry.history.csv_export import history_table
from gpumon.telemetry.history.csv_rows import column
from gpumon.telemetry.history.store import History
from gpumon.telemetry.model.types import (
    GpuInfo,
    GpuProcess,
    GpuSample,
    MachineInfo,
    ProcessType,
    Snapshot,
    SourceState,
    SourceStatus,
)
from gpumon.ui.window import exports
from gpumon.ui.window.exports import CsvRecorder

GIB = 1024**3
MACHINE = MachineInfo("host", "NVML")
STATUS = SourceStatus(SourceState.OK, "ok")
GPUS = (GpuInfo(0, "GPU A", "GPU-a", "00:01.0"), GpuInfo(1, "GPU B", "GPU-b", "00:02.0"))


def _snap(t: float, torch_on: bool) -> Snapshot:
    """Two GPUs; this process holds 1 GiB on GPU 0; torch's counters once it has started."""
    extra = {0: {"torch_allocated_bytes": 2.0 * GIB, "torch_reserved_bytes": 3.0 * GIB}} \
        if torch_on else {}
    return Snapshot(t, MACHINE, STATUS, gpus=GPUS,
                    samples=(GpuSample(0, t, mem_used_bytes=5 * GIB), GpuSample(1, t)),
                    processes=(GpuProcess(0, 4242, ProcessType.COMPUTE, GIB, is_self=True),),
                    extra=extra)


def _sections(path: Path) -> list[list[list[str]]]:
    """The file's sections: runs of rows separated by an empty line, header first."""
    sections: list[list[list[str]]] = [[]]
    with path.open(newline="", encoding="utf-8") as f:
        for row in csv.reader(f):
            if not row:
                sections.append([])
            else:
                sections[-1].append(row)
    return sections


def test_recording_has_every_series_of_the_history_export(qtbot, tmp_path: Path) -> None:
    snaps = [_snap(1_700_000_000.0 + k, torch_on=k >= 2) for k in range(4)]
    recorder = CsvRecorder()
    recorder.start(tmp_path / "rec.csv")
    history = History(100)
    for snap in snaps:
        recorder.add(snap)
        history.append(snap)
    recorder.stop()
    assert recorder.rows == 8

    first, second = _sections(tmp_path / "rec.csv")
    header = first[0]
    assert column("self_mem_bytes") in header
    assert column("torch_allocated_bytes") not in header
    assert len(first) == 1 + 2 * 2  # two snapshots before torch started
    # The new section: the same columns in the same places, the new ones at the end.
    wider = second[0]
    assert wider[:len(header)] == header
    assert wider[len(header):] == [column("torch_allocated_bytes"),
                                   column("torch_reserved_bytes")]
    rows = [dict(zip(wider, row, strict=True)) for row in second[1:]]
    assert len(rows) == 2 * 2
    gpu0 = [r for r in rows if r["gpu_index"] == "0"]
    gpu1 = [r for r in rows if r["gpu_index"] == "1"]
    assert all(r[column("torch_allocated_bytes")] == str(2 * GIB) for r in gpu0)
    assert all(r[column("self_mem_bytes")] == str(GIB) for r in gpu0)
    assert all(r[column("torch_allocated_bytes")] == "" for r in gpu1)
    assert all(r[column("self_mem_bytes")] == "" for r in gpu1)
    # Every series of the history export is a column of the recording.
    exported = {column(k) for k in history_table(history, snaps[-1], 3600.0).keys}
    assert exported <= set(wider), exported - set(wider)


def test_rows_are_written_on_the_worker_thread(qtbot, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    threads: list[threading.Thread] = []
    real_stamps = csv_rows.stamps

    def spy(t: float) -> tuple[str, str]:
        threads.append(threading.current_thread())
        return real_stamps(t)

    monkeypatch.setattr(csv_rows, "stamps", spy)  # record_rows makes each row's stamps
    recorder = CsvRecorder()
    recorder.start(tmp_path / "rec.csv")
    for k in range(5):
        recorder.add(_snap(1_700_000_000.0 + k, torch_on=False))
    recorder.stop()
    assert len(threads) == 10
    assert all(t is not threading.main_thread() for t in threads)
    assert {t.name for t in threads} == {"gpumon-csv-record"}


def test_rows_reach_the_file_within_about_a_second(qtbot, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """The once-a-second flush: rows are on disk while the recording goes on (here with a
    tenth of the period, so that the test waits 0.15 s, not 1.1 s)."""
    monkeypatch.setattr(exports, "FLUSH_EVERY_S", 0.1)
    path = tmp_path / "rec.csv"
    recorder = CsvRecorder()
    recorder.start(path)
    try:
        recorder.add(_snap(1_700_000_000.0, torch_on=False))
        time.sleep(0.15)  # a flush period passes: the rule under test
        recorder.add(_snap(1_700_000_001.0, torch_on=False))
        qtbot.waitUntil(lambda: len(_sections(path)[0]) == 1 + 2 * 2, timeout=3000)
        assert recorder.recording
    finally:
        recorder.stop()
