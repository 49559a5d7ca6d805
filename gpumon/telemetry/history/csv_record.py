"""The window's CSV recording, Qt-free: rows are written on a worker thread of their own.

``CsvRecordWriter`` opens the file and writes its header at once (so a path that cannot be
written fails where the user picked it), then takes snapshots from any thread and writes
them on its thread, flushing about once a second. Columns follow the history export: the
metrics, this process's memory, then every extra series (torch's allocator counters). A
series that appears later starts a new *section*: an empty line, then the header again with
the new columns at its end; the columns before keep their places. A write error stops the
recording and is handed to ``on_error`` as a sentence, never raised. Rows are kept in memory
between flushes and written whole; when a write fails (a full disk) the file is cut back to
its last whole row, so a reader never meets half a row, and the sentence says the disk is full.

The metric columns are ``metrics.METRICS``'s, each named with its raw unit
(``gpu_util_pct [%]``). Among them, GPM's activity (Hopper and newer; model/activity.py), in
percent of the time between two readings: ``graphics_active_pct`` (a graphics or compute
engine busy), ``sm_active_pct`` (SMs with at least one warp), ``sm_occupancy_pct`` (resident
warps over the SMs' maximum), ``tensor_active_pct`` and its ``tensor_hmma``/``imma``/``dfma``
kinds, ``dram_active_pct`` (the memory interface), ``fp64``/``fp32``/``fp16``/``int`` pipe
activity, ``nvdec``/``nvjpg``/``nvofa``/``nvenc`` (mean over the engines); then
``nvlink_rx_bytes_per_s`` and ``nvlink_tx_bytes_per_s`` (all links). A cell is empty where the
GPU has no GPM, GPM is off (``--no-gpm``), its first reading is still warming up, or the GPU
does not answer that metric: never a 0 for "not known". ``pcie_*_bytes_per_s`` are GPM's on a
GPU with GPM.
"""

from __future__ import annotations

import contextlib
import csv
import errno
import io
import os
import queue
import threading
import time
from collections.abc import Callable
from pathlib import Path

from gpumon.i18n import tr
from gpumon.telemetry.history.csv_rows import extra_values, record_header, record_rows
from gpumon.telemetry.model.metrics import SELF_MEM_KEY
from gpumon.telemetry.model.types import Snapshot

FLUSH_EVERY_S = 1.0
_FLUSH = object()  # a request to flush now
_STOP = object()  # the end of the recording
# What a full disk says: no space, the user's quota, or a file-size limit (RLIMIT_FSIZE).
DISK_FULL = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})
# What a recording writes to: a raw file, or a gzip file (a buffered stream).
Sink = io.RawIOBase | io.BufferedIOBase


def reason(exc: OSError) -> str:
    """The short reason of an OSError ("No space left on device")."""
    return exc.strerror or str(exc)


