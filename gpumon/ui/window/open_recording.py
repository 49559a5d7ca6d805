"""File ▸ Open recording… and File ▸ Compare with recording…: recordings from the menu, not
only from ``--replay`` and ``--compare``.

Open asks for a file, indexes it on a thread of its own (~2 s per 100 MB,
benchmarks/README.md: the window goes on meanwhile, the status bar says so) and opens the
replay window beside this one; a file that cannot be read is a sentence in a message box.
Compare is offered in a replay window: the chosen file is drawn dashed under the recording.
The windows are made by the ``make`` function the frame gives (``launch.py``), so the main
window's modules never import them.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QFileDialog, QMainWindow, QMenu, QMessageBox

from gpumon.i18n import tr
from gpumon.ui.window.beside import show_beside

if TYPE_CHECKING:
    from gpumon.recording.reader import Recording

Then = Callable[["Recording"], object]


def _filter() -> str:
    return (tr("gpumon recordings") + " (*.jsonl *.jsonl.gz *.json *.gz);;"
            + tr("All files") + " (*)")


class RecordingOpener(QObject):
    """The menu entries and the replay windows they opened (closed when the app quits)."""

    _read = Signal(object, object)  # (Recording, or the sentence why not), what to do with it

    def __init__(self, window: QMainWindow, menu: QMenu, before: QAction | None,
                 make: Callable[[Recording], QMainWindow],
                 compare: Callable[[Recording], None] | None) -> None:
        super().__init__(window)
        self._window, self._make, self._compare = window, make, compare
        self.windows: list[QMainWindow] = []
        self.box: QMessageBox | None = None  # the last sentence shown (tests read it)
        self._read.connect(self._on_read)
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

    def _ask(self, title: str, then: Then) -> None:
        path, _ = QFileDialog.getOpenFileName(self._window, title, "", _filter())
        if path:
            self.read(path, then)

    def read(self, path: str, then: Then) -> None:
        """Index ``path`` on a thread, then ``then(recording)`` here; or say why not."""
        self._window.statusBar().showMessage(tr("Reading {path}…", path=path))

        def index() -> None:
            from gpumon.recording.reader import Recording, RecordingError  # not at start-up

            try:
                result: Recording | str = Recording(path)
            except RecordingError as exc:
                result = str(exc)
            with contextlib.suppress(RuntimeError):  # the window was closed meanwhile
                self._read.emit(result, then)

        threading.Thread(target=index, name="gpumon-open-recording", daemon=True).start()

    def _on_read(self, result: Recording | str, then: Then) -> None:
        self._window.statusBar().clearMessage()
        if isinstance(result, str):
            self.box = QMessageBox(QMessageBox.Icon.Warning, tr("Open recording"), result,
                                   QMessageBox.StandardButton.Ok, self._window)
            self.box.open()  # not exec(): the window goes on
            return
        then(result)

    def ask_open(self) -> None:
        self._ask(tr("Open recording"), self.open)

    def ask_compare(self) -> None:
        if self._compare is not None:
            self._ask(tr("Compare with recording"), self._compare)

    def open(self, recording: Recording) -> QMainWindow:
        """The replay window on ``recording``, shown beside this one."""
        return show_beside(self._make(recording), self.windows)


def install(window: QMainWindow, menu: QMenu, before: QAction | None,
            make: Callable[[Recording], QMainWindow],
            compare: Callable[[Recording], None] | None = None) -> RecordingOpener:
    """Put File ▸ Open recording… (and, with ``compare``, Compare with recording…) in
    ``menu`` before ``before``."""
    return RecordingOpener(window, menu, before, make, compare)
