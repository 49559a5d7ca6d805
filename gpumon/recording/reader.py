"""A recording read back: indexed once, then any moment read without holding the file.

``Recording(path)`` reads the file once, line by line, and keeps for each snapshot only its
time and where its line starts (16 bytes: a 5 GB file of 8 GPUs, ~300,000 snapshots, needs
~5 MB), and the marks (at most ``MAX_MARKS``). A snapshot is decoded, and checked as every
untrusted line is (``text/json_in.py``), only when it is shown. Whatever is wrong with the file
becomes a counted sentence (``problems()``), never an exception: a cut last line (a crash
while recording), snapshots of another schema, lines that are not gpumon's, a compressed file
that ends early, snapshots whose clock went back; what is readable is kept.
"""

from __future__ import annotations

import bisect
import re
import threading
import zlib
from array import array
from collections.abc import Iterator
from datetime import datetime, timedelta, tzinfo
from pathlib import Path
from typing import BinaryIO

from gpumon.i18n import ntr, tr
from gpumon.recording.gzseek import Checkpoints, open_gzip
from gpumon.recording.lines import (
    HEAD_BYTES,
    LineKind,
    Mark,
    classify,
    decode_mark,
)
from gpumon.telemetry.model.types import Snapshot
from gpumon.text.json_in import (
    StreamError,
    StreamHeader,
    decode_header,
    decode_snapshot,
    load_line,
)
from gpumon.text.json_out import SCHEMA
from gpumon.untrusted import for_terminal

MAX_LINE = 32 << 20  # a snapshot of 4,096 processes with long command lines is ~16 MB
MAX_MARKS = 100_000
_GZIP_MAGIC = b"\x1f\x8b"
_ISO = re.compile(rb'"timestamp_iso"\s*:\s*"([0-9T:.+\-Z ]{10,40})"')


class RecordingError(Exception):
    """The file cannot be read at all; ``str()`` is the sentence."""


def _open(path: Path, points: Checkpoints) -> BinaryIO:
    """The file's bytes, decompressed when it is gzip (by its first bytes, not its name),
    with jumps resumed from ``points`` (gzseek.py)."""
    raw = path.open("rb")
    try:
        magic = raw.read(2)
        raw.seek(0)
    except OSError:
        raw.close()
        raise
    if magic == _GZIP_MAGIC:
        raw.close()
        return open_gzip(path, points)
    return raw


