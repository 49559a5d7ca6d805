"""The readings above a GPU panel's two graphs: side by side, each over its graph, where the
panel is wide enough for both; one above the other, each across the panel, where it is not.

At 300 % a panel two to a row of a 1400 px window is ~680 px wide: "■ GPU 100 %   ■ Mem ctrl
100 %" alone needs 611 px, so side by side the readings were cut, and a panel wide enough for
both (~1300 px) left room for one panel per row. Stacked, they cost one line of height
instead, and two panels fit a row. The arrangement is chosen from the widest readings
(``panel_labels.WIDEST``) in the current font and language, so it changes with the panel's
width or the zoom, never with a new reading; a new reading only repaints its label (like
``field.Field``, this widget has no layout for a label's new text to invalidate).
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QRect, QSize
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QSizePolicy, QWidget

from gpumon import i18n
from gpumon.ui.monitor.panel_labels import MEMORY_RUNS_SHOWN, WIDEST, memory_runs, util_runs
from gpumon.ui.widgets.runs_label import RunsLabel, runs_width


class GraphLabels(QWidget):
    """``memory`` and ``util`` labels over two graph columns ``spacing`` px apart."""

    def __init__(self, memory: RunsLabel, util: RunsLabel, spacing: int,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.memory, self.util = memory, util
        memory.setParent(self)
        util.setParent(self)
        self._spacing = spacing
        self.stacked = False
        self._needed: tuple[tuple[str, str], int] | None = None  # (font, language), width
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)

    def needed_width(self) -> int:
        """The widest reading a label must show whole (the memory up to its total), measured
        once for each font and language (a resize asks for it)."""
        font = self.memory.font()
        key = (font.key(), i18n.language())
        if self._needed is None or self._needed[0] != key:
            width = int(max(runs_width(memory_runs(WIDEST)[:MEMORY_RUNS_SHOWN], font),
                            runs_width(util_runs(WIDEST), font))) + 2
            self._needed = (key, width)
        return self._needed[1]

    def fits_side_by_side(self, width: int) -> bool:
        return (width - self._spacing) // 2 >= self.needed_width()

    def _line(self) -> int:
        return max(self.memory.sizeHint().height(), self.util.sizeHint().height())

    def sizeHint(self) -> QSize:
        return QSize(2 * self.needed_width() + self._spacing,
                     self._line() * (2 if self.stacked else 1))

    def minimumSizeHint(self) -> QSize:
        return QSize(self.needed_width(), self.sizeHint().height())

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() in (QEvent.Type.FontChange, QEvent.Type.StyleChange):
            self._arrange()
            self.updateGeometry()  # a new line height

    def resizeEvent(self, event: QResizeEvent) -> None:
        self._arrange()

    def _arrange(self) -> None:
        stacked = not self.fits_side_by_side(self.width())
        if stacked != self.stacked:
            self.stacked = stacked
            self.updateGeometry()  # one line more or less: the panel lays out once
        w, line = self.width(), self._line()
        if stacked:
            self.memory.setGeometry(QRect(0, 0, w, line))
            self.util.setGeometry(QRect(0, line, w, line))
        else:
            half = (w - self._spacing) // 2
            self.memory.setGeometry(QRect(0, 0, half, self.height()))
            self.util.setGeometry(QRect(w - half, 0, half, self.height()))
