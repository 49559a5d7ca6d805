"""The lesson step's narration: a wrapped label that asks for its whole height and scrolls
when the page cannot give it (a long narration at 300 % zoom on a small screen), so that no
line is ever cut off. The page says how much room it can spare (:meth:`NarrationArea.fit`):
the code box and the output give way first, down to their smallest."""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QFrame, QLabel, QScrollArea, QSizePolicy, QWidget

#: Lines the narration keeps when room is short; the rest scrolls.
MIN_LINES = 3


class NarrationArea(QScrollArea):
    """A frameless, vertically scrolling holder of ``label`` (word-wrapped), as tall as the
    label needs at its width, and no less than :data:`MIN_LINES` lines where room is short."""

    def __init__(self, label: QLabel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.label = label
        label.setWordWrap(True)
        self.setObjectName("lessonNarrationArea")
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setWidgetResizable(True)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
        self.setWidget(label)
        self.viewport().setAutoFillBackground(False)
        label.setAutoFillBackground(False)

    def _text_height(self) -> int:
        width = self.viewport().width() if self.isVisible() else self.width()
        return self.label.heightForWidth(max(1, width)) + 2 * self.frameWidth()

    def sizeHint(self) -> QSize:
        return QSize(super().sizeHint().width(), self._text_height())

    def minimumSizeHint(self) -> QSize:
        lines = MIN_LINES * self.label.fontMetrics().lineSpacing() + 2 * self.frameWidth()
        return QSize(0, min(lines, self._text_height()))

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        if event.size().width() != event.oldSize().width():
            self.updateGeometry()  # another width wraps the text to another height

    def refit(self) -> None:
        """The text or the font changed: ask the layout for the new height."""
        self.updateGeometry()

    def fit(self, room: int) -> None:
        """Be at least as tall as the text where ``room`` (what the page can spare) allows,
        else ``room``, never less than :data:`MIN_LINES` lines: the rest scrolls."""
        lines = MIN_LINES * self.label.fontMetrics().lineSpacing() + 2 * self.frameWidth()
        least = max(min(lines, self._text_height()), min(self._text_height(), room))
        if least != self.minimumHeight():
            self.setMinimumHeight(least)

    def cut_off(self) -> bool:
        """Whether part of the text is out of sight now (it can be scrolled to)."""
        return self.verticalScrollBar().maximum() > 0
