"""File ▸ Open recording… and File ▸ Compare with recording…: recordings from the menu, not
only from ``--replay`` and ``--compare``.

Open asks for a file, indexes it (a wait cursor meanwhile: ~1 s per 100 MB on this kind of
machine, benchmarks/README.md) and opens the replay window beside this one; a file that
cannot be read is a sentence in a message box. Compare is offered in a replay window: the
chosen file is drawn dashed under the recording. The windows are made by the ``make``
function the frame gives (``launch.py``), so the main window's modules never import them.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QApplication, QFileDialog, QMainWindow, QMenu, QMessageBox

from gpumon.i18n import tr
from gpumon.recording.reader import Recording, RecordingError
from gpumon.ui.window.exports import busy


def _filter() -> str:
    return (tr("gpumon recordings") + " (*.jsonl *.jsonl.gz *.json *.gz);;"
            + tr("All files") + " (*)")


class RecordingOpener(QObject):
    """The menu entries and the replay windows they opened (closed when the app quits)."""

    def __init__(self, window: QMainWindow, menu: QMenu, before: QAction | None,
                 make: Callable[[Recording], QMainWindow],
                 compare: Callable[[Recording], None] | None) -> None:
        super().__init__(window)
        self._window, self._make, self._compare = window, make, compare
        self.windows: list[QMainWindow] = []
        self.open_action = QAction(tr("Open &recording…"), window)
        self.open_action.setObjectName("actionOpenRecording")
        self.open_action.setToolTip(tr("Replay a recording of GPUs, made here or elsewhere, in "
                                       "a window of its own"))
        self.open_action.triggered.connect(lambda *_: self.ask_open())
        actions = [self.open_action]
        if compare is not None:
            self.compare_action = QAction(tr("Compare &with recording…"), window)
            self.compare_action.setObjectName("actionCompareRecording")
            self.compare_action.setToolTip(tr("Draw another recording dashed under this one, "
                                              "aligned at their starts"))
            self.compare_action.triggered.connect(lambda *_: self.ask_compare())
            actions.append(self.compare_action)
        for action in actions:
            if before is None:
                menu.addAction(action)
            else:
                menu.insertAction(before, action)

    def _ask(self, title: str) -> Recording | None:
        path, _ = QFileDialog.getOpenFileName(self._window, title, "", _filter())
        return self.read(path) if path else None

    def read(self, path: str) -> Recording | None:
        """``path`` indexed, or None after saying why in a message box."""
        try:
            with busy(self._window.statusBar(), tr("Reading {path}…", path=path)):
                return Recording(path)
        except RecordingError as exc:
            QMessageBox.warning(self._window, tr("Open recording"), str(exc))
            return None

    def ask_open(self) -> QMainWindow | None:
        recording = self._ask(tr("Open recording"))
        return None if recording is None else self.open(recording)

    def ask_compare(self) -> None:
        recording = self._ask(tr("Compare with recording"))
        if recording is not None and self._compare is not None:
            self._compare(recording)

    def open(self, recording: Recording) -> QMainWindow:
        """The replay window on ``recording``, shown beside this one."""
        window = self._make(recording)
        self.windows.append(window)
        app = QApplication.instance()
        if app is not None:
            app.aboutToQuit.connect(window.close)
        window.show()
        window.raise_()
        return window


def install(window: QMainWindow, menu: QMenu, before: QAction | None,
            make: Callable[[Recording], QMainWindow],
            compare: Callable[[Recording], None] | None = None) -> RecordingOpener:
    """Put File ▸ Open recording… (and, with ``compare``, Compare with recording…) in
    ``menu`` before ``before``."""
    return RecordingOpener(window, menu, before, make, compare)
