"""A one-line label of styled runs (plain, bold, coloured) that is cheap to update every tick.

A rich-text QLabel lays out a QTextDocument for its size hint on every ``setText``; for the
GPU panels' readouts (three labels a GPU, new values every tick) that was ~0.2 ms a label
here, half of a tick's work besides the curves. A ``RunsLabel`` is a plain-text QLabel
(``text()`` is what a person reads, for tests and screen readers) that paints its runs itself
from cached ``QStaticText``. Longer text than fits is clipped, like the rich labels were.

    label = RunsLabel()
    label.set_runs([TextRun("■", color="#1f77b4"), TextRun(" Memory "), TextRun("6.76", bold=True)])
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QEvent, QPointF, Qt
from PySide6.QtGui import QColor, QFont, QPainter, QPaintEvent, QStaticText
from PySide6.QtWidgets import QLabel, QWidget

_CACHE_LIMIT = 512  # static texts kept per label; values repeat a lot (clocks, totals)


@dataclass(frozen=True, slots=True)
class TextRun:
    """A piece of the label's text in one style."""

    text: str
    bold: bool = False
    color: str | None = None  # None: the palette's text colour (follows the theme)


class RunsLabel(QLabel):
    """``set_runs`` replaces the content; it does nothing when the runs are unchanged."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setTextFormat(Qt.TextFormat.PlainText)
        self._runs: tuple[TextRun, ...] = ()
        self._joined = ""  # the runs' text: a plain setText() elsewhere replaces the runs
        self._static: dict[tuple[str, bool], QStaticText] = {}
        self._fonts: tuple[QFont, QFont] | None = None

    @property
    def runs(self) -> tuple[TextRun, ...]:
        return self._runs

    def set_runs(self, runs: list[TextRun] | tuple[TextRun, ...]) -> None:
        runs = tuple(runs)
        if runs == self._runs:
            return
        self._runs = runs
        self._joined = "".join(r.text for r in runs)
        self.setText(self._joined)  # size hint, accessibility, update()

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 (Qt name)
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:
            self._fonts = None
            self._static.clear()

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 (Qt name)
        if not self._runs or self.text() != self._joined:  # plain text set with setText()
            super().paintEvent(event)
            return
        if self._fonts is None:
            bold = QFont(self.font())
            bold.setBold(True)
            self._fonts = (self.font(), bold)
        if len(self._static) > _CACHE_LIMIT:
            self._static.clear()
        rect = self.contentsRect()
        painter = QPainter(self)
        painter.setClipRect(rect)
        text_color = self.palette().color(self.foregroundRole())
        x = float(rect.left())
        for run in self._runs:
            static = self._static.get((run.text, run.bold))
            font = self._fonts[run.bold]
            if static is None:
                static = QStaticText(run.text)
                static.setTextFormat(Qt.TextFormat.PlainText)
                static.prepare(font=font)
                self._static[(run.text, run.bold)] = static
            size = static.size()
            y = rect.top() + (rect.height() - size.height()) / 2.0
            painter.setFont(font)
            painter.setPen(QColor(run.color) if run.color else text_color)
            painter.drawStaticText(QPointF(x, y), static)
            x += size.width()
            if x > rect.right():
                break
        painter.end()
