"""Full screen on and off, the window's size kept.

Leaving full screen, a compositor that draws no frame for the window (Wayland: Qt draws
its own decorations) gives the window back its size less that decoration: weston shrank a
1400×900 window to 1394×867, then 1388×834, a step at each toggle (a bare QMainWindow does
the same). So the size from before full screen is kept, and given back when the first
resize after leaving comes with another size. On Wayland a window cannot place itself,
so only the size is given back; the position is the compositor's.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QSize, QTimer
from PySide6.QtWidgets import QWidget


class FullScreen(QObject):
    """``toggle()`` full screen for ``window``; back to maximised or to its size before."""

    def __init__(self, window: QWidget) -> None:
        super().__init__(window)
        self._window = window
        self._was_maximized = False
        self._size = QSize()  # before full screen
        self._restore: QSize | None = None  # to give back at the first resize after leaving
        window.installEventFilter(self)

    def toggle(self) -> None:
        w = self._window
        if w.isFullScreen():
            if self._was_maximized:
                w.showMaximized()
            else:
                self._restore = QSize(self._size)
                w.showNormal()
        else:
            self._was_maximized = w.isMaximized()
            self._size = w.size()
            self._restore = None
            w.showFullScreen()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if (watched is self._window and event.type() == QEvent.Type.Resize
                and self._restore is not None and not self._window.isFullScreen()):
            size, self._restore = self._restore, None
            if self._window.size() != size:
                QTimer.singleShot(0, self, lambda: self._window.resize(size))
        return False
