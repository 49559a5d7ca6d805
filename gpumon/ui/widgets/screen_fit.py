"""Keep a top-level window on its screen when the zoom changes its minimum size.

At 300 % the window's layout asked for 1925 px on a 1600 px screen and kept that width
after Ctrl+0. ``ScreenFit`` remembers the size the window had before the first zoom step
away from it, and after each step resizes the window to that size, grown only as far as
the new minimum needs, and never beyond the available area of the screen it is on; back at
100 % it gets its remembered size again. A maximized or full-screen window is left alone.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, QRect, QSize, QTimer, Slot
from PySide6.QtWidgets import QWidget


def fitted_size(wanted: QSize, minimum: QSize, available: QSize) -> QSize:
    """``wanted`` grown to ``minimum``, then capped by ``available``."""
    return QSize(min(max(wanted.width(), minimum.width()), available.width()),
                 min(max(wanted.height(), minimum.height()), available.height()))


def placed(rect: QRect, area: QRect) -> QRect:
    """``rect`` moved (not resized) so that as much of it as possible lies inside ``area``."""
    x = max(area.left(), min(rect.left(), area.right() - rect.width() + 1))
    y = max(area.top(), min(rect.top(), area.bottom() - rect.height() + 1))
    return QRect(x, y, rect.width(), rect.height())


def frame_extra(window: QWidget) -> QSize:
    """What the window's frame (title bar, borders) adds to its size. Before the window is
    first shown a window manager has given it no frame yet: then its parent window's, which
    has the same decorations, stands in, so a new window is sized right from the start (on
    Wayland a program cannot move its windows afterwards)."""
    parent = window.parentWidget()
    for w in (window, parent.window() if parent is not None else None):
        if w is not None and w.isVisible():
            frame = w.frameGeometry()
            extra = QSize(frame.width() - w.width(), frame.height() - w.height())
            if extra.width() > 0 or extra.height() > 0 or w is not window:
                return extra
    return QSize(0, 0)


def room_for(window: QWidget) -> QSize | None:
    """The largest size of ``window``'s inside whose frame stays within the available area
    of its screen (None without a screen)."""
    screen = window.screen()
    if screen is None:
        return None
    area, extra = screen.availableGeometry(), frame_extra(window)
    return QSize(max(1, area.width() - extra.width()), max(1, area.height() - extra.height()))


def within_room(window: QWidget, want: QSize) -> QSize:
    """``want`` capped by the room ``window``'s screen leaves its inside (``room_for``)."""
    room = room_for(window)
    return want if room is None else want.boundedTo(room)


def keep_on_screen(window: QWidget) -> None:
    """Move a shown ``window`` so that its frame lies within its screen's available area
    as far as it can (one opened centred over a window partly off the screen)."""
    screen = window.screen()
    if screen is None:
        return
    frame = window.frameGeometry()
    on_screen = placed(frame, screen.availableGeometry())
    if on_screen != frame:
        window.move(on_screen.topLeft())


class ScreenFit(QObject):
    """Fits ``window`` to its screen after zoom changes (see the module doc)."""

    def __init__(self, window: QWidget) -> None:
        super().__init__(window)
        self._window = window
        self._before: QSize | None = None  # the size before the first zoom step

    def before_zoom(self) -> None:
        """Call before a zoom step is applied."""
        w = self._window
        if self._before is None and not (w.isMaximized() or w.isFullScreen()):
            self._before = QSize(w.size())

    def after_zoom(self, zoom: float) -> None:
        """Call after a zoom step: fits once the new fonts have reached every widget."""
        QTimer.singleShot(0, self, lambda: self.fit(back_home=abs(zoom - 1.0) < 1e-6))

    @Slot()
    def fit(self, back_home: bool = False) -> None:
        """Resize and move the window to fit its screen (see the module doc)."""
        w = self._window
        if w.isMaximized() or w.isFullScreen():
            return
        screen = w.screen()
        available = room_for(w)
        if screen is None or available is None:
            return
        area = screen.availableGeometry()
        layout = w.layout()
        minimum = layout.totalMinimumSize() if layout is not None else w.minimumSizeHint()
        wanted = self._before if self._before is not None else w.size()
        size = fitted_size(wanted, minimum, available)
        if size != w.size():
            w.resize(size)
        frame = w.frameGeometry()
        moved = placed(frame, area)
        if moved.topLeft() != frame.topLeft():
            w.move(moved.topLeft())
        if back_home:
            self._before = None
