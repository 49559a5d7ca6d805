"""Everyday exports: snapshot text to the clipboard, a graph to PNG/SVG, history to CSV.

The functions here take plain arguments (a path, a plot, a History) and raise ``OSError``
when a file cannot be written; the menus turn that into a sentence in the window. The
``CsvRecorder`` appends one row per GPU per snapshot while it runs, flushes about once a
second, and marks a GPU that stopped answering with ``lost=1`` and empty values, so the
file stays a valid CSV whatever happens to the GPUs.
"""

from __future__ import annotations

import contextlib
import csv
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import numpy as np
from PySide6.QtCore import QBuffer, QObject, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QGuiApplication, QPainter
from PySide6.QtWidgets import QApplication, QStatusBar

from gpumon.telemetry.csv_rows import (
    ID_COLUMNS,
    cell,
    column,
    record_header,
    record_rows,
    stamps,
)
from gpumon.telemetry.history import SELF_MEM_KEY, History
from gpumon.telemetry.metrics import HISTORY_KEYS
from gpumon.telemetry.smi_text import render
from gpumon.telemetry.types import Snapshot
from gpumon.ui.monitor.plot import LitePlot

FLUSH_EVERY_S = 1.0
PNG_WIDTH = 1600  # pixels: sharp on a slide; pyqtgraph scales the drawing to it


# -- clipboard ------------------------------------------------------------------------------
def copy_snapshot_text(snapshot: Snapshot) -> str:
    """Put the nvidia-smi-like text of ``snapshot`` on the clipboard and return it."""
    text = render(snapshot)
    QGuiApplication.clipboard().setText(text)
    return text


# -- graphs ---------------------------------------------------------------------------------
def save_plot(plot: LitePlot, path: str | Path) -> Path:
    """Write ``plot`` as PNG or SVG (by the file's suffix); OSError when it cannot be written."""
    import pyqtgraph.exporters as pgx  # here, not at start-up: ~5 ms of imports

    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".svg":
        try:
            data = pgx.SVGExporter(plot).export(toBytes=True)
        except (ValueError, IndexError):  # pyqtgraph cannot parse some of Qt 6's SVG paths
            data = _svg_by_qt(plot)
        path.write_bytes(data if isinstance(data, bytes) else str(data).encode())
    elif suffix == ".png":
        exporter = pgx.ImageExporter(plot)
        exporter.parameters()["width"] = PNG_WIDTH
        image = exporter.export(toBytes=True)
        if image is None or image.isNull() or not image.save(str(path), "PNG"):
            raise OSError(f"could not write {path}: check the folder exists and is writable")
    else:
        raise ValueError(f"save a graph as .png or .svg, not {path.name!r}")
    return path


def _svg_by_qt(plot: LitePlot) -> bytes:
    """The plot's scene area drawn by Qt's own SVG generator (vector, less tidy)."""
    from PySide6.QtSvg import QSvgGenerator

    rect = plot.sceneBoundingRect()
    buffer = QBuffer()
    generator = QSvgGenerator()
    generator.setOutputDevice(buffer)
    generator.setSize(QSize(int(rect.width()), int(rect.height())))
    generator.setViewBox(QRectF(0, 0, rect.width(), rect.height()))
    generator.setTitle("gpumon graph")
    painter = QPainter(generator)
    try:
        plot.scene().render(painter, QRectF(0, 0, rect.width(), rect.height()), rect)
    finally:
        painter.end()
    return bytes(buffer.data().data())


# -- CSV -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class HistoryTable:
    """The last ``window_s`` seconds of every GPU's series, copied out of the History, so
    that writing it can happen on another thread while the History goes on filling."""

    keys: list[str]
    blocks: list[tuple[int, str, str, np.ndarray, list[np.ndarray]]]  # gpu, uuid, name, t, cols

    @property
    def rows(self) -> int:
        return sum(len(times) for _, _, _, times, _ in self.blocks)


