"""The Playground's left column (forms, workspace, log) wide enough for its forms, and its
three parts sized in its height.

The column is sized when the page is first shown and again after each zoom: as wide as
the forms side by side need (at 200 % about 690 px where 420 were given) while the graphs
keep one GPU panel's width (about 780 px at 300 %); narrower, the forms rearrange to the
column (``reflow.py``), and only where even a label over its field does not fit does the
column scroll sideways. In its height the results come first: the log gets the newest
result whole (at least ``LOG_LINES`` lines) once the forms and the workspace have their
least; the forms get what they need of the rest, and scroll where that is less (at 300 %
in a 900 px window the log had 70 px and the newest result was cut).
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QSize, Qt, Signal
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QFrame, QScrollArea, QSplitter, QStyle, QVBoxLayout, QWidget

from gpumon.ui.playground.forms import ActionForms
from gpumon.ui.playground.log import OutcomeLog
from gpumon.ui.playground.reflow import STACKED, WIDE, TabChoice, frame_width
from gpumon.ui.widgets.refit import Refit

LEFT_MIN, LEFT_MAX = 420, 560  # at 100 %: the forms, workspace and log column
GRAPHS_WIDTH = 900  # two columns of GPU panels (monitor/grid.py PANEL_MIN_WIDTH, 430 each)
GRAPHS_MIN = 440  # one column of GPU panels
LOG_LINES = 4  # the results list shows at least this many lines of text
FORMS_LINES = 2  # the forms keep at least this many lines in sight (and scroll)
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


def least_width(scroll: QScrollArea, graphs_min: int, handle: int) -> int:
    """The least width of the page's splitter: the column's forms one field a line
    (``forms_need``) beside ``graphs_min`` of graphs. The page asks for it, so that the
    window grows where its screen has room and a zoom step takes back where it has not: at
    300 % on a 1280 x 800 screen (1600 x 1000 at 125 %) the column was 10 px narrower than
    its forms, scrolled sideways, and cut the Compute form's list of operations."""
    return forms_need(scroll) + graphs_min + handle


def fit_left_column(splitter: QSplitter, scroll: QScrollArea, only_wider: bool = False,
                    need: int = 0, graphs_min: int = GRAPHS_MIN) -> None:
    """Give the splitter's first widget (``scroll``) the width :func:`left_width` says for
    forms that need ``need`` px side by side (at least what ``scroll``'s content needs),
    the graphs keeping ``graphs_min``; with ``only_wider``, only where that widens a column
    narrower than its forms need or gives the graphs back their least (a column the user
    narrowed by hand stays so until the window is resized)."""
    total = splitter.width() - splitter.handleWidth()
    if total <= 0:
        return
    need = max(need, forms_need(scroll))
    left = left_width(need, total, graphs_min)
    current = splitter.sizes()[0] if splitter.count() else 0
    if only_wider and (current >= need or left <= current) and total - current >= graphs_min:
        return
    splitter.setSizes([left, max(1, total - left)])


def left_heights(total: int, forms: tuple[int, int], workspace: tuple[int, int],
                 log: tuple[int, int]) -> list[int]:
    """Heights of the forms, the workspace and the log in a column ``total`` px tall, each
    given as (least, wanted): the log what it wants (the newest result whole) once the
    forms and the workspace have their least; the forms what they want of the rest; of
    what remains, the workspace ``WORKSPACE_SHARE`` up to what it wants, the log the rest.
    The results come first: they are what a class looks at (at 300 % the log had 70 px,
    the newest result cut, while the forms kept 196)."""
    (forms_least, forms_want), (ws_least, ws_want), (log_least, log_want) = forms, workspace, log
    log_h = max(log_least, min(log_want, total - forms_least - ws_least))
    forms_h = max(forms_least, min(forms_want, total - ws_least - log_h))
    rest = total - forms_h
    workspace_h = min(max(ws_least, ws_want), max(ws_least, int(rest * WORKSPACE_SHARE)))
    workspace_h = max(ws_least, min(workspace_h, rest - log_h))
    return [forms_h, workspace_h, max(log_h, rest - workspace_h)]


