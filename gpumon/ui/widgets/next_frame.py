"""Run something once the window has painted its next frame.

A 0 ms timer is no way to wait for the frame: in Qt 6 it is a posted call at normal priority,
and the window's repaint (``UpdateRequest``) is posted at low priority, so the call ran
first, and the work meant to follow the frame that answers a key (building the Playground,
starting its kernel, unveiling the graphs) delayed that frame instead. ``after_next_frame``
watches the window for its ``UpdateRequest`` and runs the function once that has been
handled; if no frame is due, it runs after ``FALLBACK_MS``.

    after_next_frame(widget, self.load)
"""

from __future__ import annotations

import sys
from collections.abc import Callable

import shiboken6
from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtWidgets import QWidget

FALLBACK_MS = 50  # nothing to paint: run anyway after this long
HELPER_NAME = "gpumonAfterFrame"


class _AfterFrame(QObject):
    """The window's one helper: runs each function queued on it after the window's next
    repaint (an event filter while some are queued), or after ``FALLBACK_MS``. Made once a
    window and deleted with it. It was one helper a call, deleting itself with
    ``deleteLater()`` from its own timer's slot; the suite crashed now and then in
    ``QObject::~QObject`` from a DeferredDelete, once in a test that only made such a helper,
    so no object deletes itself here any more."""

    def __init__(self, window: QWidget) -> None:
        super().__init__(window)
        self.setObjectName(HELPER_NAME)
        self._window = window
        self._waiting: list[Callable[[], None]] = []  # for the next repaint
        self._batch = 0  # counts the batches: a fallback of an earlier one does nothing

    def add(self, fn: Callable[[], None]) -> None:
        if not self._waiting:
            self._window.installEventFilter(self)
            batch = self._batch
            QTimer.singleShot(FALLBACK_MS, self, lambda: self._fallback(batch))
        self._waiting.append(fn)

    def _fallback(self, batch: int) -> None:
        if batch == self._batch and self._waiting:
            self._run_waiting()

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if obj is self._window and event.type() == QEvent.Type.UpdateRequest and self._waiting:
            # posted now, they run after this repaint (a posted call); those queued later
            # wait for a repaint of their own
            due, self._waiting = self._waiting, []
            self._stop_watching()
            QTimer.singleShot(0, self, lambda: _run_all(due))
        return False

    def _run_waiting(self) -> None:
        due, self._waiting = self._waiting, []
        self._stop_watching()
        _run_all(due)

    def _stop_watching(self) -> None:
        self._batch += 1
        if shiboken6.isValid(self._window):
            self._window.removeEventFilter(self)


def _run_all(fns: list[Callable[[], None]]) -> None:
    """Each function, as if it had been called alone: one that raises is reported as a slot's
    error is (``sys.excepthook``) and the others still run."""
    for fn in fns:
        try:
            fn()
        except Exception:
            sys.excepthook(*sys.exc_info())


def after_next_frame(widget: QWidget, fn: Callable[[], None]) -> None:
    """Call ``fn`` once ``widget``'s window has painted its next frame (see the module doc)."""
    window = widget.window()
    helper = window.findChild(_AfterFrame, HELPER_NAME, Qt.FindChildOption.FindDirectChildrenOnly)
    if helper is None:
        helper = _AfterFrame(window)
    helper.add(fn)
