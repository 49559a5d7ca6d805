"""CsvRecordWriter on its own: a write error on the worker thread becomes one sentence."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from gpumon.telemetry.history.csv_record import CsvRecordWriter
from gpumon.telemetry.model.types import GpuSample, MachineInfo, Snapshot, SourceState, SourceStatus


def _snap(t: float) -> Snapshot:
    return Snapshot(t, MachineInfo("host", "NVML"), SourceStatus(SourceState.OK, "ok"),
                    samples=(GpuSample(0, t, mem_used_bytes=1),))


@pytest.mark.skipif(not os.path.exists("/dev/full") or not os.path.isdir("/proc/self/fd"),
                    reason="needs Linux's /dev/full and /proc/self/fd")
def test_disk_full_on_the_worker_becomes_one_sentence(tmp_path: Path) -> None:
    errors: list[tuple[str, str]] = []
    path = tmp_path / "rec.csv"
    writer = CsvRecordWriter(path, lambda s: errors.append((threading.current_thread().name, s)),
                             flush_every_s=0.0)
    writer.add(_snap(1.0))
    deadline = time.monotonic() + 5
    while (len(path.read_text(encoding="utf-8").splitlines()) < 2
           and time.monotonic() < deadline):  # the first row is on disk
        time.sleep(0.01)
    full = os.open("/dev/full", os.O_WRONLY)
    try:  # the disk fills up: every descriptor of the file now answers ENOSPC
        for fd in os.listdir("/proc/self/fd"):
            if os.path.realpath(f"/proc/self/fd/{fd}") == str(path.resolve()):
                os.dup2(full, int(fd))
    finally:
        os.close(full)
    writer.add(_snap(2.0))
    while not writer.failed and time.monotonic() < deadline:
        time.sleep(0.01)
    writer.add(_snap(3.0))  # dropped: the recording has ended
    writer.close()
    assert not writer.thread.is_alive()
    assert errors == [("gpumon-csv-record",
                       f"Recording stopped: disk full. {path} keeps the rows written "
                       "before, up to its last whole row.")]
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2 and lines[0].startswith("timestamp_iso,")  # the rows before stay


def test_a_folder_cannot_be_recorded_to(tmp_path: Path) -> None:
    with pytest.raises(OSError):
        CsvRecordWriter(tmp_path, lambda s: None)
