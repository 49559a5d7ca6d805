"""The lines of a recording: what ``gpumon stream`` writes, plus the window's marks.

A recording is a snapshot stream (``text/json_in.py``) in a file, gzip-compressed when its
name ends in ``.gz``: an optional header line, one ``gpumon.snapshot/1`` document a line,
and marks, lines of their own kind (docs/recording.md, docs/recording.schema.json):

    {"mark": "gpumon.mark/1", "kind": "action", "timestamp_epoch_s": ..., "text": "...",
     "gpu_index": 0}

``classify`` tells the kind of a line and its time from its first bytes, without decoding the
whole line: the index of a 5 GB file reads each line once, and decoding 20 kB of JSON for
each snapshot would take minutes. The full, checked decode (``decode_snapshot``) runs only
on the lines that are shown.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import math
import re
from typing import Any

from gpumon.i18n import tr
from gpumon.text.json_in import STREAM, StreamError, load_line
from gpumon.text.json_out import SCHEMA

MARK = "gpumon.mark/1"
MAX_MARK_TEXT = 500
HEAD_BYTES = 512  # json_out puts schema and timestamp_epoch_s in the first ~90 bytes


class MarkKind(enum.Enum):
    ACTION = "action"  # a playground action (its code line)
    LESSON = "lesson"  # a lesson step
    HEALTH = "health"  # a health event (an XID, ECC errors, a throttle)


@dataclasses.dataclass(frozen=True, slots=True)
class Mark:
    """A moment the window marked: what happened, and on which GPU (None: all, or none)."""

    timestamp_s: float
    kind: MarkKind
    text: str
    gpu_index: int | None = None


def mark_line(mark: Mark) -> str:
    """One mark as a line of the recording (without its newline)."""
    return json.dumps({"mark": MARK, "kind": mark.kind.value,
                       "timestamp_epoch_s": round(mark.timestamp_s, 3),
                       "text": mark.text[:MAX_MARK_TEXT], "gpu_index": mark.gpu_index},
                      ensure_ascii=False, allow_nan=False)


def decode_mark(line: bytes | str) -> Mark:
    """A mark line as a Mark; StreamError with a sentence when it is not a valid one."""
    doc = load_line(line)
    if not isinstance(doc, dict) or doc.get("mark") != MARK:
        raise StreamError(tr("a line is not a mark"))
    try:
        kind = MarkKind(doc.get("kind"))
    except ValueError:
        raise StreamError(tr("a mark's kind is not valid")) from None
    t, text, gpu = doc.get("timestamp_epoch_s"), doc.get("text"), doc.get("gpu_index")
    if (isinstance(t, bool) or not isinstance(t, (int, float)) or not math.isfinite(t)
            or not isinstance(text, str)
            or not (gpu is None or (isinstance(gpu, int) and not isinstance(gpu, bool)
                                    and 0 <= gpu < 4096))):
        raise StreamError(tr("a mark's time, text or GPU is not valid"))
    return Mark(float(t), kind, text[:MAX_MARK_TEXT], gpu)


class LineKind(enum.Enum):
    HEADER = "header"
    SNAPSHOT = "snapshot"
    MARK = "mark"
    OTHER_SCHEMA = "other_schema"  # a snapshot of a schema this gpumon does not read
    GARBAGE = "garbage"  # not JSON, or JSON that is none of the above


_SCHEMA = re.compile(rb'^\s*\{\s*"schema"\s*:\s*"([^"\\]{0,64})"')
_TIME = re.compile(rb'"timestamp_epoch_s"\s*:\s*(-?\d{1,12}(?:\.\d{1,9})?)\s*[,}]')
_MARK = re.compile(rb'^\s*\{\s*"mark"\s*:\s*"')
_HEADER = re.compile(rb'^\s*\{\s*"stream"\s*:\s*"')


@dataclasses.dataclass(frozen=True, slots=True)
class LineFacts:
    kind: LineKind
    timestamp_s: float | None = None
    schema: str | None = None


def classify(line: bytes) -> LineFacts:
    """The kind and time of ``line`` from its first bytes where gpumon wrote it, else from
    the whole line parsed (another program's key order); never raises."""
    head = line[:HEAD_BYTES]
    if _HEADER.match(head):
        return LineFacts(LineKind.HEADER)
    if _MARK.match(head):
        return LineFacts(LineKind.MARK, _time_in(head))
    schema = _SCHEMA.match(head)
    if schema is not None:
        name = schema.group(1).decode("ascii", "replace")
        if name != SCHEMA:
            return LineFacts(LineKind.OTHER_SCHEMA, schema=name)
        t = _time_in(head)
        if t is not None:
            return LineFacts(LineKind.SNAPSHOT, t, name)
    return _parsed(line)


def _time_in(head: bytes) -> float | None:
    found = _TIME.search(head)
    return float(found.group(1)) if found is not None else None


def _parsed(line: bytes) -> LineFacts:
    try:
        doc: Any = load_line(line)
    except StreamError:
        return LineFacts(LineKind.GARBAGE)
    if not isinstance(doc, dict):
        return LineFacts(LineKind.GARBAGE)
    t: Any = doc.get("timestamp_epoch_s")
    time_ok = (isinstance(t, (int, float)) and not isinstance(t, bool) and math.isfinite(t))
    if doc.get("stream") == STREAM:
        return LineFacts(LineKind.HEADER)
    if doc.get("mark") == MARK and time_ok:
        return LineFacts(LineKind.MARK, float(t))
    schema = doc.get("schema")
    if isinstance(schema, str) and schema != SCHEMA and schema.startswith("gpumon.snapshot/"):
        return LineFacts(LineKind.OTHER_SCHEMA, schema=schema[:64])
    if schema == SCHEMA and time_ok:
        return LineFacts(LineKind.SNAPSHOT, float(t), schema)
    return LineFacts(LineKind.GARBAGE)
