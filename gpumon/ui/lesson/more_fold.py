"""A lesson step's "More": what a 45-minute class can skip (edge cases, details, more measured
figures), folded under the narration. Closed on every step shown, so the class reads only the
narration; "More ▸" (or Alt+M) opens it, and its text scrolls where the page is short, as the
narration does (narration.py). A step without more shows nothing here.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QLabel, QToolButton, QVBoxLayout, QWidget

from gpumon.i18n import tr
from gpumon.ui.lesson.narration import NarrationArea

KEY = "Alt+M"


class MoreFold(QWidget):
    """A "More ▸" button and, when it is open, the text under it."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("lessonMore")
        self.button = QToolButton()
        self.button.setObjectName("lessonMoreButton")
        self.button.setCheckable(True)
        self.button.setAutoRaise(True)
        self.button.setToolTip(QKeySequence(KEY).toString(
            QKeySequence.SequenceFormat.NativeText))
        self.button.toggled.connect(self._show)
        self.label = QLabel()
        self.label.setObjectName("lessonMoreText")
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.area = NarrationArea(self.label)
        self.area.hide()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.button, 0, Qt.AlignmentFlag.AlignLeft)
        layout.addWidget(self.area)
        key = QShortcut(QKeySequence(KEY), parent or self)
        key.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        key.activated.connect(self.toggle)
        self.set_text("")

    def set_text(self, text: str) -> None:
        """The step's more, in the language in use ("" hides the fold); closed again."""
        self.label.setText(text)
        self.button.setChecked(False)
        self._show(False)
        self.setVisible(bool(text))

    @property
    def is_open(self) -> bool:
        return self.button.isChecked()

    def toggle(self) -> None:
        if self.label.text():
            self.button.setChecked(not self.button.isChecked())

    def _show(self, on: bool) -> None:
        self.button.setText(tr("Less ▾") if on else tr("More ▸"))
        self.area.setVisible(on)
        self.area.refit()
