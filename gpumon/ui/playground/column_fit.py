"""The Playground's left column (forms, workspace, log) wide enough for its forms, and its
three parts sized in its height.

The column is sized when the page is first shown and again after each zoom: at 200 % the
forms need about 690 px where 420 were given, and the fields, the Run/Stop buttons and the
last form tab were hidden behind a horizontal scroll bar. The graphs keep at least one
column of GPU panels; past that (300 % in a narrow window) the column scrolls sideways.
In its height the results list (the log) keeps ``LOG_LINES`` lines and the workspace its
header and a row; the forms get the rest, up to what they need, and scroll where that is
less (at 300 % in a 900 px window the forms alone were taller than the column).
"""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtWidgets import QFrame, QScrollArea, QSplitter, QStyle, QWidget

LEFT_MIN, LEFT_MAX = 420, 560  # at 100 %: the forms, workspace and log column
GRAPHS_WIDTH = 900  # two columns of GPU panels (monitor/grid.py PANEL_MIN_WIDTH, 430 each)
GRAPHS_MIN = 440  # one column of GPU panels
LOG_LINES = 4  # the results list shows at least this many lines of text
WORKSPACE_SHARE = 0.35  # of the height the forms leave


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


def left_heights(total: int, forms: int, workspace: tuple[int, int], log: int) -> list[int]:
    """Heights of the forms, the workspace and the log in a column ``total`` px tall: the
    forms what they need (``forms``) once the workspace and the log have their least
    (``workspace[0]``, ``log``); of the rest, the workspace ``WORKSPACE_SHARE`` up to what
    it asks for (``workspace[1]``), the log the remainder."""
    least, wanted = workspace
    forms_h = max(0, min(forms, total - least - log))
    rest = total - forms_h
    workspace_h = min(max(least, wanted), max(least, int(rest * WORKSPACE_SHARE)))
    return [forms_h, workspace_h, max(log, rest - workspace_h)]


def fit_left_heights(splitter: QSplitter, forms: QWidget, log: QWidget) -> None:
    """Size the column's parts (``forms`` and ``log`` inside the splitter's first and last
    widget) by :func:`left_heights`."""
    workspace = splitter.widget(1)
    if splitter.count() != 3 or workspace is None:
        return
    total = splitter.height() - 2 * splitter.handleWidth()
    log_least = log.fontMetrics().lineSpacing() * LOG_LINES + 12
    splitter.setSizes(left_heights(
        total, forms.minimumSizeHint().height(),
        (workspace.minimumSizeHint().height(), workspace.sizeHint().height()), log_least))


class FormsScroll(QScrollArea):
    """The forms in a scroll area of their own that scrolls up and down only: as wide as
    the forms need (the column scrolls sideways instead), and as short as a few lines."""

    def __init__(self, forms: QWidget, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("playgroundFormsScroll")
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setWidget(forms)

    def _bar(self) -> int:
        return self.style().pixelMetric(QStyle.PixelMetric.PM_ScrollBarExtent, None, self)

    def minimumSizeHint(self) -> QSize:
        forms = self.widget()
        width = forms.minimumSizeHint().width() if forms is not None else 0
        return QSize(width + self._bar(), self.fontMetrics().lineSpacing() * 4)

    def sizeHint(self) -> QSize:
        forms = self.widget()
        hint = forms.sizeHint() if forms is not None else QSize()
        return QSize(hint.width() + self._bar(), hint.height())