def history_table(history: History, snapshot: Snapshot | None, window_s: float) -> HistoryTable:
    """Copy what ``export_history_csv`` writes (fast: numpy copies; for the GUI thread)."""
    latest = history.latest_time()
    since = None if latest is None else latest - window_s
    gpus = {g.index: g for g in snapshot.gpus} if snapshot is not None else {}
    keys: list[str] = list(HISTORY_KEYS) + [SELF_MEM_KEY]
    for i in history.gpu_indices():
        keys += [k for k in history.keys(i) if k not in keys]
    blocks = []
    for i in history.gpu_indices():
        info = gpus.get(i)
        times, _ = history.series(i, keys[0], since=since)
        columns = [history.series(i, k, since=since)[1] for k in keys]
        blocks.append((i, info.uuid if info else "", info.name if info else "", times, columns))
    return HistoryTable(keys, blocks)


def write_history_csv(table: HistoryTable, path: str | Path) -> int:
    """Write ``table`` as CSV (any thread; OSError when it cannot be written); rows written."""
    with Path(path).open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow([*ID_COLUMNS, *(column(k) for k in table.keys)])
        for gpu, uuid, name, times, columns in table.blocks:
            times_s = times.tolist()  # Python floats: much faster than numpy scalars per cell
            cells = [[cell(v) for v in c.tolist()] for c in columns]
            writer.writerows([*stamps(t), gpu, uuid, name, *row]
                             for t, *row in zip(times_s, *cells, strict=True))
    return table.rows


def export_history_csv(history: History, snapshot: Snapshot | None, window_s: float,
                       path: str | Path) -> int:
    """Write the last ``window_s`` seconds of every GPU's series; returns the row count."""
    return write_history_csv(history_table(history, snapshot, window_s), path)


class CsvRecorder(QObject):
    """Appends each snapshot to a CSV file while recording. Write errors stop it and are
    reported through ``failed`` (a sentence), never raised into the event loop."""

    recordingChanged = Signal(bool)
    failed = Signal(str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._file: IO[str] | None = None
        self._csv: Any = None  # the csv.writer of the open file
        self.path: Path | None = None
        self.rows = 0
        self._last_flush = 0.0

    @property
    def recording(self) -> bool:
        return self._file is not None

    def start(self, path: str | Path) -> None:
        """Create (truncate) ``path`` and write the header; OSError if it cannot."""
        self.stop()
        path = Path(path)
        f = path.open("w", newline="", encoding="utf-8")
        try:
            writer = csv.writer(f)
            writer.writerow(record_header())
            f.flush()
        except OSError:
            f.close()
            raise
        self._file, self._csv, self.path, self.rows = f, writer, path, 0
        self._last_flush = time.monotonic()
        self.recordingChanged.emit(True)

    def stop(self) -> None:
        if self._file is None:
            return
        f, self._file, self._csv = self._file, None, None
        try:
            f.close()
        except OSError as exc:
            self.failed.emit(f"The recording could not be finished ({exc.strerror or exc}).")
        self.recordingChanged.emit(False)

    def add(self, snap: Snapshot) -> None:
        """Append one row per GPU of ``snap`` (connected to ``snapshotReceived``)."""
        if self._file is None:
            return
        writer = self._csv
        assert writer is not None
        try:
            for row in record_rows(snap):
                writer.writerow(row)
                self.rows += 1
            now = time.monotonic()
            if now - self._last_flush >= FLUSH_EVERY_S:
                self._file.flush()
                self._last_flush = now
        except OSError as exc:
            path, f = self.path, self._file
            self._file = None
            self._csv = None
            with contextlib.suppress(OSError):
                f.close()  # what could not be written is lost; the rows before it stay
            self.recordingChanged.emit(False)
            self.failed.emit(f"Recording to {path} stopped: {exc.strerror or exc}.")

    def flush(self) -> None:
        if self._file is not None:
            try:
                self._file.flush()
            except OSError as exc:
                self.failed.emit(f"The recording could not be written ({exc.strerror or exc}).")


@contextlib.contextmanager
def busy(status: QStatusBar | None = None, text: str = "Writing…") -> Iterator[None]:
    """A wait cursor (and a status-bar message) while a file is written in the GUI thread."""
    QApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)
    if status is not None:
        status.showMessage(text)
        status.repaint()  # paint the message now: the event loop waits for the write
    try:
        yield
    finally:
        QApplication.restoreOverrideCursor()
        if status is not None:
            status.clearMessage()
