"""A small box of text that floats over a widget beside the pointer: the values under it.

The values sit where the eye is, beside the point being read, not in a toolbar 300-1000 px away
from the graph, and the box is as large as its text at any zoom. This box is a child of the
widget it floats over (not a window: no focus, no window manager), as large as its text needs
in the current font, placed below and right of the pointer, or on the other side where that
would leave the graph, and kept inside the graph (inside the whole widget when the graph is
smaller than the box). It lets the mouse through, so moving over it keeps reading the graph
below.

    box = HoverBox(panel)
    box.show_at("GPU 0 at 14:03:12 (−12.3 s)", ["Memory used 12.34 GiB", …], point, graph_rect)
"""

from __future__ import annotations

from PySide6.QtCore import QPoint, QRect, Qt
from PySide6.QtGui import QFont, QPalette
from PySide6.QtWidgets import QFrame, QLabel, QVBoxLayout, QWidget

from gpumon.i18n import tr

OFFSET = 14  # px between the pointer and the box


def place_box(size: tuple[int, int], point: QPoint, inside: QRect, outer: QRect) -> QPoint:
    """Top-left of a box of ``size`` beside ``point``: below right of it, flipped left or up
    where it would leave ``inside``, then moved into ``inside`` (into ``outer`` where the
    box is larger than ``inside``)."""
    w, h = size
    x, y = point.x() + OFFSET, point.y() + OFFSET
    if x + w > inside.right() + 1:
        x = point.x() - OFFSET - w
    if y + h > inside.bottom() + 1:
        y = point.y() - OFFSET - h
    for area in ((inside,) if w <= inside.width() and h <= inside.height() else (outer,)):
        x = max(area.left(), min(x, area.right() + 1 - w))
        y = max(area.top(), min(y, area.bottom() + 1 - h))
    return QPoint(x, y)


class HoverBox(QFrame):
    """A heading and lines of values, floating over ``parent`` (see the module doc)."""

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self.setObjectName("hoverReadout")
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self.setFrameShape(QFrame.Shape.Box)
        self.setAutoFillBackground(True)
        self.setBackgroundRole(QPalette.ColorRole.ToolTipBase)
        self.setForegroundRole(QPalette.ColorRole.ToolTipText)
        self.heading = QLabel(self)
        self.heading.setObjectName("hoverHeading")
        bold = QFont()
        bold.setBold(True)  # only the weight: the size follows the zoom
        self.heading.setFont(bold)
        self.values = QLabel(self)
        self.values.setObjectName("hoverValues")
        self.setAccessibleName(tr("Values under the mouse"))
        for label in (self.heading, self.values):
            label.setTextFormat(Qt.TextFormat.PlainText)
            label.setForegroundRole(QPalette.ColorRole.ToolTipText)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 4, 6, 4)
        layout.setSpacing(2)
        layout.addWidget(self.heading)
        layout.addWidget(self.values)
        self.hide()

    def text(self) -> str:
        """What the box says, heading first, one value a line."""
        return "\n".join(t for t in (self.heading.text(), self.values.text()) if t)

    def show_at(self, heading: str, lines: list[str], point: QPoint, inside: QRect) -> None:
        """Show ``heading`` and ``lines`` beside ``point``, inside ``inside`` (coordinates of
        the parent)."""
        if heading != self.heading.text():
            self.heading.setText(heading)
        values = "\n".join(lines)
        if values != self.values.text():
            self.values.setText(values)
        self.values.setVisible(bool(lines))
        layout = self.layout()
        if layout is not None:
            layout.activate()
        size = self.sizeHint()
        parent = self.parentWidget()
        outer = parent.rect() if parent is not None else inside
        self.setGeometry(QRect(place_box((size.width(), size.height()), point, inside, outer),
                               size))
        self.show()
        self.raise_()
