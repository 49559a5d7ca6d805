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

from collections.abc import Callable

import shiboken6
from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QWidget

FALLBACK_MS = 50  # nothing to paint: run anyway after this long


class _AfterFrame(QObject):
    """An event filter on the window that runs ``fn`` after its next repaint, once."""

    def __init__(self, window: QWidget, fn: Callable[[], None]) -> None:
        super().__init__(window)
        self._window = window
        self._fn: Callable[[], None] | None = fn
        window.installEventFilter(self)
        QTimer.singleShot(FALLBACK_MS, self, self._run)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if obj is self._window and event.type() == QEvent.Type.UpdateRequest:
            # posted now, it is handled after this repaint (a posted call)
            QTimer.singleShot(0, self, self._run)
        return False

    def _run(self) -> None:
        fn, self._fn = self._fn, None
        if fn is None:
            return
        if shiboken6.isValid(self._window):
            self._window.removeEventFilter(self)
        self.deleteLater()
        fn()


def after_next_frame(widget: QWidget, fn: Callable[[], None]) -> None:
    """Call ``fn`` once ``widget``'s window has painted its next frame (see the module doc)."""
    _AfterFrame(widget.window(), fn)
