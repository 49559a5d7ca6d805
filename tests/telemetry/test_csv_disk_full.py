"""A disk that fills up under a CSV (issue 53), for real: a 64 KiB tmpfs where the tests may
mount one (root), and everywhere a file-size limit (RLIMIT_FSIZE) in a child process, which
the kernel enforces with EFBIG as a full disk's ENOSPC. A recording ends on a whole row and
says the disk is full; a failed export leaves the file that was there, and no temporary."""

from __future__ import annotations

import csv
import io
import os
import shutil
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

np = pytest.importorskip("numpy", reason="numpy is not installed (the window's History "
                                          "needs it)")

from gpumon.telemetry.history.csv_export import history_table, write_history_csv  # noqa: E402
from gpumon.telemetry.history.csv_record import CsvRecordWriter  # noqa: E402
from gpumon.telemetry.history.store import History  # noqa: E402
from gpumon.telemetry.model.types import (  # noqa: E402
    GpuInfo,
    GpuSample,
    MachineInfo,
    Snapshot,
    SourceState,
    SourceStatus,
)

ROOT = Path(__file__).resolve().parents[2]
DISK_FULL = "Recording stopped: disk full."


def snap(t: float, gpus: int = 8) -> Snapshot:
    return Snapshot(t, MachineInfo("host", "NVML"), SourceStatus(SourceState.OK, "ok"),
                    gpus=tuple(GpuInfo(i, "NVIDIA H200", f"GPU-{i}", "") for i in range(gpus)),
                    samples=tuple(GpuSample(i, t, mem_used_bytes=123456789 + i,
                                            gpu_util_pct=37.5, temperature_c=55.0)
                                  for i in range(gpus)))


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A folder on a 64 KiB tmpfs of its own (skipped where mounting is not allowed)."""
    where = tmp_path / "disk"
    where.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a tmpfs needs root; the RLIMIT_FSIZE test covers the rest")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(where)],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def record_until_full(path: Path) -> tuple[CsvRecordWriter, list[str]]:
    errors: list[str] = []
    writer = CsvRecordWriter(path, errors.append, flush_every_s=0.0)
    t = 1.0
    deadline = time.monotonic() + 60
    while not writer.failed and time.monotonic() < deadline:
        for _ in range(20):
            writer.add(snap(t))
            t += 1.0
        writer.flush()
        time.sleep(0.01)
    writer.close()
    return writer, errors


def whole_rows(data: bytes) -> int:
    """The file's rows (after its header) if every one is whole; fails on a cut one."""
    assert data.endswith(b"\r\n"), data[-80:]
    header, *rows = list(csv.reader(io.StringIO(data.decode("utf-8"), newline="")))
    assert rows and all(len(row) == len(header) for row in rows)
    assert all(row[-1] == "" or row[0].startswith("19") for row in rows)
    return len(rows)


def test_a_recording_on_a_full_tmpfs_ends_on_a_whole_row(small_disk: Path) -> None:
    path = small_disk / "rec.csv"
    writer, errors = record_until_full(path)
    assert writer.failed and len(errors) == 1 and errors[0].startswith(DISK_FULL), errors
    assert whole_rows(path.read_bytes()) == writer.rows > 8


def test_a_failed_export_on_a_full_tmpfs_leaves_the_old_file(small_disk: Path) -> None:
    path = small_disk / "export.csv"
    path.write_text("the export before\n", encoding="utf-8")
    history = History(4000)
    for t in range(4000):
        history.append(snap(float(t)))
    table = history_table(history, snap(4000.0), 1e9)
    with pytest.raises(OSError):
        write_history_csv(table, path)
    assert path.read_text(encoding="utf-8") == "the export before\n"
    assert sorted(p.name for p in small_disk.iterdir()) == ["export.csv"]
    assert write_history_csv(history_table(history, snap(4000.0), 3.0), path) == 32
    assert np.isfinite(float(path.read_text().splitlines()[1].split(",")[1]))


CHILD = textwrap.dedent("""
    import resource, signal, sys, time
    from pathlib import Path
    sys.path.insert(0, {tests!r})
    from test_csv_disk_full import record_until_full, whole_rows
    from gpumon.telemetry.history.csv_export import history_table, write_history_csv
    from gpumon.telemetry.history.store import History
    from test_csv_disk_full import snap
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG instead of a killed process
    resource.setrlimit(resource.RLIMIT_FSIZE, (65536, 65536))
    folder = Path(sys.argv[1])
    writer, errors = record_until_full(folder / "rec.csv")
    rows = whole_rows((folder / "rec.csv").read_bytes())
    print(writer.failed, rows == writer.rows, rows > 8, errors)
    (folder / "export.csv").write_text("the export before\\n")
    history = History(4000)
    for t in range(4000):
        history.append(snap(float(t)))
    try:
        write_history_csv(history_table(history, snap(4000.0), 1e9), folder / "export.csv")
    except OSError as exc:
        print("export failed:", exc.strerror)
    print(sorted(p.name for p in folder.iterdir()), (folder / "export.csv").read_text())
""")


def test_a_file_size_limit_ends_a_recording_on_a_whole_row_and_an_export_cleanly(
        tmp_path: Path) -> None:
    code = CHILD.format(tests=str(Path(__file__).parent))
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True,
                          text=True, timeout=120, check=False, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith(f"True True True ['{DISK_FULL}"), lines
    assert lines[1] == "export failed: File too large"
    assert lines[2] == "['export.csv', 'rec.csv'] the export before"
