"""The window's recording in gpumon's own format: the snapshot stream and the marks, in a
file (gzip when its name ends in ``.gz``), written on a worker thread of its own.

The CSV recording's writer (``telemetry/history/csv_record.py``) does the threading, the
flushing about once a second and the sentence on a write error; this one writes the header
line ``gpumon stream`` writes, one ``--json`` document a snapshot and one line a mark, with
the encoders those use. A cut file (a crash) is readable up to its last whole line; a gzip
file flushed each second is readable up to its last flush.
"""

from __future__ import annotations

import contextlib
import gzip
from collections.abc import Callable
from pathlib import Path

from gpumon.recording.lines import Mark, mark_line
from gpumon.telemetry.history.csv_record import FLUSH_EVERY_S, CsvRecordWriter, Sink
from gpumon.telemetry.model.types import Snapshot
from gpumon.text.json_in import header_line
from gpumon.text.json_out import snapshot_json

SUFFIXES = (".jsonl", ".jsonl.gz", ".json.gz", ".gz", ".json")


def is_stream_path(path: str | Path) -> bool:
    """Whether ``path`` names a recording of this format (else: CSV)."""
    return str(path).lower().endswith(SUFFIXES)


class StreamRecordWriter(CsvRecordWriter):
    """One recording in the stream format: snapshots (``add``) and marks (``add_mark``)."""

    def __init__(self, path: str | Path, on_error: Callable[[str], None],
                 interval_s: float | None = None,
                 flush_every_s: float = FLUSH_EVERY_S) -> None:
        self.interval_s = interval_s or 1.0
        super().__init__(path, on_error, flush_every_s)

    def _open_file(self) -> Sink:
        gz = self.path.name.lower().endswith(".gz")
        # A gzip file cannot be cut back to a whole line: its reader stops at its last
        # whole line instead (recording/reader.py).
        self._cut_back = not gz
        f: Sink = (gzip.open(self.path, "wb", compresslevel=6) if gz
                   else self.path.open("wb", buffering=0))
        try:
            self._pending += (header_line(self.interval_s) + "\n").encode("utf-8")
            self._write_pending(f)
            f.flush()
        except OSError:
            with contextlib.suppress(OSError):
                f.close()
            raise
        return f

    def add_mark(self, mark: Mark) -> None:
        """Queue one mark (any thread)."""
        self.put(mark)

    def _write(self, item: object) -> None:
        if isinstance(item, Snapshot):
            self._pending += (snapshot_json(item) + "\n").encode("utf-8")
            self._pending_rows += 1
        elif isinstance(item, Mark):
            self._pending += (mark_line(item) + "\n").encode("utf-8")