def fit_left_heights(splitter: QSplitter, forms: QWidget, log: OutcomeLog) -> None:
    """Size the column's parts (``forms`` and ``log`` inside the splitter's first and last
    widget) by :func:`left_heights`."""
    workspace = splitter.widget(1)
    scroll = splitter.widget(0)
    if splitter.count() != 3 or workspace is None or scroll is None:
        return
    total = splitter.height() - 2 * splitter.handleWidth()
    splitter.setSizes(left_heights(
        total, (scroll.minimumSizeHint().height(), forms.minimumSizeHint().height()),
        (workspace.minimumSizeHint().height(), workspace.sizeHint().height()),
        (log_least(log), log.room_for(1))))


def log_least(log: OutcomeLog) -> int:
    """The results list's least height: ``LOG_LINES`` lines of text."""
    return log.fontMetrics().lineSpacing() * LOG_LINES + 12


def column_least(splitter: QSplitter, log: OutcomeLog) -> int:
    """The least height of the column (``splitter``: the forms' scroll area, the workspace,
    ``log``): the forms' and the workspace's least and ``LOG_LINES`` lines of results. The
    page asks for it, so that a zoom step the screen has no room for is taken back instead
    of leaving the results a line and a half (300 % in Chinese with Noto fonts)."""
    if splitter.count() != 3:
        return 0
    parts = (splitter.widget(i) for i in (0, 1))
    return (sum(p.minimumSizeHint().height() for p in parts if p is not None)
            + log_least(log) + 2 * splitter.handleWidth())


class FormsScroll(QScrollArea):
    """The forms (and :class:`TabChoice`, their tabs as buttons) in a scroll area of their
    own that scrolls up and down only: each form side by side where the width allows, one
    field a line where not (``reflow.py``), and as short as a few lines."""

    needChanged = Signal()  # the width the forms need side by side changed

    def __init__(self, forms: ActionForms, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("playgroundFormsScroll")
        Refit(self, self.fit)  # the zoom: the fields need more or less
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.forms = forms
        self.choice = TabChoice(forms)
        inner = QWidget()
        inner.setObjectName("playgroundFormsBody")
        column = QVBoxLayout(inner)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(2)
        column.addWidget(self.choice)
        column.addWidget(forms, 1)
        self.setWidget(inner)
        self._need = 0  # need(True) when last looked at
        inner.installEventFilter(self)

    def _bar(self) -> int:
        return self.style().pixelMetric(QStyle.PixelMetric.PM_ScrollBarExtent, None, self)

    def _room(self) -> int:
        """The forms' width: the scroll area's without its scroll bar, shown or not (the
        arrangement must not change when the bar comes or goes)."""
        return self.width() - self._bar() - 2 * self.frameWidth()

    def fit(self) -> None:
        """Each form side by side where it fits the width, else one field a line; the tab
        bar where it fits, else its tabs as rows of buttons."""
        room = self._room()
        if room <= 0:
            return
        self.choice.fit(room)
        page = room - frame_width(self.forms)
        for grid in self.forms.grids:
            grid.fit(page)

    def need(self, wide: bool) -> int:
        """The width the forms need side by side (``wide``) or one field a line (a label
        over its field), with the scroll bar."""
        pages = max((g.need(WIDE if wide else STACKED) for g in self.forms.grids), default=0)
        tabs = self.forms.tabBar().sizeHint().width() if wide else self.choice.need()
        return max(pages + frame_width(self.forms), tabs) + self._bar() + 2 * self.frameWidth()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """A field's width changed (a device list refits itself a pass after the zoom):
        the arrangement again, and ``needChanged`` for the column's width."""
        if watched is self.widget() and event.type() == QEvent.Type.LayoutRequest:
            need = self.need(True)
            if need != self._need:
                self._need = need
                self.fit()
                self.updateGeometry()
                self.needChanged.emit()
        return super().eventFilter(watched, event)

    def resizeEvent(self, event: QResizeEvent) -> None:
        self.fit()
        super().resizeEvent(event)

    def minimumSizeHint(self) -> QSize:
        return QSize(self.need(False), self.fontMetrics().lineSpacing() * FORMS_LINES)

    def sizeHint(self) -> QSize:
        inner = self.widget()
        hint = inner.sizeHint() if inner is not None else QSize()
        return QSize(hint.width() + self._bar(), hint.height())
