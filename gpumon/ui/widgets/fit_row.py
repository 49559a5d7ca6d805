"""One line of labels that share its width by priority, not by stretch factors.

Stretch factors share a row in fixed proportions whatever the text: in a GPU panel's header
(title at stretch 2, health mark at 3) "● healthy" took 60 % of the row while the bus id beside
it was cut to "000000…", and at 200 % the ✖ mark left the panel. A ``FitRow`` gives each label
the widest of its forms (``RunsLabel.set_runs(..., shorter=...)``) that lets the whole row fit,
giving up room in a fixed order (``steps``: which label takes its next shorter form first),
then cuts the labels named in ``cuts`` with "…", never below a few characters. Left labels sit
at the left edge, right labels at the right edge, and what is left over lies between them.

The row is one line tall and its size hint never depends on the text, so a new reading only
places the labels again (a few ``setGeometry`` calls); the window is never laid out for it.

``fit`` is the arithmetic alone, testable without Qt.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from PySide6.QtCore import QEvent, QRect, QSize
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QSizePolicy, QWidget

from gpumon.ui.widgets.runs_label import RunsLabel


@dataclass(frozen=True)
class Piece:
    """A label's forms as widths (longest first; empty: hidden) and the narrowest it may
    be cut to with "…" (0: it is never cut: its last form always shows whole)."""

    widths: tuple[float, ...]
    cut_to: float = 0.0


def fit(room: float, pieces: Sequence[Piece], steps: Sequence[int], cuts: Sequence[int],
        gap: float) -> list[tuple[int, float]]:
    """Per piece, (form shown, width given), so that the widths and the gaps between the
    shown pieces add up to no more than ``room`` where that can be done: each step of
    ``steps`` (a piece's index) takes that piece's next shorter form while the row is too
    wide, then the pieces in ``cuts`` are cut in that order, each down to its ``cut_to``."""
    form = [0] * len(pieces)
    shown = [bool(p.widths) for p in pieces]
    gaps = gap * max(0, sum(shown) - 1)

    def width(i: int) -> float:
        return pieces[i].widths[form[i]] if shown[i] else 0.0

    def total() -> float:
        return sum(width(i) for i in range(len(pieces))) + gaps

    for i in steps:
        if total() <= room:
            break
        if shown[i] and form[i] + 1 < len(pieces[i].widths):
            form[i] += 1
    given = [width(i) for i in range(len(pieces))]
    over = total() - room
    for i in cuts:
        if over <= 0:
            break
        if shown[i]:
            take = min(over, max(0.0, given[i] - pieces[i].cut_to))
            given[i] -= take
            over -= take
    return [(form[i], given[i]) for i in range(len(pieces))]


class FitRow(QWidget):
    """Labels on one line, sized by ``fit`` (see the module doc)."""

    def __init__(self, gap_chars: float = 1.0, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._labels: list[tuple[RunsLabel, bool, float]] = []  # label, at the right, cut to
        self._steps: tuple[int, ...] = ()
        self._cuts: tuple[int, ...] = ()
        self._gap_chars = gap_chars
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)

    def add(self, label: RunsLabel, *, right: bool = False, cut_chars: float = 0.0) -> int:
        """Put ``label`` in the row (left or right group); ``cut_chars``: it may be cut with
        "…" down to this many average characters (0: never). Returns its index."""
        label.setParent(self)
        self._labels.append((label, right, cut_chars))
        return len(self._labels) - 1

    def set_order(self, steps: Sequence[int], cuts: Sequence[int]) -> None:
        """Which label takes its next shorter form first, second …; which are cut then."""
        self._steps, self._cuts = tuple(steps), tuple(cuts)

    def sizeHint(self) -> QSize:
        return QSize(self.fontMetrics().averageCharWidth() * 10, self._line_height())

    def minimumSizeHint(self) -> QSize:
        return QSize(0, self._line_height())

    def _line_height(self) -> int:
        return max([self.fontMetrics().height(),
                    *(label.sizeHint().height() for label, _, _ in self._labels)])

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.LayoutRequest:  # a label's text or visibility changed
            self.place()
            return True
        if event.type() == QEvent.Type.FontChange:
            self.updateGeometry()  # a new line height: the parent lays out once
        return super().event(event)

    def resizeEvent(self, event: QResizeEvent) -> None:
        self.place()

    def place(self) -> None:
        """Give each label its width and place it (called on a resize and a new text)."""
        char = self.fontMetrics().averageCharWidth()
        pieces = []
        for label, _, cut_chars in self._labels:
            widths = tuple(math.ceil(w) for w in label.form_widths()) \
                if not label.isHidden() else ()
            pieces.append(Piece(widths, min(cut_chars * char, widths[-1] if widths else 0)))
        gap = self._gap_chars * char
        plan = fit(self.width(), pieces, self._steps, self._cuts, gap)
        height = self.height()
        left, right = 0, self.width()
        for (label, at_right, _), (_, width) in zip(self._labels, plan, strict=True):
            if label.isHidden():
                continue
            w = int(width)
            if at_right:
                continue
            label.setGeometry(QRect(left, 0, w, height))
            left += w + int(gap)
        for (label, at_right, _), (_, width) in reversed(list(zip(self._labels, plan,
                                                                   strict=True))):
            if label.isHidden() or not at_right:
                continue
            w = int(width)
            label.setGeometry(QRect(right - w, 0, w, height))
            right -= w + int(gap)
