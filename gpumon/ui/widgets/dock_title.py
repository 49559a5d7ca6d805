"""A dock's title bar that zooms with the window.

QDockWidget paints its own title in ``QApplication.font("QDockWidgetTitle")``, read once when
the dock is made, so after a zoom step the title stayed at the size it had (the Event log's
title at 9 pt in a window at 300 %). This title bar is an ordinary label and a close button,
which take the application's font as every other widget does. Mouse presses on the label
are left to the dock (it moves, floats and docks as with its own title bar).

    dock.setTitleBarWidget(DockTitle(dock))
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QSize
from PySide6.QtWidgets import (
    QDockWidget,
    QHBoxLayout,
    QLabel,
    QStyle,
    QToolButton,
    QWidget,
)

from gpumon.i18n import tr


class DockTitle(QWidget):
    """``label`` (the dock's window title) and ``close_button``."""

    def __init__(self, dock: QDockWidget) -> None:
        super().__init__(dock)
        self.setObjectName(f"{dock.objectName()}Title")
        self.label = QLabel(dock.windowTitle())
        self.close_button = QToolButton()
        self.close_button.setAutoRaise(True)
        self.close_button.setIcon(self.style().standardIcon(
            QStyle.StandardPixmap.SP_TitleBarCloseButton))
        self.close_button.setToolTip(tr("Close"))
        self.close_button.setAccessibleName(tr("Close {title}", title=dock.windowTitle()))
        self.close_button.clicked.connect(dock.close)
        dock.windowTitleChanged.connect(self.label.setText)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(4, 1, 2, 1)
        layout.addWidget(self.label, 1)
        layout.addWidget(self.close_button)
        self._fit_icon()

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:
            self._fit_icon()

    def _fit_icon(self) -> None:
        """The close button's cross as tall as the text: it grows with the zoom too."""
        side = max(10, int(self.fontMetrics().height() * 0.8))
        self.close_button.setIconSize(QSize(side, side))
