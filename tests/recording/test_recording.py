"""Recordings read back without Qt: the index, seeking, ``--at``, and a sentence for each way
a file can be bad (a cut last line, another schema, garbage, a cut gzip file, GPUs coming
and going), with no traceback."""

from __future__ import annotations

import gzip
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpumon.recording.lines import Mark, MarkKind, mark_line
from gpumon.recording.reader import Recording, RecordingError
from gpumon.recording.source import RecordingSource
from gpumon.telemetry.model.metrics import HISTORY_KEYS, value_of
from gpumon.text.json_in import decode_snapshot

pytestmark = pytest.mark.xdist_group("test_recording")  # its module fixture: made once

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "simulated-2gpus.jsonl.gz"


def _gpumon(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "gpumon", *args], capture_output=True,
                          text=True, timeout=60, env=env, cwd=ROOT)


@pytest.fixture(scope="module")
def watched(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A recording made the command-line way: ``gpumon -l --json > run.jsonl``."""
    out = _gpumon("--simulate", "2", "-l", "0.1", "--count", "6", "--json")
    assert out.returncode == 0, out.stderr
    path = tmp_path_factory.mktemp("rec") / "run.jsonl"
    path.write_text(out.stdout)
    return path


def _lines(path: Path) -> list[str]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:  # type: ignore[operator]
        return f.read().splitlines()


def _same(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is b
    return a == b or (math.isnan(a) and math.isnan(b))


def test_a_watch_with_json_is_a_recording_read_back_exactly(watched: Path) -> None:
    rec = Recording(watched)
    lines = _lines(watched)
    assert len(rec) == 6 == len(lines) and rec.problems() == []
    assert rec.header is None and rec.host == decode_snapshot(lines[0]).machine.host_name
    for i, line in enumerate(lines):
        recorded, read = decode_snapshot(line), rec.read(i)
        assert read is not None and read.timestamp_s == recorded.timestamp_s == rec.times[i]
        for a, b in zip(recorded.samples, read.samples, strict=True):
            assert all(_same(value_of(a, k), value_of(b, k)) for k in HISTORY_KEYS)
    rec.close()


def test_the_checked_in_recording_has_a_header_and_seeks(tmp_path: Path) -> None:
    rec = Recording(DATA)
    assert rec.header is not None and rec.header.interval_s == 0.5 and len(rec) == 30
    assert rec.interval_s == 0.5 and rec.problems() == []
    t = rec.start_s + 3.2
    snap = rec.at_or_before(t)
    assert snap is not None and snap.timestamp_s == rec.times[rec.index_at(t)] <= t
    assert rec.times[rec.index_at(t) + 1] > t
    clock = rec.clock(t).strftime("%H:%M:%S")
    assert rec.index_at(rec.time_of(clock)) == rec.index_at(t) or abs(
        rec.time_of(clock) - t) < 1.0
    assert rec.time_of("3.2") == pytest.approx(t)
    for bad in ("soon", "25:00:00", "-3", "1:2:3:4"):
        with pytest.raises(ValueError, match="is not a time"):
            rec.time_of(bad)
    rec.close()


def test_replay_source_backfills_every_recorded_snapshot() -> None:
    rec = Recording(DATA)
    now = [0.0]
    source = RecordingSource(rec, backfill_s=300.0, clock=lambda: now[0])
    assert source.open().usable and "recording of" in source.title()
    first = source.sample()
    assert first.timestamp_s == rec.start_s and first.machine.source_name == "Recording"
    assert source.sample() is first  # the clock stands: nothing new
    source.clock.set_speed(10.0)
    source.clock.set_playing(True)
    now[0] = 1.0  # ten seconds of the recording
    snap = source.sample()
    got = [s.timestamp_s for s in (*snap.backfill, snap)]
    assert got == list(rec.times[1:rec.index_at(rec.start_s + 10.0) + 1])
    again = source.sample()  # nothing new: the same snapshot, its backfill not given twice
    assert again.timestamp_s == snap.timestamp_s and again.backfill == ()
    assert source.sample() is again
    source.clock.seek(rec.times[4])  # back: the window before it again
    snap = source.sample()
    assert [s.timestamp_s for s in (*snap.backfill, snap)] == list(rec.times[:5])
    now[0] = 100.0  # past the end: it stands at the last snapshot and stops playing
    assert source.sample().timestamp_s == rec.end_s and not source.clock.playing
    source.close()


def _write(path: Path, lines: list[str], end: str = "\n") -> Path:
    path.write_text("\n".join(lines) + end, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def good() -> list[str]:
    return _lines(DATA)


def test_a_cut_last_line_is_left_out_with_a_sentence(tmp_path: Path, good: list[str]) -> None:
    path = _write(tmp_path / "cut.jsonl", [*good[:5], good[5][:300]], end="")
    rec = Recording(path)
    assert len(rec) == 4  # the header and four whole snapshots
    assert any("is cut off" in p for p in rec.problems())
    rec.close()


def test_another_schema_is_a_sentence(tmp_path: Path, good: list[str]) -> None:
    other = [json.dumps({**json.loads(line), "schema": "gpumon.snapshot/9"})
             for line in good[1:4]]
    header = json.dumps({**json.loads(good[0]), "schema": "gpumon.snapshot/9"})
    rec = Recording(_write(tmp_path / "other.jsonl", [header, *other]))
    problems = " ".join(rec.problems())
    assert len(rec) == 0 and "gpumon.snapshot/9" in problems and "3 snapshots" in problems
    assert "holds no snapshot" in problems
    rec.close()


def test_garbage_lines_are_counted_and_skipped(tmp_path: Path, good: list[str]) -> None:
    lines = [good[0], good[1], "not json at all", "[1, 2]", good[2], "\x00\x01", good[3],
             '{"schema": "gpumon.snapshot/1", "timestamp_epoch_s": 1e308000}']
    rec = Recording(_write(tmp_path / "garbage.jsonl", lines))
    assert len(rec) == 3
    assert any(p.startswith("4 lines") and "not part of a gpumon recording" in p
               for p in rec.problems())
    rec.close()


def test_a_snapshot_that_does_not_decode_is_skipped_when_shown(tmp_path: Path,
                                                               good: list[str]) -> None:
    doc = json.loads(good[2])
    doc["gpus"][0]["gpu_util_pct"] = 250  # over 100 %: the decoder refuses it
    rec = Recording(_write(tmp_path / "bad.jsonl", [good[1], json.dumps(doc), good[3]]))
    assert len(rec) == 3
    snap = rec.at_or_before(rec.times[1])
    assert snap is not None and snap.timestamp_s == rec.times[0]  # the one before it
    assert any("could not be read" in p and "gpu_util_pct" in p for p in rec.problems())
    rec.close()


def test_a_cut_gzip_file_shows_what_came_before(tmp_path: Path) -> None:
    data = DATA.read_bytes()
    path = tmp_path / "cut.jsonl.gz"
    path.write_bytes(data[: len(data) // 2])
    rec = Recording(path)
    assert 0 < len(rec) < 30
    assert any("ends early" in p for p in rec.problems())
    rec.close()


def test_gpus_that_come_and_go_stay_on_screen_lost(tmp_path: Path, good: list[str]) -> None:
    lines = []
    for i, line in enumerate(good[1:7]):
        doc = json.loads(line)
        if i in (2, 3):
            doc["gpus"] = doc["gpus"][:1]  # GPU 1 is gone for two snapshots
        lines.append(json.dumps(doc))
    rec = Recording(_write(tmp_path / "gone.jsonl", lines))
    source = RecordingSource(rec, backfill_s=0.0)
    source.open()
    source.clock.seek(rec.times[3])
    snap = source.sample()
    gone = snap.sample_for(1)
    assert gone is not None and gone.lost and "not in the recording" in gone.message
    assert [g.index for g in snap.gpus] == [0, 1]
    source.clock.seek(rec.times[5])
    back = source.sample().sample_for(1)
    assert back is not None and not back.lost
    source.close()


def test_marks_are_read_and_bad_ones_counted(tmp_path: Path, good: list[str]) -> None:
    t = json.loads(good[2])["timestamp_epoch_s"]
    mark = mark_line(Mark(t, MarkKind.ACTION, "x = torch.ones(3, device='cuda:0')", 0))
    bad = json.dumps({"mark": "gpumon.mark/1", "kind": "nonsense", "timestamp_epoch_s": t,
                      "text": "?"})
    rec = Recording(_write(tmp_path / "marks.jsonl", [good[0], good[1], mark, bad, good[2]]))
    assert rec.marks == [Mark(t, MarkKind.ACTION, "x = torch.ones(3, device='cuda:0')", 0)]
    assert len(rec) == 2 and any("1 line" in p for p in rec.problems())
    rec.close()


def test_a_missing_file_is_a_sentence(tmp_path: Path) -> None:
    with pytest.raises(RecordingError, match="Cannot read nothere.jsonl"):
        Recording(tmp_path / "nothere.jsonl")


@pytest.mark.parametrize("content", ["", "garbage\n", "\x1f\x8bnot really gzip"])
def test_the_command_line_says_what_is_wrong_without_a_traceback(tmp_path: Path,
                                                                 content: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(content, encoding="latin-1")
    out = _gpumon("--replay", str(path), "--once")
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert "holds no snapshot" in out.stderr


def test_replay_at_prints_the_last_snapshot_at_or_before(good: list[str]) -> None:
    times = [json.loads(line)["timestamp_epoch_s"] for line in good[1:]]
    at = times[4] - times[0] + 0.2  # between the fifth and the sixth
    out = _gpumon("--replay", str(DATA), "--at", f"{at}", "--once", "--json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    recorded = json.loads(good[5])
    assert doc["timestamp_epoch_s"] == recorded["timestamp_epoch_s"]
    assert [g["mem_used_bytes"] for g in doc["gpus"]] == [
        g["mem_used_bytes"] for g in recorded["gpus"]]
    text = _gpumon("--replay", str(DATA), "--at", f"{at}", "--once")
    assert text.returncode == 0 and "Source: Recording" in text.stdout
    bad = _gpumon("--replay", str(DATA), "--at", "tomorrow", "--once")
    assert bad.returncode == 2 and "is not a time" in bad.stderr
    assert "Traceback" not in bad.stderr
    alone = _gpumon("--at", "90", "--once")
    assert alone.returncode == 2 and "--replay" in alone.stderr


def test_the_header_and_a_mark_follow_the_documented_schema() -> None:
    from testkit import jsonschema_or_skip

    from gpumon.text.json_in import header_line

    jsonschema = jsonschema_or_skip()
    schema = json.loads((ROOT / "docs" / "recording.schema.json").read_text())
    defs = schema["$defs"]
    jsonschema.validate(json.loads(header_line(1.0)), {**defs["header"], "$defs": defs})
    line = mark_line(Mark(1.5, MarkKind.HEALTH, "GPU 1: XID 79", 1))
    jsonschema.validate(json.loads(line), {**defs["mark"], "$defs": defs})
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**json.loads(line), "kind": "other"}, defs["mark"])


def test_the_exporter_records_its_readings_with_a_flag(tmp_path: Path) -> None:
    import signal
    import socket
    import time

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    path = tmp_path / "exporter.jsonl"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "gpumon", "exporter", "--simulate", "2",
                             "--interval", "0.2", "--listen", f"127.0.0.1:{port}",
                             "--record", str(path)], cwd=ROOT, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if path.exists() and path.read_text().count('"schema": "gpumon.snapshot/1"') >= 4:
                break
            time.sleep(0.2)
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0 and "Traceback" not in out
    rec = Recording(path)
    assert len(rec) >= 4 and rec.problems() == [] and rec.header is not None
    assert rec.header.interval_s == 0.2 and len(set(rec.times)) == len(rec)
    first = rec.read(0)
    assert first is not None and len(first.gpus) == 2
    rec.close()
    bad = _gpumon("exporter", "--simulate", "1", "--record", str(tmp_path / "no" / "x.jsonl"))
    assert bad.returncode == 1 and "cannot record to" in bad.stderr
