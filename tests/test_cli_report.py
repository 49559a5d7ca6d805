"""--once / --watch output forms (-q, --uuid, --json, --csv), their schema, argument errors."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from testkit import jsonschema_or_skip

from gpumon.cli.main import main
from gpumon.telemetry.history.csv_rows import record_header

SCHEMA = json.loads((Path(__file__).resolve().parents[1] / "docs" / "snapshot.schema.json")
                    .read_text(encoding="utf-8"))


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def test_once_json_matches_the_schema_and_says_simulated(
        capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = _run(capsys, "--simulate", "3", "--once", "--json")
    assert (rc, err) == (0, "")
    assert out.count("\n") == 1  # one document, one line
    doc = json.loads(out)
    jsonschema_or_skip().validate(doc, SCHEMA)
    assert doc["simulated"] is True and all(g["simulated"] for g in doc["gpus"])
    assert [g["index"] for g in doc["gpus"]] == [0, 1, 2]
    g = doc["gpus"][0]
    assert g["mem_used_bytes"] + g["mem_reserved_bytes"] + g["mem_free_bytes"] \
        == g["mem_total_bytes"]
    assert doc["processes"] and all(p["type"] in ("C", "G", "C+G") for p in doc["processes"])


def test_schema_names_every_key_json_writes() -> None:
    from gpumon.text.json_out import SAMPLE_KEYS

    gpu = SCHEMA["$defs"]["gpu"]
    assert set(SAMPLE_KEYS) <= set(gpu["required"]) == set(gpu["properties"])
    assert set(SCHEMA["required"]) == set(SCHEMA["properties"])


def test_schema_rejects_what_it_should() -> None:
    bad = {"schema": "gpumon.snapshot/1"}
    jsonschema = jsonschema_or_skip()
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, SCHEMA)


def test_once_csv_has_the_recorder_columns(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = _run(capsys, "--simulate", "2", "--once", "--csv")
    assert rc == 0
    rows = list(csv.reader(io.StringIO(out)))
    assert rows[0] == record_header()
    assert [r[2] for r in rows[1:]] == ["0", "1"]
    assert "mem_free_bytes [B]" in rows[0] and "mem_reserved_bytes [B]" in rows[0]


def test_watch_csv_writes_the_header_once(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = _run(capsys, "--simulate", "2", "-l", "0.1", "--count", "3", "--csv")
    assert rc == 0
    rows = list(csv.reader(io.StringIO(out)))
    assert rows[0] == record_header() and len(rows) == 1 + 3 * 2
    assert record_header() not in rows[1:]


def test_watch_json_is_one_document_per_line(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = _run(capsys, "--simulate", "1", "--watch", "0.1", "--count", "3", "--json")
    assert rc == 0
    docs = [json.loads(line) for line in out.splitlines()]
    assert len(docs) == 3
    stamps = [d["timestamp_epoch_s"] for d in docs]
    gaps = [b - a for a, b in zip(stamps, stamps[1:], strict=False)]
    assert min(gaps) >= 0.05


def test_query_detail_has_what_the_table_leaves_out(capsys: pytest.CaptureFixture[str]) -> None:
    rc, table, _ = _run(capsys, "--simulate", "2", "--once")
    rc2, detail, _ = _run(capsys, "--simulate", "2", "--once", "-q")
    assert rc == rc2 == 0
    assert max(len(line) for line in table.splitlines()) <= 91  # nvidia-smi's width
    for needle in ("GPU UUID", "Free", "Reserved", "Encoder", "Decoder", "Tx Throughput",
                   "Rx Throughput", "SM", "Memory", "Current Power Limit", "Processes"):
        assert needle in detail, needle
    uuids = [line.split(":", 1)[1].strip() for line in detail.splitlines() if "GPU UUID" in line]
    assert len(uuids) == 2 and all(u.startswith("GPU-") for u in uuids)


def test_uuid_adds_a_line_under_each_gpu(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = _run(capsys, "--simulate", "2", "--once", "--uuid")
    assert rc == 0
    lines = [line for line in out.splitlines() if "UUID: GPU-" in line]
    assert len(lines) == 2 and all(len(line) == 91 for line in lines)


def test_watch_imports_no_qt() -> None:
    code = ("import sys; from gpumon.cli.main import main; "
            "rc = main(['--simulate', '2', '-l', '0.1', '--count', '2']); "
            "print('QT' if any(m.startswith('PySide6') for m in sys.modules) else 'no Qt', rc)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.rstrip().endswith("no Qt 0")
    assert done.stdout.count("Processes:") == 2


@pytest.mark.parametrize(("argv", "first"), [
    (["--simulate", "0"], "gpumon: error: argument --simulate: must be a whole number of GPUs"),
    (["--bogus"], "gpumon: error: unrecognized arguments: --bogus"),
    (["--seed", "3"], "gpumon: error: --seed only applies to simulated GPUs"),
    (["--seed", "3", "--once"], "gpumon: error: --seed only applies to simulated GPUs"),
    (["--json"], "gpumon: error: --json applies to --once or --watch"),
    (["-q"], "gpumon: error: -q applies to --once or --watch"),
    (["--once", "--count", "2"], "gpumon: error: --count applies to --watch"),
    (["--once", "--json", "--csv"], "gpumon: error: argument --csv: not allowed with"),
    (["-l", "0"], "gpumon: error: argument -l/--watch: must be a number of seconds"),
])
def test_argument_errors_are_one_line_and_a_hint(capsys: pytest.CaptureFixture[str],
                                                 argv: list[str], first: str) -> None:
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and err[0].startswith(first), err
    assert err[1] == "Try 'gpumon --help' for usage."


def test_lesson_step_out_of_range_names_the_lesson_usage(
        capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["lesson", "--step", "999"])
    assert exited.value.code == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("gpumon lesson: error: --step must be from 1 to ")
    assert err[0].endswith("got 999") and err[1] == "Try 'gpumon lesson --help' for usage."


def test_no_display_says_so_instead_of_qt_aborting(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items()
           if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    env["XDG_CONFIG_HOME"] = str(tmp_path)
    done = subprocess.run([sys.executable, "-m", "gpumon", "--simulate", "1"], env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert done.stderr == "gpumon: no display: set DISPLAY or use --once\n"
