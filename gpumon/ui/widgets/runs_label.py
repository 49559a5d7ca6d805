"""A one-line label of styled runs (plain, bold, coloured) that is cheap to update every tick.

A rich-text QLabel lays out a QTextDocument for its size hint on every ``setText``; for the
GPU panels' readouts (three labels a GPU, new values every tick) that was ~0.2 ms a label
here, half of a tick's work besides the curves. A ``RunsLabel`` is a plain-text QLabel
(``text()`` is what a person reads, for tests and screen readers) that paints its runs itself
from cached ``QStaticText``. A line may come with shorter forms of itself (``shorter``): the
label paints the first form that fits its width, and cuts the last one with "…" when none
does; the whole line is then in its tooltip. ``text()`` is always the whole line.

    label = RunsLabel()
    label.set_runs([TextRun("■", color="#1f77b4"), TextRun(" Memory "), TextRun("6.76", bold=True)],
                   shorter=[[TextRun("■", color="#1f77b4"), TextRun(" 6.76", bold=True)]])
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import accumulate
from typing import NamedTuple

from PySide6.QtCore import QEvent, QPointF, QRect, QSize, Qt
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontMetricsF,
    QHelpEvent,
    QPainter,
    QPaintEvent,
    QStaticText,
)
from PySide6.QtWidgets import QLabel, QToolTip, QWidget

_CACHE_LIMIT = 512  # static texts kept per label; values repeat a lot (clocks, totals)
ELLIPSIS = "\u2026"
MIN_CHARS = 4  # the narrowest a label asks to be, in average character widths
Runs = Sequence["TextRun"]


class TextRun(NamedTuple):
    """A piece of the label's text in one style. A tuple, so that comparing a label's runs
    with the last ones (``set_runs``, every tick) is done in C: as a dataclass its generated
    ``__eq__`` ran 520 times a tick on the Monitor with 8 GPUs."""

    text: str
    bold: bool = False
    color: str | None = None  # None: the palette's text colour (follows the theme)


def runs_width(runs: Runs, font: QFont) -> float:
    """The width ``runs`` need in ``font`` (bold runs in its bold), in pixels."""
    bold = QFont(font)
    bold.setBold(True)
    metrics = (QFontMetricsF(font), QFontMetricsF(bold))
    return sum(metrics[r.bold].horizontalAdvance(r.text) for r in runs)


class RunsLabel(QLabel):
    """``set_runs`` replaces the content; it does nothing when the runs are unchanged."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setTextFormat(Qt.TextFormat.PlainText)
        self._runs: tuple[TextRun, ...] = ()
        self._shorter: tuple[tuple[TextRun, ...], ...] = ()  # shorter forms, longest first
        self._joined = ""  # the runs' text: a plain setText() elsewhere replaces the runs
        self._static: dict[tuple[str, bool], QStaticText] = {}
        self._advance: dict[tuple[str, bool], float] = {}  # each static text's width
        self._fonts: tuple[QFont, QFont] | None = None
        # the forms the widths were measured for (in the current font), and the widths
        # measured so far (None: not yet; a paint measures only down to the form that fits)
        self._widths: tuple[tuple[tuple[TextRun, ...], ...], list[float | None]] | None = None
        self._prefix: list[float] | None = None  # the whole line's prefix widths
        self._placed: tuple[object, list[tuple[QPointF, QStaticText, bool, QColor]]] | None = None

    @property
    def runs(self) -> tuple[TextRun, ...]:
        return self._runs

    def set_runs(self, runs: Runs, shorter: Sequence[Runs] = ()) -> None:
        """Show ``runs``; where they do not fit, the first of ``shorter`` that does."""
        runs = tuple(runs)
        forms = tuple(tuple(f) for f in shorter)
        if runs == self._runs and forms == self._shorter:
            return
        self._shorter = forms
        if runs == self._runs:
            self.update()  # the same line, other shorter forms: no new size hint
            return
        self._runs = runs
        self._joined = "".join(r.text for r in runs)
        self.setText(self._joined)  # size hint, accessibility, update()

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:
            self._fonts = None
            self._widths = None
            self._placed = None
            self._static.clear()
            self._advance.clear()

    def minimumSizeHint(self) -> QSize:
        """A few characters wide: the text is elided rather than widening the layout."""
        hint = super().minimumSizeHint()
        narrow = self.fontMetrics().averageCharWidth() * MIN_CHARS
        margins = self.contentsMargins()
        return QSize(min(hint.width(), narrow + margins.left() + margins.right()),
                     hint.height())

    def full_width(self) -> float:
        """The width the whole text needs, in pixels (the runs' prepared static texts: a
        paint measured each run twice with new font metrics, ~40 % of a readout's paint)."""
        return self.form_width(0)

    def form_widths(self) -> list[float]:
        """The width of the whole line and of each shorter form, longest first (measured
        once for each text and font: a paint asks for them, and a FitRow at each change)."""
        return [self.form_width(k) for k in range(len(self._forms()))]

    def form_width(self, k: int) -> float:
        """The width of form ``k`` (0 the whole line), measured once for its text and font.
        A paint measures the forms only down to the first that fits, and a shorter form that
        is the whole line's first runs and one more (an item line cut with " · …") costs one
        run: with new values every tick, summing every run of every form of the panels'
        readouts was a third of the Monitor's paint."""
        forms = self._forms()
        if self._widths is None or self._widths[0] != forms:
            self._widths = (forms, [None] * len(forms))
            self._prefix = None
        widths = self._widths[1]
        width = widths[k]
        if width is None:
            form, whole = forms[k], forms[0]
            n = len(form) - 1
            if k == 0:
                width = self._prefix_widths(whole)[-1]
            elif n <= len(whole) and form[:n] == whole[:n]:
                last = form[-1]
                width = self._prefix_widths(whole)[n] + self._run_width(last.text, last.bold)
            else:
                width = sum(self._run_width(r.text, r.bold) for r in form)
            widths[k] = width
        return width

    def _prefix_widths(self, whole: tuple[TextRun, ...]) -> list[float]:
        """The width of the whole line's first n runs, for each n (cached with the widths)."""
        if self._prefix is None:
            self._prefix = [0.0, *accumulate(self._run_width(r.text, r.bold) for r in whole)]
        return self._prefix

    def _run_width(self, text: str, bold: bool) -> float:
        width = self._advance.get((text, bold))
        if width is None:
            width = self._advance[(text, bold)] = self._static_text(text, bold).size().width()
        return width

    def _forms(self) -> tuple[tuple[TextRun, ...], ...]:
        whole = self._painted_runs()
        return (whole, *self._shorter) if whole is self._runs else (whole,)

    def shown_form(self) -> int:
        """Which form is painted at the label's width: 0 the whole line, 1 the first shorter
        form …; the last one is cut with "…" when even it does not fit."""
        room = self.contentsRect().width() + 0.5
        count = len(self._forms())
        for k in range(count):
            if self.form_width(k) <= room:
                return k
        return count - 1

    def shown_text(self) -> str:
        """The text of the form painted at the label's width (before any cut with "…")."""
        return "".join(r.text for r in self._forms()[self.shown_form()])

    def _static_text(self, text: str, bold: bool) -> QStaticText:
        """``text`` laid out once in the label's font (bold or not), kept for later paints."""
        static = self._static.get((text, bold))
        if static is None:
            if len(self._static) > _CACHE_LIMIT:
                self._static.clear()
                self._advance.clear()
            static = QStaticText(text)
            static.setTextFormat(Qt.TextFormat.PlainText)
            static.prepare(font=self._run_fonts()[bold])
            self._static[(text, bold)] = static
        return static

    def is_elided(self) -> bool:
        """True when the whole line does not show: a shorter form, or cut with "…"."""
        return self.full_width() > self.contentsRect().width() + 0.5

    def tooltip_text(self) -> str:
        """What hovering shows: the whole line when it is elided, then the label's tooltip."""
        own = self.toolTip()
        if not self.is_elided():
            return own
        return f"{self.text()}\n\n{own}" if own else self.text()

    def event(self, e: QEvent) -> bool:
        if e.type() == QEvent.Type.ToolTip and isinstance(e, QHelpEvent):
            text = self.tooltip_text()
            if text:
                QToolTip.showText(e.globalPos(), text, self)
            else:
                QToolTip.hideText()
                e.ignore()
            return True
        return super().event(e)

    def _painted_runs(self) -> tuple[TextRun, ...]:
        if self._runs and self.text() == self._joined:
            return self._runs
        return (TextRun(self.text()),) if self.text() else ()  # plain text set with setText()

    def _run_fonts(self) -> tuple[QFont, QFont]:
        if self._fonts is None:
            bold = QFont(self.font())
            bold.setBold(True)
            self._fonts = (self.font(), bold)
        return self._fonts

    def paintEvent(self, event: QPaintEvent) -> None:
        forms = self._forms()
        if not forms[0]:
            super().paintEvent(event)
            return
        k = self.shown_form()
        rect = self.contentsRect()
        text_color = self.palette().color(self.foregroundRole())
        # where each run goes is worked out once for a text, a width and a colour: a label
        # painted again unchanged (a page coming back into view: ~80 labels) only draws
        key = (forms[k], k, rect.x(), rect.y(), rect.width(), rect.height(), text_color.rgba())
        if self._placed is None or self._placed[0] != key:
            self._placed = (key, self._place_runs(forms[k], k, rect, text_color))
        painter = QPainter(self)
        painter.setClipRect(rect)
        fonts = self._run_fonts()
        for point, static, bold, color in self._placed[1]:
            painter.setFont(fonts[bold])
            painter.setPen(color)
            painter.drawStaticText(point, static)
        painter.end()

    def _place_runs(self, runs: tuple[TextRun, ...], k: int, rect: QRect, text_color: QColor
                    ) -> list[tuple[QPointF, QStaticText, bool, QColor]]:
        """Each run's place, prepared text, weight and colour; the last run that does not fit
        is cut with "…" and the rest left out."""
        fonts = self._run_fonts()
        x = float(rect.left())
        right = float(rect.left() + rect.width())
        elide = self.form_width(k) > rect.width() + 0.5
        placed = []
        for run in runs:
            font = fonts[run.bold]
            text = run.text
            static = self._static_text(text, run.bold)
            last = False
            if elide:
                metrics = QFontMetricsF(font)
                last = x + static.size().width() > right - metrics.horizontalAdvance(ELLIPSIS)
            if last:  # this run does not fit with the ellipsis: cut it and stop
                text = metrics.elidedText(text + ELLIPSIS, Qt.TextElideMode.ElideRight, right - x)
                if not text.endswith(ELLIPSIS):
                    text = ELLIPSIS
                static = self._static_text(text, run.bold)
            size = static.size()
            y = rect.top() + (rect.height() - size.height()) / 2.0
            placed.append((QPointF(x, y), static, run.bold,
                           QColor(run.color) if run.color else text_color))
            x += size.width()
            if last or x > right:
                break
        return placed
