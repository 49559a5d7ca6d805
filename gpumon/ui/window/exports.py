"""Everyday exports, the Qt side: snapshot text to the clipboard, a graph to PNG/SVG, the CSV
recording (the history's CSV export is Qt-free: ``telemetry/history/csv_export.py``).

The functions here take plain arguments (a path, a plot) and raise ``OSError`` when a file
cannot be written; the menus turn that into a sentence in the window. The ``CsvRecorder``
appends one row per GPU per snapshot while it runs, on a worker thread, flushes about once
a second, and marks a GPU that stopped answering with ``lost=1`` and
empty values, so the file stays a valid CSV whatever happens to the GPUs.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from pathlib import Path

from PySide6.QtCore import QBuffer, QObject, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QGuiApplication, QPainter
from PySide6.QtWidgets import QApplication, QStatusBar

from gpumon.i18n import tr
from gpumon.recording.lines import Mark
from gpumon.telemetry.history.csv_record import FLUSH_EVERY_S, CsvRecordWriter
from gpumon.telemetry.model.facts import as_copied_at
from gpumon.telemetry.model.types import Snapshot
from gpumon.text.smi_text import render
from gpumon.ui.widgets.plot import LitePlot

PNG_WIDTH = 1600  # pixels: sharp on a slide; pyqtgraph scales the drawing to it


# -- clipboard ------------------------------------------------------------------------------
def copy_snapshot_text(snapshot: Snapshot) -> str:
    """Put the nvidia-smi-like text of ``snapshot`` on the clipboard and return it (a
    no-data snapshot shows the time of the copy: ``facts.as_copied_at``)."""
    text = render(as_copied_at(snapshot, time.time()))
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
            raise OSError(tr("could not write {path}: check the folder exists and is writable",
                             path=path))
    else:
        raise ValueError(tr("save a graph as .png or .svg, not {name}", name=repr(path.name)))
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


# -- CSV recording --------------------------------------------------------------------------
class CsvRecorder(QObject):
    """Records each snapshot to a CSV file while recording; the rows are written on the
    recording's own worker thread (``CsvRecordWriter``), never on the GUI thread. Write
    errors stop it and are reported through ``failed`` (a sentence), never raised into the
    event loop."""

    recordingChanged = Signal(bool)
    failed = Signal(str)
    _workerFailed = Signal(str)  # from the worker thread; queued to this object's thread

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._writer: CsvRecordWriter | None = None
        self._rows = 0  # of the last recording, once it has ended
        self.path: Path | None = None
        self.interval_s: float | None = None  # the window's, named in a stream's header
        self._workerFailed.connect(self._on_worker_failed, Qt.ConnectionType.QueuedConnection)

    @property
    def recording(self) -> bool:
        return self._writer is not None

    @property
    def rows(self) -> int:
        """Rows written so far (by the worker: a row queued is counted once written)."""
        return self._writer.rows if self._writer is not None else self._rows

    @property
    def writer(self) -> CsvRecordWriter | None:
        return self._writer

    def start(self, path: str | Path) -> None:
        """Create (truncate) ``path`` and write the header; OSError if it cannot."""
        self.stop()
        from gpumon.recording.writer import StreamRecordWriter, is_stream_path

        self._writer = (StreamRecordWriter(path, self._report_from_worker, self.interval_s)
                        if is_stream_path(path)
                        else CsvRecordWriter(path, self._report_from_worker, FLUSH_EVERY_S))
        self.path, self._rows = self._writer.path, 0
        self.recordingChanged.emit(True)

    def stop(self) -> None:
        """Write what is queued and close the file (waits for the worker)."""
        writer, self._writer = self._writer, None
        if writer is None:
            return
        writer.close()
        self._rows = writer.rows
        self.recordingChanged.emit(False)

    def add(self, snap: Snapshot) -> None:
        """Queue ``snap``'s rows for the worker (connected to ``snapshotReceived``)."""
        if self._writer is not None:
            self._writer.add(snap)

    def flush(self) -> None:
        if self._writer is not None:
            self._writer.flush()

    def add_mark(self, mark: Mark) -> None:
        """Queue a mark; only a recording in gpumon's own format keeps marks."""
        from gpumon.recording.writer import StreamRecordWriter

        if isinstance(self._writer, StreamRecordWriter):
            self._writer.add_mark(mark)

    def _report_from_worker(self, sentence: str) -> None:
        with contextlib.suppress(RuntimeError):  # the window was closed meanwhile
            self._workerFailed.emit(sentence)

    def _on_worker_failed(self, sentence: str) -> None:
        writer = self._writer
        if writer is not None and writer.failed:  # a write error ended this recording
            self.stop()
        self.failed.emit(sentence)


@contextlib.contextmanager
def busy(status: QStatusBar | None = None, text: str = "") -> Iterator[None]:
    """A wait cursor (and a status-bar message) while a file is written in the GUI thread."""
    QApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)
    if status is not None:
        status.showMessage(text or tr("Writing…"))
        status.repaint()  # paint the message now: the event loop waits for the write
    try:
        yield
    finally:
        QApplication.restoreOverrideCursor()
        if status is not None:
            status.clearMessage()
