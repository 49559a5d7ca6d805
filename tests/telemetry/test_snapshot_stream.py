"""The snapshot stream read back (text/json_in.py): what --json writes decodes to the same
Snapshot, and what a hostile or broken remote sends is refused with a sentence."""

from __future__ import annotations

import json

import pytest

from gpumon.telemetry.model.types import SourceState
from gpumon.telemetry.sources.sampler import Sampler
from gpumon.telemetry.sources.simulated import SimulatedSource
from gpumon.text.json_in import (
    MAX_GPUS,
    StreamError,
    decode_header,
    decode_snapshot,
    header_line,
)
from gpumon.text.json_out import snapshot_json


def _lines(n_gpus: int = 4, ticks: int = 3) -> list[str]:
    sampler = Sampler(SimulatedSource(n_gpus=n_gpus, seed=3))
    try:
        return [snapshot_json(sampler.tick()) for _ in range(ticks)]
    finally:
        sampler.close()


def _without_self(doc: dict) -> dict:  # type: ignore[type-arg]
    for p in doc["processes"]:
        p["is_self"] = False  # the remote gpumon is never this process
        p.pop("run_time_s")  # counted to the snapshot's time (to the ms in the document)
    return doc


def test_every_field_comes_back_as_it_was_written() -> None:
    for line in _lines():
        snap = decode_snapshot(line)
        back = json.loads(snapshot_json(snap))
        run_times = [(p["run_time_s"], q["run_time_s"]) for p, q in zip(
            back["processes"], json.loads(line)["processes"], strict=True)]
        assert all(abs(a - b) < 0.002 for a, b in run_times if a is not None)
        assert _without_self(back) == _without_self(json.loads(line))
        assert snap.topology is not None and len(snap.samples) == 4


def test_the_header_names_gpumon_and_the_schema() -> None:
    header = decode_header(header_line(0.5))
    assert header.schema == "gpumon.snapshot/1" and header.interval_s == 0.5
    other = json.dumps({"stream": "gpumon.stream/1", "gpumon": "2.0",
                        "schema": "gpumon.snapshot/2"})
    with pytest.raises(StreamError, match="gpumon.snapshot/2.*gpumon 2.0"):
        decode_header(other)
    with pytest.raises(StreamError, match="not a gpumon stream"):
        decode_header('{"hello": 1}')


def _doc() -> dict:  # type: ignore[type-arg]
    return json.loads(_lines(2, 1)[0])


@pytest.mark.parametrize("change, words", [
    (lambda d: d.update(gpus=[{**d["gpus"][0], "mem_used_bytes": "lots"}]),
     "mem_used_bytes"),
    (lambda d: d.update(gpus=[{**d["gpus"][0], "gpu_util_pct": 250}]), "gpu_util_pct"),
    (lambda d: d.update(gpus=[{**d["gpus"][0], "mem_used_bytes": -1}]), "mem_used_bytes"),
    (lambda d: d.update(gpus=[{**d["gpus"][0], "lost": "no"}]), "lost"),
    (lambda d: d.update(gpus=[d["gpus"][0], d["gpus"][0]]), "same index"),
    (lambda d: d.update(gpus=[d["gpus"][0]] * (MAX_GPUS + 1)), "more than"),
    (lambda d: d.update(status={"state": "owned", "message": "", "hint": ""}), "status"),
    (lambda d: d.update(schema="gpumon.snapshot/0"), "schema"),
    (lambda d: d.update(processes=[{**d["processes"][0], "type": "X"}]), "type"),
    (lambda d: d.update(topology={**d["topology"], "paths": [["X"]]}), "paths"),
])
def test_a_document_that_breaks_the_schema_is_refused(change, words: str) -> None:
    doc = _doc()
    change(doc)
    with pytest.raises(StreamError, match=words):
        decode_snapshot(json.dumps(doc))


@pytest.mark.parametrize("line", [
    b"not json", b"[1, 2]", b'{"schema": "gpumon.snapshot/1", "timestamp_epoch_s": NaN}',
    b"[" * 200_000, b"\xff\xfe{", b"", b"null",
])
def test_lines_that_are_not_snapshots(line: bytes) -> None:
    with pytest.raises(StreamError):
        decode_snapshot(line)


def test_remote_text_is_kept_raw_but_capped() -> None:
    """Names and command lines are shown escaped by the views; the decoder caps them."""
    doc = _doc()
    doc["processes"][0]["command"] = "\x1b]0;owned\x07" + "x" * 100_000
    doc["gpus"][0]["name"] = "N" * 10_000
    snap = decode_snapshot(json.dumps(doc))
    assert len(snap.processes[0].command or "") == 4096
    assert len(snap.gpus[0].name) == 256
    assert snap.status.state in (SourceState.OK, SourceState.SIMULATED)