class Recording:
    """One recording file, indexed; thread-safe reads (one lock around the file)."""

    def __init__(self, path: str | Path) -> None:
        """Index ``path``; RecordingError with a sentence when it cannot be opened at all."""
        self.path = Path(path)
        self.name = for_terminal(self.path.name)
        self.times = array("d")  # each snapshot's timestamp_epoch_s, ascending
        self.offsets = array("q")  # where its line starts in the (decompressed) file
        self.marks: list[Mark] = []
        self.header: StreamHeader | None = None
        self._header_problem = ""
        self._counts: dict[str, int] = {}
        self._other_schema = ""
        self._end_problem = ""  # the file ends badly (cut line, compressed data ends early)
        self._bad: dict[str, int] = {}  # a shown snapshot that did not decode, by reason
        self._iso_head = b""
        self._lock = threading.Lock()
        self._points = Checkpoints()
        try:
            with _open(self.path, self._points) as f:
                self._index(f)
            self._file: BinaryIO | None = _open(self.path, self._points)
        except OSError as exc:
            raise RecordingError(tr("Cannot read {name}: {reason}.", name=self.name,
                                    reason=exc.strerror or str(exc))) from None
        self.first: Snapshot | None = None
        for i in range(min(len(self.times), 100)):
            self.first = self.read(i)
            if self.first is not None:
                break

    # -- the index -----------------------------------------------------------------------
    def _index(self, f: BinaryIO) -> None:
        offset = 0
        try:
            while True:
                line = f.readline(MAX_LINE)
                if not line:
                    return
                start, offset = offset, offset + len(line)
                if not line.endswith(b"\n"):
                    if len(line) >= MAX_LINE:
                        offset += self._skip_rest(f)
                        self._count("long")
                        continue
                    if not self._whole(line):  # the last line, cut while being written
                        self._end_problem = tr(
                            "The last line of {name} is cut off (the recording stopped while "
                            "writing it): it is left out.", name=self.name)
                        return
                self._take(line, start)
        except (EOFError, zlib.error) as exc:
            self._end_problem = tr(
                "The compressed data of {name} ends early or is damaged ({error}): what "
                "came before is shown.", name=self.name, error=str(exc)[:100])

    @staticmethod
    def _skip_rest(f: BinaryIO) -> int:
        skipped = 0
        while True:
            chunk = f.readline(1 << 20)
            skipped += len(chunk)
            if not chunk or chunk.endswith(b"\n"):
                return skipped

    @staticmethod
    def _whole(line: bytes) -> bool:
        try:
            load_line(line)
        except StreamError:
            return False
        return True

    def _take(self, line: bytes, start: int) -> None:
        if not line.strip():
            return
        facts = classify(line)
        if facts.kind is LineKind.SNAPSHOT and facts.timestamp_s is not None:
            if self.times and facts.timestamp_s < self.times[-1]:
                self._count("order")
                return
            if not self.times:
                self._iso_head = line[:HEAD_BYTES]
            self.times.append(facts.timestamp_s)
            self.offsets.append(start)
        elif facts.kind is LineKind.MARK:
            try:
                mark = decode_mark(line)
            except StreamError:
                self._count("garbage")
                return
            if len(self.marks) < MAX_MARKS:
                self.marks.append(mark)
            else:
                self._count("marks")
        elif facts.kind is LineKind.HEADER:
            try:
                header = decode_header(line)
            except StreamError as exc:
                self._header_problem = tr("{name}: {error}.", name=self.name, error=str(exc))
                return
            if self.header is None:
                self.header = header
        elif facts.kind is LineKind.OTHER_SCHEMA:
            self._other_schema = facts.schema or "?"
            self._count("schema")
        else:
            self._count("garbage")

    def _count(self, key: str, n: int = 1) -> None:
        self._counts[key] = self._counts.get(key, 0) + n

    # -- what the file holds -----------------------------------------------------------
    def __len__(self) -> int:
        return len(self.times)

    @property
    def start_s(self) -> float:
        return self.times[0] if self.times else 0.0

    @property
    def end_s(self) -> float:
        return self.times[-1] if self.times else 0.0

    @property
    def host(self) -> str:
        return self.first.machine.host_name if self.first is not None else "?"

    @property
    def interval_s(self) -> float | None:
        """The interval the header names, else the median gap of the first snapshots."""
        if self.header is not None and self.header.interval_s:
            return self.header.interval_s
        gaps = sorted(b - a for a, b in zip(self.times[:50], self.times[1:51], strict=False))
        return gaps[len(gaps) // 2] if gaps else None

    def zone(self) -> tzinfo | None:
        """The recording machine's time zone, from its first snapshot's ISO time (None: this
        computer's)."""
        found = _ISO.search(self._iso_head)
        if found is None:
            return None
        try:
            return datetime.fromisoformat(found.group(1).decode("ascii")).tzinfo
        except ValueError:
            return None

    def clock(self, t: float) -> datetime:
        """The recording machine's clock at epoch second ``t``."""
        return datetime.fromtimestamp(t, self.zone()) if self.zone() else \
            datetime.fromtimestamp(t).astimezone()

    def problems(self) -> list[str]:
        """Each thing wrong with the file, as a sentence (empty: nothing)."""
        c, name, out = self._counts, self.name, []
        if not self.times:  # the sentence that matters most comes first
            out.append(tr("{name} holds no snapshot this gpumon can read.", name=name))
        if self._header_problem:
            out.append(self._header_problem)
        if c.get("schema"):
            out.append(ntr("{n} snapshot of {name} is of schema {theirs}; this gpumon reads "
                           "{ours}: it was skipped.",
                           "{n} snapshots of {name} are of schema {theirs}; this gpumon reads "
                           "{ours}: they were skipped.", c["schema"], name=name,
                           theirs=for_terminal(self._other_schema), ours=SCHEMA))
        if c.get("garbage"):
            out.append(ntr("{n} line of {name} is not part of a gpumon recording: it was "
                           "skipped.", "{n} lines of {name} are not part of a gpumon "
                           "recording: they were skipped.", c["garbage"], name=name))
        if c.get("long"):
            out.append(ntr("{n} line of {name} is longer than {mib} MiB: it was skipped.",
                           "{n} lines of {name} are longer than {mib} MiB: they were skipped.",
                           c["long"], name=name, mib=MAX_LINE >> 20))
        if c.get("order"):
            out.append(ntr("{n} snapshot of {name} is earlier than the one before it (the "
                           "clock was set back): it was skipped.",
                           "{n} snapshots of {name} are earlier than the ones before them (the "
                           "clock was set back): they were skipped.", c["order"], name=name))
        if c.get("marks"):
            out.append(ntr("{n} mark of {name} beyond the first {most} was left out.",
                           "{n} marks of {name} beyond the first {most} were left out.",
                           c["marks"], name=name, most=MAX_MARKS))
        with self._lock:
            bad = dict(self._bad)
        for why, n in bad.items():
            out.append(ntr("{n} snapshot of {name} could not be read ({error}): it was "
                           "skipped.", "{n} snapshots of {name} could not be read ({error}): "
                           "they were skipped.", n, name=name, error=why))
        if self._end_problem:
            out.append(self._end_problem)
        return out

    # -- reading -------------------------------------------------------------------------
    def index_at(self, t: float) -> int:
        """The index of the last snapshot at or before ``t`` (-1: none is)."""
        return bisect.bisect_right(self.times, t) - 1

    def read(self, i: int) -> Snapshot | None:
        """Snapshot ``i``, decoded and checked; None (and counted) when its line is bad."""
        return next((s for _, s in self.read_range(i, i)), None)

    def read_range(self, first: int, last: int) -> Iterator[tuple[int, Snapshot]]:
        """The snapshots ``first`` to ``last`` (inclusive) that decode, in order."""
        for i in range(max(0, first), min(last, len(self.times) - 1) + 1):
            with self._lock:
                line = self._line_at(self.offsets[i])
            if line is None:
                continue
            try:
                yield i, decode_snapshot(line)
            except StreamError as exc:
                with self._lock:
                    key = str(exc)[:120]
                    self._bad[key] = self._bad.get(key, 0) + 1

    def _line_at(self, offset: int) -> bytes | None:
        f = self._file
        if f is None:
            return None
        try:
            if f.tell() != offset:
                f.seek(offset)
            return f.readline(MAX_LINE)
        except (OSError, EOFError, zlib.error) as exc:
            key = tr("the file could not be read again ({error})", error=str(exc)[:80])
            self._bad[key] = self._bad.get(key, 0) + 1
            return None

    def at_or_before(self, t: float) -> Snapshot | None:
        """The last readable snapshot at or before ``t`` (the first one when ``t`` is
        earlier than the recording)."""
        i = max(0, self.index_at(t))
        for j in range(i, max(-1, i - 1000), -1):
            snap = self.read(j)
            if snap is not None:
                return snap
        return None

    def reopen(self) -> None:
        """Open the file again after ``close()`` (a source opened again)."""
        with self._lock:
            if self._file is None:
                try:
                    self._file = _open(self.path, self._points)
                except OSError:
                    self._file = None  # each read then counts the failure

    def close(self) -> None:
        with self._lock:
            f, self._file = self._file, None
        if f is not None:
            f.close()

    # -- times as people give them ---------------------------------------------------------
    def time_of(self, text: str) -> float:
        """``--at``'s TIME as an epoch second: seconds after the first snapshot (``90``,
        ``1.5``), or a clock time of the recording (``14:05:30``, the first such moment at
        or after its start). ValueError with a sentence otherwise."""
        text = text.strip()
        if ":" not in text:
            try:
                seconds = float(text)
            except ValueError:
                seconds = -1.0
            if not 0.0 <= seconds < 1e9:
                raise ValueError(tr("{text} is not a time: give seconds after the first "
                                    "snapshot (90) or a clock time (14:05:30)",
                                    text=for_terminal(text[:40])))
            return self.start_s + seconds
        parts = text.split(":")
        try:
            h, m = int(parts[0]), int(parts[1])
            s = float(parts[2]) if len(parts) == 3 else 0.0
            if len(parts) > 3 or not (0 <= h < 24 and 0 <= m < 60 and 0 <= s < 60):
                raise ValueError
        except (ValueError, IndexError):
            raise ValueError(tr("{text} is not a time: give seconds after the first "
                                "snapshot (90) or a clock time (14:05:30)",
                                text=for_terminal(text[:40]))) from None
        start = self.clock(self.start_s)
        at = start.replace(hour=h, minute=m, second=int(s), microsecond=int(s % 1 * 1e6))
        if at < start.replace(microsecond=0):
            at += timedelta(days=1)
        return at.timestamp()

    def since_start(self, t: float) -> str:
        """``t`` as H:MM:SS after the start (the time bar, the CLI)."""
        total = max(0, int(t - self.start_s))
        return f"{total // 3600}:{total // 60 % 60:02d}:{total % 60:02d}"


