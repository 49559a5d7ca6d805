"""A window of its own opened from the menus (a cluster, machines over SSH, a recording),
shown in front of the one that opened it and closed with the application: its sampling thread
ends when the application quits, not after it."""

from __future__ import annotations

from PySide6.QtWidgets import QApplication, QMainWindow


def show_beside(window: QMainWindow, kept: list[QMainWindow]) -> QMainWindow:
    """Show ``window`` in front, keep it in ``kept`` (a window only garbage-collected never
    gets its closeEvent), and close it when the application quits."""
    kept.append(window)
    app = QApplication.instance()
    if app is not None:
        app.aboutToQuit.connect(window.close)
    window.show()
    window.raise_()
    return window
