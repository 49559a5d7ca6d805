"""The Playground's forms in any column width: a form's grid puts its fields side by side
where they fit and one under another where they do not, and the form tabs wrap into rows of
buttons where their bar is wider than the column.

At 300 % zoom in a 1400 px window the GPU graphs keep one panel's width (about 780 px) and
the forms get about 600 px: the Model form side by side needs 966 px and the tab bar 718,
and the column used to scroll sideways, its buttons, lists and tabs cut by the scroll
area's edge. One under another, the widest form needs about 420 px there.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtWidgets import (
    QButtonGroup,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QStyle,
    QTabWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
    QWidgetItem,
)


def _least(cell: QWidget) -> int:
    """The width a layout gives ``cell`` at the least (nothing for a hidden one)."""
    return 0 if cell.isHidden() else QWidgetItem(cell).minimumSize().width()


WIDE, PAIRS, STACKED = 0, 1, 2  # a form's arrangements, widest first

Places = list[list[tuple[QWidget, int, int]]]


def _blank(cell: QWidget) -> bool:
    return isinstance(cell, QLabel) and not cell.text()


def places(rows: Sequence[Sequence[QWidget]], how: int) -> Places:
    """Per row of the form, where each cell goes: (cell, line, column), lines counted from
    the row's first. ``WIDE``: as given; ``PAIRS``: a label and the field after it on a
    line (columns 0 and 1), any other cell alone in column 1; ``STACKED``: a label over its
    field, both in column 0 (a blank label beside its field, in a column with no width)."""
    out: Places = []
    for row in rows:
        if how == WIDE:
            out.append([(cell, 0, c) for c, cell in enumerate(row)])
            continue
        found: list[tuple[QWidget, int, int]] = []
        line, i = 0, 0
        while i < len(row):
            labelled = isinstance(row[i], QLabel) and i + 1 < len(row)
            if labelled and how == PAIRS:
                found += [(row[i], line, 0), (row[i + 1], line, 1)]
                i += 2
            elif labelled and _blank(row[i]):
                found += [(row[i], line, 1), (row[i + 1], line, 0)]
                i += 2
            else:
                found.append((row[i], line, 1 if how == PAIRS else 0))
                i += 1
            line += 1
        out.append(found)
    return out


class FormGrid(QGridLayout):
    """A form's grid of ``rows`` (widgets; an empty row keeps a place for an error message)
    in one of three arrangements (:func:`places`); :meth:`need` the least width of each."""

    def __init__(self, rows: Sequence[Sequence[QWidget]], spacing: int = 6) -> None:
        super().__init__()
        self.setContentsMargins(spacing, spacing, spacing, spacing)
        self.setHorizontalSpacing(spacing)
        self._rows = [list(r) for r in rows]
        self._places = [places(self._rows, how) for how in (WIDE, PAIRS, STACKED)]
        self._across: dict[QWidget, int] = {}  # widgets across every column, at a form row
        self.how: int | None = None
        self.arrange(WIDE)

    def _line(self, row: int) -> int:
        """The grid row where the form's ``row`` starts in the current arrangement."""
        return sum(max(1, len({line for _, line, _ in found}))
                   for found in self._places[self.how or WIDE][:row])

    def _columns(self) -> int:
        return max(1, max(len(r) for r in self._rows) if self.how == WIDE else 2)

    def arrange(self, how: int) -> None:
        """Place every cell as ``how`` says (``WIDE``, ``PAIRS`` or ``STACKED``)."""
        if how == self.how:
            return
        held = [w for w in self._across if self.indexOf(w) >= 0]  # not moved to another form
        while self.count():
            self.takeAt(0)
        for c in range(self.columnCount()):
            self.setColumnStretch(c, 0)
        self.how = how
        for r, found in enumerate(self._places[how]):
            for cell, line, column in found:
                self.addWidget(cell, self._line(r) + line, column)
        for widget in held:
            self.addWidget(widget, self._line(self._across[widget]), 0, 1, self._columns())
        self.setColumnStretch(self._columns(), 1)

    def fit(self, width: int) -> None:
        """The widest arrangement whose least width fits ``width``."""
        self.arrange(next((how for how in (WIDE, PAIRS) if self.need(how) <= width), STACKED))

    def place_across(self, widget: QWidget, row: int) -> None:
        """``widget`` across every column, in the form's (empty) row ``row``, in any
        arrangement."""
        self._across[widget] = row
        self.addWidget(widget, self._line(row), 0, 1, self._columns())

    def need(self, how: int) -> int:
        """The least width of the form in arrangement ``how``."""
        widths: dict[int, int] = {}
        for found in self._places[how]:
            for cell, _line, column in found:
                widths[column] = max(widths.get(column, 0), _least(cell))
        used = [w for w in widths.values() if w > 0]
        m = self.contentsMargins()
        return sum(used) + self.horizontalSpacing() * max(0, len(used) - 1) + m.left() + m.right()


class TabChoice(QWidget):
    """The tabs of ``tabs`` as rows of buttons, shown in place of its tab bar where the bar
    is wider than the column (:meth:`fit`); as many buttons a row as fit."""

    def __init__(self, tabs: QTabWidget, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("formTabChoice")
        self._tabs = tabs
        self.buttons: list[QToolButton] = []
        self._group = QButtonGroup(self)  # one checked, the tab in front
        for i in range(tabs.count()):
            button = QToolButton(self)
            button.setText(tabs.tabText(i))
            button.setCheckable(True)
            self._group.addButton(button, i)
            button.setAutoRaise(True)
            button.setAccessibleName(tabs.tabText(i))
            button.clicked.connect(lambda _=False, i=i: tabs.setCurrentIndex(i))
            self.buttons.append(button)
        tabs.currentChanged.connect(self._show_current)
        self._show_current(tabs.currentIndex())
        self._rows = QVBoxLayout(self)
        self._rows.setContentsMargins(0, 0, 0, 0)
        self._rows.setSpacing(2)
        self._per_row: list[int] = []
        self.hide()

    def _show_current(self, index: int) -> None:
        if 0 <= index < len(self.buttons):
            self.buttons[index].setChecked(True)

    def need(self) -> int:
        """The widest button: the least width of the choice."""
        return max((b.sizeHint().width() for b in self.buttons), default=0)

    def fit(self, width: int) -> None:
        """The tab bar where it fits ``width``, else the buttons in rows that fit it."""
        bar = self._tabs.tabBar()
        wraps = bar.sizeHint().width() > width
        bar.setVisible(not wraps)
        self.setVisible(wraps)
        if wraps:
            self._arrange(width)

    def _arrange(self, width: int) -> None:
        spacing = self._rows.spacing()
        per_row: list[int] = []
        used = width + 1
        for button in self.buttons:
            w = button.sizeHint().width()
            if per_row and used + spacing + w <= width:
                per_row[-1] += 1
                used += spacing + w
            else:
                per_row.append(1)
                used = w
        if per_row == self._per_row:
            return
        self._per_row = per_row
        while self._rows.count():
            item = self._rows.takeAt(0)
            line = item.layout() if item is not None else None
            while line is not None and line.count():
                line.takeAt(0)
        buttons = iter(self.buttons)
        for n in per_row:
            line = QHBoxLayout()
            line.setSpacing(spacing)
            for _ in range(n):
                line.addWidget(next(buttons))
            line.addStretch(1)
            self._rows.addLayout(line)


def frame_width(widget: QWidget) -> int:
    """Both sides of ``widget``'s frame (a tab widget's pane, say)."""
    return 2 * widget.style().pixelMetric(QStyle.PixelMetric.PM_DefaultFrameWidth, None, widget)
