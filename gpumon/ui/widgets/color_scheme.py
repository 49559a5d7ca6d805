"""Whether the desktop is dark, and when that changes while the window is open: the "System"
theme follows it.

Qt says it through ``QStyleHints.colorScheme`` and ``colorSchemeChanged`` where the platform
knows (GNOME through the desktop portal, KDE, Windows, macOS; Qt 6.5 and later). Where the
scheme is Unknown (a bare X server, the offscreen platform, an older desktop) the palette the
platform gave the application says it instead: a dark window colour is a dark desktop, and
a later palette change that gpumon did not make itself (``own_change``) is the desktop's.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from PySide6.QtCore import QEvent, QObject, Qt, Signal, Slot
from PySide6.QtGui import QGuiApplication, QPalette

DARK_BELOW = 128  # a window colour darker than this (HSL lightness, 0-255) is a dark desktop


def palette_is_dark(palette: QPalette) -> bool:
    return palette.color(QPalette.ColorRole.Window).lightness() < DARK_BELOW


class _Desktop:
    """The desktop's palette, as far as the application's palette tells (process-wide)."""

    palette_dark: bool | None = None  # read at the first SystemScheme
    own = 0  # inside own_change: palette changes that are gpumon's


class SystemScheme(QObject):
    """``dark`` now, and ``changed(dark)`` when the desktop switches."""

    changed = Signal(bool)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        app = QGuiApplication.instance()
        assert isinstance(app, QGuiApplication)
        self._app = app
        if _Desktop.palette_dark is None:
            _Desktop.palette_dark = palette_is_dark(app.palette())
        self.dark = self._read()
        app.styleHints().colorSchemeChanged.connect(self._on_scheme)
        # Qt 6 still emits paletteChanged (deprecated for the ApplicationPaletteChange event).
        # An event filter on the application would see every event of every object: on the
        # Monitor tab at 1 s that was 8 % of the GUI thread's busy time (py-spy), for an event
        # that comes when the desktop's theme changes.
        if hasattr(app, "paletteChanged"):
            app.paletteChanged.connect(self._on_palette)
        else:
            app.installEventFilter(self)

    def _read(self) -> bool:
        scheme = self._app.styleHints().colorScheme()
        if scheme == Qt.ColorScheme.Unknown:
            return bool(_Desktop.palette_dark)
        return scheme == Qt.ColorScheme.Dark

    @contextmanager
    def own_change(self) -> Iterator[None]:
        """Palette changes made inside are gpumon's own (a theme applied), not the desktop's."""
        _Desktop.own += 1
        try:
            yield
        finally:
            _Desktop.own -= 1

    @Slot()
    def _on_scheme(self) -> None:
        self._update()

    @Slot()
    def _on_palette(self) -> None:
        if not _Desktop.own:
            _Desktop.palette_dark = palette_is_dark(self._app.palette())
            self._update()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self._app and event.type() == QEvent.Type.ApplicationPaletteChange:
            self._on_palette()
        return False

    def _update(self) -> None:
        dark = self._read()
        if dark != self.dark:
            self.dark = dark
            self.changed.emit(dark)
