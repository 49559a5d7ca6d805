"""Esc and Ctrl+W close a secondary window (a process's, the topology, the about box, the
cluster address), as they close a dialog of most desktop programs; the shortcuts belong to
that window, so they never reach the main window's own Esc (the playground's Stop)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QWidget

CLOSE_KEYS = ("Esc", "Ctrl+W")


def close_on_keys(window: QWidget) -> list[QShortcut]:
    """Esc and Ctrl+W close ``window`` (a dialog is rejected: ``close`` does that)."""
    shortcuts = []
    for keys in CLOSE_KEYS:
        shortcut = QShortcut(QKeySequence(keys), window, window.close)
        shortcut.setContext(Qt.ShortcutContext.WindowShortcut)
        shortcuts.append(shortcut)
    return shortcuts