class CsvRecordWriter:
    """One recording: a file, a queue of snapshots and the thread that writes them."""

    def __init__(self, path: str | Path, on_error: Callable[[str], None],
                 flush_every_s: float = FLUSH_EVERY_S) -> None:
        """Create (truncate) ``path`` and write the header; OSError if it cannot."""
        self.path = Path(path)
        self.rows = 0  # rows written so far (read from any thread)
        self.keys: list[str] = [SELF_MEM_KEY]  # the columns after the metrics
        self.sections = 1
        self._on_error = on_error
        self._flush_every_s = flush_every_s
        self._text = io.StringIO(newline="")  # the rows of the next write, as text
        self._csv = csv.writer(self._text)
        self._pending = bytearray()  # whole rows not yet written
        self._pending_rows = 0
        self._cut_back = True  # whether a failed write cuts the file back to its last whole row
        f = self._open_file()
        self._whole = f.tell()  # the file's length up to its last whole row
        self._file: Sink | None = f
        self._last_flush = time.monotonic()
        self._queue: queue.SimpleQueue[object] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name="gpumon-csv-record",
                                        daemon=True)
        self._thread.start()

    def _open_file(self) -> Sink:
        """The file, created with its header written (a recording of another format
        overrides it)."""
        f = self.path.open("wb", buffering=0)
        try:
            self._csv.writerow(record_header(self.keys))
            self._take_text()
            self._write_pending(f)
        except OSError:
            with contextlib.suppress(OSError):
                f.close()
            raise
        return f

    def put(self, item: object) -> None:
        """Queue anything ``_write`` takes (any thread; nothing when the recording failed)."""
        if self._file is not None:
            self._queue.put(item)

    @property
    def failed(self) -> bool:
        """Whether a write error ended the recording early."""
        return self._file is None

    def add(self, snap: Snapshot) -> None:
        """Queue one snapshot (any thread; nothing when the recording has failed)."""
        if self._file is not None:
            self._queue.put(snap)

    def flush(self) -> None:
        """Ask the worker to flush the file now."""
        self._queue.put(_FLUSH)

    def close(self, timeout_s: float = 10.0) -> None:
        """Write what is queued, close the file and end the thread (waits for it)."""
        self._queue.put(_STOP)
        self._thread.join(timeout_s)

    @property
    def thread(self) -> threading.Thread:
        return self._thread

    # -- the worker thread ---------------------------------------------------------------------
    def _run(self) -> None:
        while True:
            item = self._queue.get()
            if item is _STOP:
                self._finish()
                return
            if self._file is None:
                continue  # failed: drop what is still queued
            try:
                if item is _FLUSH:
                    self._flush()
                else:
                    self._write(item)
                    if time.monotonic() - self._last_flush >= self._flush_every_s:
                        self._flush()
            except OSError as exc:
                self._fail(exc)

    def _write(self, snap: object) -> None:
        if not isinstance(snap, Snapshot):
            return
        new = [k for s in snap.samples if not s.lost
               for k in extra_values(snap, s.index) if k not in self.keys]
        if new:
            self.keys += list(dict.fromkeys(new))
            self._csv.writerow([])  # a new section: an empty line, then the wider header
            self._csv.writerow(record_header(self.keys))
            self.sections += 1
        rows = record_rows(snap, self.keys)
        self._csv.writerows(rows)
        self._pending_rows += len(rows)
        self._take_text()

    def _take_text(self) -> None:
        self._pending += self._text.getvalue().encode("utf-8")
        self._text.seek(0)
        self._text.truncate()

    def _write_pending(self, f: Sink) -> None:
        """Write every pending row (a raw file may take part of a write at a time)."""
        view = memoryview(bytes(self._pending))  # a copy: the buffer stays resizable
        while view:
            n = f.write(view)
            view = view[n or 0:]
        self._pending.clear()
        self.rows += self._pending_rows
        self._pending_rows = 0

    def _flush(self) -> None:
        if self._file is not None:
            self._write_pending(self._file)
            self._file.flush()  # a gzip file's compressed data reaches the disk
            self._whole = self._file.tell()
        self._last_flush = time.monotonic()

    def _fail(self, exc: OSError) -> None:
        f, self._file = self._file, None
        if f is not None:
            if self._cut_back:
                with contextlib.suppress(OSError, ValueError):  # back to the last whole row
                    os.ftruncate(f.fileno(), self._whole)
            with contextlib.suppress(OSError):
                f.close()  # what could not be written is lost; the rows before it stay
        self._pending.clear()
        if exc.errno in DISK_FULL:
            self._on_error(tr("Recording stopped: disk full. {path} keeps the rows written "
                              "before, up to its last whole row.", path=self.path))
        else:
            self._on_error(tr("Recording to {path} stopped: {reason}.", path=self.path,
                              reason=reason(exc)))

    def _finish(self) -> None:
        if self._file is not None and self._pending:
            try:
                self._flush()
            except OSError as exc:
                self._fail(exc)
        f, self._file = self._file, None
        if f is None:
            return
        try:
            f.close()
        except OSError as exc:
            self._on_error(tr("The recording could not be finished ({reason}).",
                              reason=reason(exc)))
