"""The Playground's left column (forms, workspace, log) wide enough for its forms.

The column is sized when the page is first shown and again after each zoom: at 200 % the
forms need about 690 px where 420 were given, and the fields, the Run/Stop buttons and the
last form tab were hidden behind a horizontal scroll bar. The graphs keep at least one
column of GPU panels; past that (300 % in a narrow window) the column scrolls.
"""

from __future__ import annotations

from PySide6.QtWidgets import QScrollArea, QSplitter, QStyle

LEFT_MIN, LEFT_MAX = 420, 560  # at 100 %: the forms, workspace and log column
GRAPHS_WIDTH = 900  # two columns of GPU panels (monitor/grid.py PANEL_MIN_WIDTH, 430 each)
GRAPHS_MIN = 440  # one column of GPU panels


def left_width(need: int, total: int, graphs_min: int = GRAPHS_MIN) -> int:
    """The left column's width in a splitter ``total`` px wide, for forms that need
    ``need`` px: room for two columns of graphs at 100 %, never less than the forms need
    while one column of graphs keeps its width, and never less than ``LEFT_MIN``."""
    preferred = max(LEFT_MIN, min(LEFT_MAX, total - GRAPHS_WIDTH))
    return max(LEFT_MIN, min(max(preferred, need), total - graphs_min))


def forms_need(scroll: QScrollArea) -> int:
    """The width the column's content needs, with room for the vertical scroll bar."""
    inner = scroll.widget()
    if inner is None:
        return LEFT_MIN
    bar = scroll.style().pixelMetric(QStyle.PixelMetric.PM_ScrollBarExtent, None, scroll)
    return inner.minimumSizeHint().width() + bar + 2 * scroll.frameWidth()


def fit_left_column(splitter: QSplitter, scroll: QScrollArea, only_wider: bool = False) -> None:
    """Give the splitter's first widget (``scroll``) the width :func:`left_width` says;
    with ``only_wider``, only where that widens a column narrower than its forms need (a
    column the user narrowed by hand stays so until the window is resized)."""
    total = splitter.width() - splitter.handleWidth()
    if total <= 0:
        return
    need = forms_need(scroll)
    left = left_width(need, total)
    current = splitter.sizes()[0] if splitter.count() else 0
    if only_wider and (current >= need or left <= current):
        return
    splitter.setSizes([left, max(1, total - left)])
