"""The File menu's work: dialogs around the functions in ``exports`` and the history's
``csv_export``, errors as sentences.

Each action has a dialog-free twin (``save_graph(gpu, which, path)``, ``start_recording(path)``,
``export_window(path)``) that tests call directly. A file that cannot be written becomes a
message in the status bar and a non-blocking message box; the window keeps running.

Exporting the history copies the visible window out of the History on the GUI thread (numpy
copies, milliseconds) and writes the CSV on a worker thread: an hour of 8 GPUs at 1 s is
~29 000 rows, ~0.25 s of Python here, and at 0.1 s ten times that. ``exportFinished`` tells
when the file is complete.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt, Signal, Slot
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QFileDialog, QInputDialog, QLabel, QMainWindow, QMessageBox

from gpumon.i18n import N_, ntr, tr
from gpumon.recording.lines import Mark, MarkKind
from gpumon.telemetry.history.store import History
from gpumon.telemetry.model.health import HealthEvent
from gpumon.telemetry.model.types import Snapshot
from gpumon.ui.monitor.grid import GpuGrid

if TYPE_CHECKING:
    from types import ModuleType

    from gpumon.playground.lesson.results import StepResult
    from gpumon.ui.widgets.plot import LitePlot
    from gpumon.ui.window.exports import CsvRecorder

GRAPHS = ("memory", "utilization")
GRAPH_NAMES = {"memory": N_("memory"), "utilization": N_("utilization")}


def _csv_filter() -> str:
    return tr("CSV files") + " (*.csv)"


def _recording_filter() -> str:
    return tr("gpumon recordings, replayable") + " (*.jsonl.gz *.jsonl)"


def _graph_filters() -> str:
    return tr("PNG image") + " (*.png);;" + tr("SVG drawing") + " (*.svg)"


def _exports() -> ModuleType:
    """``gpumon.ui.window.exports``, imported when a file action is first used, not at start-up
    (it brings the csv module, the text snapshot and, when a graph is saved, pyqtgraph's
    exporters)."""
    from gpumon.ui.window import exports

    return exports


def _reason(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror.lower() if exc.strerror[:1].isupper() else exc.strerror
    return str(exc) or type(exc).__name__


class FileActions(QObject):
    """Clipboard, graph and CSV actions of one window, with the ``● REC`` indicator."""

    exportFinished = Signal(str, int)  # path, rows written (-1: it failed, see last_message)
    recordingChanged = Signal(bool)  # the CSV recorder started or stopped
    _exportDone = Signal(str, int, str)  # from the writer thread: path, rows, error or ""

    def __init__(self, window: QMainWindow, grid: GpuGrid, history: History,
                 window_s: Callable[[], int]) -> None:
        """``window`` holds the status bar and parents the dialogs; ``grid`` has the graphs;
        ``history`` and ``window_s()`` are what an export writes. Feed it ``on_snapshot``, and
        call ``add_context_menus`` when the panels are rebuilt."""
        super().__init__(window)
        self.window = window
        self._grid = grid
        self._history = history
        self._window_s = window_s
        self.latest_snapshot: Snapshot | None = None
        self.last_message = ""
        self._writer: threading.Thread | None = None
        self._exportDone.connect(self._on_export_done)
        self._recorder: CsvRecorder | None = None  # made when first used
        self.rec_label = QLabel("● " + tr("REC"))
        self.rec_label.setObjectName("recIndicator")
        self.rec_label.setAccessibleName(tr("Recording to CSV"))
        self.rec_label.setStyleSheet("color: #d32f2f; font-weight: bold; padding: 0 8px;")
        self.rec_label.hide()
        window.statusBar().addPermanentWidget(self.rec_label)

    @property
    def recorder(self) -> CsvRecorder:
        if self._recorder is None:
            self._recorder = _exports().CsvRecorder(self)
            self._recorder.failed.connect(self.report)
            self._recorder.recordingChanged.connect(self._on_recording)
        return self._recorder

    @property
    def recording(self) -> bool:
        return self._recorder is not None and self._recorder.recording

    def stop_recording(self) -> None:
        if self._recorder is not None:
            self._recorder.stop()

    # -- clipboard ---------------------------------------------------------------------------
    @Slot()
    def copy_snapshot(self) -> str | None:
        snap = self.latest_snapshot
        if snap is None:
            self.report(tr("There is no snapshot to copy yet."))
            return None
        text = _exports().copy_snapshot_text(snap)
        self.window.statusBar().showMessage(tr("Snapshot copied as nvidia-smi-like text."), 4000)
        return text

    # -- graphs ------------------------------------------------------------------------------
    def plot_of(self, gpu: int, which: str) -> LitePlot:
        panel = self._grid.panel(gpu)
        if panel is None:
            raise LookupError(tr("there is no GPU {gpu}", gpu=gpu))
        return panel.memory_plot if which == "memory" else panel.util_plot

    def save_graph(self, gpu: int, which: str, path: str | Path) -> bool:
        """Save GPU ``gpu``'s ``which`` graph ("memory" or "utilization"); False on failure."""
        try:
            exports = _exports()
            with exports.busy(self.window.statusBar(), tr("Saving {name}…", name=Path(path).name)):
                exports.save_plot(self.plot_of(gpu, which), path)
        except (OSError, ValueError, LookupError) as exc:
            self.report(tr("The graph could not be saved to {path}: {reason}.", path=path,
                           reason=_reason(exc)))
            return False
        self.window.statusBar().showMessage(
            tr("Saved GPU {gpu} {graph} graph to {path}.", gpu=gpu,
               graph=tr(GRAPH_NAMES[which]) if which in GRAPH_NAMES else which, path=path),
            5000)
        return True

    @Slot()
    def save_graph_dialog(self, gpu: int | None = None, which: str | None = None) -> None:
        panels = self._grid.panels
        if not panels:
            self.report(tr("There is no graph to save yet."))
            return
        if gpu is None or which is None:
            keys = [(p.index, g) for p in panels for g in GRAPHS]
            items = [tr("GPU {index} · {graph}", index=i, graph=tr(GRAPH_NAMES[g]))
                     for i, g in keys]
            item, ok = QInputDialog.getItem(self.window, tr("Save graph"), tr("Which graph?"),
                                            items, 0, False)
            if not ok:
                return
            gpu, which = keys[items.index(item)]
        path, _ = QFileDialog.getSaveFileName(
            self.window, tr("Save graph"), f"gpu{gpu}-{which}.png", _graph_filters())
        if path:
            if not Path(path).suffix:
                path += ".png"
            self.save_graph(gpu, which, path)

    @Slot()
    def add_context_menus(self) -> None:
        """Right-click on a graph: "Save this graph…" (again after the panels are rebuilt)."""
        for panel in self._grid.panels:
            for which, widget in (("memory", panel.memory_widget),
                                  ("utilization", panel.util_widget)):
                action = QAction(tr("Save this graph…"), widget)
                action.triggered.connect(
                    lambda *_, g=panel.index, w=which: self.save_graph_dialog(g, w))
                widget.addAction(action)
                widget.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)

    # -- recording -----------------------------------------------------------------------------
    def add_mark(self, mark: Mark) -> None:
        """A playground action or a health event, kept while recording (gpumon's format)."""
        if self._recorder is not None and self._recorder.recording:
            self._recorder.add_mark(mark)

    @Slot(float, str, object)
    def add_action_mark(self, t: float, text: str, gpu: int | None) -> None:
        self.add_mark(Mark(t, MarkKind.ACTION, text, gpu))

    @Slot(object)
    def add_lesson_mark(self, result: StepResult) -> None:
        """A lesson step that ran: a mark at its first action (all GPUs: it names none)."""
        if not result.ran:
            return
        t = result.outcomes[0].started_at if result.outcomes else time.time()
        self.add_mark(Mark(t, MarkKind.LESSON, tr("Lesson step {n}: {title}", n=result.number,
                                                  title=tr(result.step.title))))

    @Slot(object)
    def add_health_mark(self, event: HealthEvent) -> None:
        self.add_mark(Mark(event.time_s, MarkKind.HEALTH, event.text, event.gpu))

    def start_recording(self, path: str | Path) -> bool:
        self.recorder.interval_s = getattr(self.window, "interval_s", None)
        try:
            self.recorder.start(path)
        except OSError as exc:
            self.report(tr("Recording could not start: {path} cannot be written ({reason}).",
                           path=path, reason=_reason(exc)))
            return False
        snap = self.latest_snapshot
        if snap is not None:
            self.recorder.add(snap)  # the current values, so a short recording is not empty
        return True

    @Slot()
    def toggle_recording(self) -> None:
        if self.recording:
            self.stop_recording()
            return
        path, chosen = QFileDialog.getSaveFileName(
            self.window, tr("Record"), "gpumon-record.jsonl.gz",
            _recording_filter() + ";;" + _csv_filter())
        if path and not Path(path).suffix:  # the name without its suffix: the filter's
            path += ".jsonl.gz" if chosen == _recording_filter() else ".csv"
        if path:
            self.start_recording(path)
        else:
            self._on_recording(False)  # the menu's check mark follows the recorder

    def export_window(self, path: str | Path) -> bool:
        """Write the visible time window of the history to ``path`` on a worker thread;
        False (and a sentence) when an export is still being written."""
        if self.exporting:
            self.report(tr("An export is still being written; try again when it is done."))
            return False
        from gpumon.telemetry.history import csv_export  # when first used, as _exports()

        table = csv_export.history_table(self._history, self.latest_snapshot, self._window_s())
        self.window.statusBar().showMessage(
            ntr("Writing {n} row to {name}…", "Writing {n} rows to {name}…", table.rows,
                name=Path(path).name))

        def write() -> None:
            try:
                rows, error = csv_export.write_history_csv(table, path), ""
            except OSError as exc:
                rows, error = -1, _reason(exc)
            with contextlib.suppress(RuntimeError):  # the window was closed meanwhile
                self._exportDone.emit(str(path), rows, error)

        self._writer = threading.Thread(target=write, name="gpumon-csv-export")
        self._writer.start()
        return True

    @property
    def exporting(self) -> bool:
        return self._writer is not None and self._writer.is_alive()

    @Slot(str, int, str)
    def _on_export_done(self, path: str, rows: int, error: str) -> None:
        if self._writer is not None:
            self._writer.join()
            self._writer = None
        if error:
            self.report(tr("The CSV could not be written to {path}: {reason}.", path=path,
                           reason=error))
        else:
            self.window.statusBar().showMessage(
                ntr("Wrote {n} row to {path}.", "Wrote {n} rows to {path}.", rows, path=path),
                5000)
        self.exportFinished.emit(path, rows)

    @Slot()
    def export_window_dialog(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self.window, tr("Export visible window to CSV"),
                                              "gpumon-history.csv", _csv_filter())
        if path:
            self.export_window(path)

    # -- feedback ----------------------------------------------------------------------------
    @Slot(str)
    def report(self, text: str) -> QMessageBox:
        """A sentence in the status bar and in a non-blocking message box."""
        self.last_message = text
        self.window.statusBar().showMessage(text, 15000)
        box = QMessageBox(QMessageBox.Icon.Warning, "gpumon", text,
                          QMessageBox.StandardButton.Ok, self.window)
        box.setObjectName("fileErrorBox")
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()
        return box

    @Slot(object)
    def on_snapshot(self, snap: Snapshot) -> None:
        """Each snapshot: kept for copy and export, and recorded while recording."""
        self.latest_snapshot = snap
        recorder = self._recorder
        if recorder is None:
            return
        recorder.add(snap)
        if recorder.recording:
            self.rec_label.setToolTip(ntr("Recording to {path} ({n} row)",
                                          "Recording to {path} ({n} rows)", recorder.rows,
                                          path=recorder.path))

    @Slot(bool)
    def _on_recording(self, on: bool) -> None:
        self.recordingChanged.emit(on)
        self.rec_label.setVisible(on)
        action = self.window.findChild(QAction, "actionRecord")
        if action is not None and action.isChecked() != on:
            action.setChecked(on)
        if on:
            self.window.statusBar().showMessage(
                tr("Recording to {path}.", path=self.recorder.path), 5000)
