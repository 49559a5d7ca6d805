"""The grid of GpuPanels, 1 to 16+ GPUs, in a scroll area.

Columns follow the square root of the GPU count, capped by how many panels fit the width,
so 4 GPUs make a 2×2 grid and 16 make 4×4 on a wide screen or scroll on a narrow one. Where
those rows would not fit the height and more columns would (narrower panels stack their
readings, ``graph_labels.py``), the grid takes as few more columns as that needs: 8 GPUs in
a 1400×900 window make two rows of four, all on screen, instead of three rows that scroll.

Only panels on screen redraw their curves each tick; one scrolled out of view (or not laid
out yet) updates its readouts only, and one hidden with View ▸ GPUs, on a tab that is not
shown, or in a window that is minimised or not exposed (``seen.py``) is not touched at all
(no readout text, no tooltip: a hidden readout's new text and tooltip still cost Qt events,
a third of an idle window's work with the Lesson tab in front). Each catches up, readouts
from the latest snapshot and curves from the History, as soon as it is on screen again
(scroll, resize, tab change, the window restored or exposed).

A panel redraws its curves when they have moved at least half a pixel (``GpuPanel.curve_lag``).
With a long window that is every few ticks, and since all panels move at the same speed they
would all come due on the same tick: one frame drawing every curve, the others none. The grid
spreads them: each tick it redraws as many due panels as the curves' speed needs on average
(the most behind first) and leaves the rest for the next ticks, but never lets a panel fall a
whole pixel behind. With a short window every panel is due on every tick and all are drawn.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Sequence
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QObject, QPoint, Qt, Signal
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import QGridLayout, QLabel, QScrollArea, QWidget

from gpumon.i18n import N_, tr
from gpumon.telemetry.history.store import History
from gpumon.telemetry.model.types import GpuInfo, Snapshot
from gpumon.ui.widgets.next_frame import after_next_frame
from gpumon.ui.widgets.refit import Refit
from gpumon.ui.widgets.reveal import Reveal, reveal
from gpumon.ui.widgets.seen import SeenWatch, window_seen

if TYPE_CHECKING:
    import numpy as np

    from gpumon.ui.monitor.panel import GpuPanel

PANEL_MIN_WIDTH = 310
SPACING = 6  # between panels
MARGIN = 2  # around them
NO_GPUS_TEXT = N_("No GPUs to show.")  # translated where it is shown


def columns_for(n: int, width: int, panel_width: int = PANEL_MIN_WIDTH, height: int = 0,
                panel_height: Callable[[int], int] | None = None) -> int:
    """ceil(sqrt(n)) columns, but no more than fit ``width`` at the panels' minimum width
    (``panel_width``: wider at a larger zoom); more, up to what fits the width, where the
    rows would not fit ``height`` and more columns make them fit (``panel_height(w)``: the
    least height of a panel ``w`` wide)."""
    if n <= 0:
        return 1
    fit = max(1, width // max(1, panel_width))
    cols = max(1, min(math.ceil(math.sqrt(n)), fit, n))
    if panel_height is None or height <= 0:
        return cols
    for more in range(cols, min(fit, n) + 1):
        if rows_height(n, more, width, panel_height) <= height:
            return more
    return cols


def rows_height(n: int, cols: int, width: int, panel_height: Callable[[int], int]) -> int:
    """The height ``n`` panels need in ``cols`` columns of a grid ``width`` wide."""
    rows = math.ceil(n / cols)
    column = (width - 2 * MARGIN - SPACING * (cols - 1)) // cols
    return rows * panel_height(column) + SPACING * (rows - 1) + 2 * MARGIN


class GpuGrid(QScrollArea):
    """Holds one GpuPanel per GPU; rebuilt when the set of GPUs changes."""

    hovered = Signal(int, float)  # forwarded from the panels
    unhovered = Signal(int)  # forwarded from the panels
    shownChanged = Signal()  # the user hid or showed panels (View ▸ GPUs)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("gpuGrid")
        # the zoom: the panels' minimum width changed, so maybe the number of columns
        Refit(self, self._relayout_again)
        self.setWidgetResizable(True)
        self.setFrameShape(QScrollArea.Shape.NoFrame)
        self._body = QWidget()
        self._layout = QGridLayout(self._body)
        self._layout.setContentsMargins(MARGIN, MARGIN, MARGIN, MARGIN)
        self._layout.setSpacing(SPACING)
        self.setWidget(self._body)
        self._empty = QLabel(tr(NO_GPUS_TEXT))
        self._empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self._empty.setWordWrap(True)
        self._empty.setStyleSheet("color: #777;")
        self._empty.setObjectName("noGpusLabel")
        self._layout.addWidget(self._empty, 0, 0)
        self.panels: list[GpuPanel] = []
        self._hidden: frozenset[int] = frozenset()  # GPU indices the user chose not to see
        self._key: tuple[str, ...] = ()
        self._columns = 0
        self._latest: tuple[Snapshot, History, float] | None = None  # the last update_view
        self._last_t: float | None = None  # timestamp of the last update_view's snapshot
        self._behind: set[int] = set()  # panels whose curves skipped a tick while off screen
        self._catch_up_queued = False
        self.viewport().installEventFilter(self)
        self.verticalScrollBar().valueChanged.connect(self._queue_catch_up)
        self.horizontalScrollBar().valueChanged.connect(self._queue_catch_up)
        self._seen_watch = SeenWatch(self, self._queue_catch_up)  # restored, exposed again
        self._reveal: Reveal | None = None  # the graphs coming into view, a few at a time

    def panel(self, index: int) -> GpuPanel | None:
        for p in self.panels:
            if p.index == index:
                return p
        return None

    def set_empty_text(self, text: str = "") -> None:
        """What the grid says while it has no panels (default: that there are no GPUs)."""
        text = text or tr(NO_GPUS_TEXT)
        if self._empty.text() != text:
            self._empty.setText(text)

    def set_gpus(self, gpus: Sequence[GpuInfo], window_s: float) -> bool:
        """Create panels for ``gpus``; False (and nothing done) when they are the same GPUs."""
        key = tuple(f"{g.index}:{g.uuid}" for g in gpus)
        if key == self._key and self.panels:
            return False
        self._key = key
        for p in self.panels:
            self._layout.removeWidget(p)
            p.deleteLater()
        self.panels = []
        # Imported with the first panels: its graphs' modules (pyqtgraph) are not needed
        # before the window's first frame, which comes before the first snapshot.
        from gpumon.ui.monitor.panel import GpuPanel

        for info in gpus:
            panel = GpuPanel(info, self._body, window_s=window_s)  # never a window of its own
            panel.hovered.connect(self.hovered)
            panel.unhovered.connect(self.unhovered)
            self.panels.append(panel)
        self._empty.setVisible(not self.panels)
        self._columns = 0
        self._relayout()
        return True

    def set_hidden(self, indices: Collection[int]) -> None:
        """Hide the panels of these GPU indices; the others close up the grid."""
        hidden = frozenset(indices)
        if hidden != self._hidden:
            self._hidden = hidden
            self._columns = 0
            self._relayout()
            self._queue_catch_up()
            self.shownChanged.emit()

    def shown_panels(self) -> list[GpuPanel]:
        return [p for p in self.panels if p.index not in self._hidden]

    def update_view(self, snap: Snapshot, history: History, window_s: float) -> None:
        """Readouts and due curves of the panels on screen; readouts only of the panels
        shown but not on screen; nothing of the hidden ones (see the module doc)."""
        self._latest = (snap, history, window_s)
        series = self._series_fn(snap, history, window_s)
        t = snap.timestamp_s
        dt = t - self._last_t if self._last_t is not None else 0.0
        self._last_t = t
        seen = window_seen(self)
        on_screen = [p for p in self.panels if seen and self._on_screen(p)]
        draw = self._due(on_screen, t, dt)
        catch_up = False
        for panel in self.panels:
            if panel in on_screen:
                panel.update_view(snap.sample_for(panel.index), t, series,
                                  curves=panel.index in draw)
                self._behind.discard(panel.index)
                continue
            if seen and panel.isVisible():  # scrolled away, or new and not laid out yet
                panel.update_view(snap.sample_for(panel.index), t, series, curves=False)
                catch_up = True  # it may be laid out (and so on screen) only later
            elif panel.index not in self._behind:
                catch_up = True  # hidden from now on: caught up when it shows again
            self._behind.add(panel.index)
        if catch_up:
            self._queue_catch_up()

    @staticmethod
    def _due(panels: Sequence[GpuPanel], t: float, dt: float) -> set[int]:
        """Indices of the panels whose curves are redrawn at ``t``, ``dt`` after the last
        tick: every panel a pixel or more behind; of those at least half a pixel behind, as
        many as the curves' speed needs on average (each moves ``dt`` × pixels per second a
        tick and is redrawn every half pixel), most behind first. ``dt`` <= 0 (the first
        tick, or time went back): every panel at least half a pixel behind."""
        lags = sorted(((p.curve_lag(t), p.index) for p in panels), reverse=True)
        due = [(lag, i) for lag, i in lags if lag >= 0.5]
        if dt <= 0.0:
            return {i for _, i in due}
        budget = math.ceil(sum(dt * p.pixels_per_s() for p in panels) / 0.5 - 1e-9)
        return {i for n, (lag, i) in enumerate(due) if lag >= 1.0 or n < max(1, budget)}

    def catch_up(self) -> None:
        """Bring the panels that skipped ticks off screen and are on screen now up to date:
        the latest readouts, the curves drawn whole from the History."""
        self._catch_up_queued = False
        if not self._behind or self._latest is None:
            return
        if not window_seen(self):
            return  # minimised or unmapped again meanwhile: SeenWatch calls back
        snap, history, window_s = self._latest
        series = self._series_fn(snap, history, window_s)
        for panel in self.panels:
            if panel.index in self._behind and self._on_screen(panel):
                panel.update_view(snap.sample_for(panel.index), snap.timestamp_s, series)
                self._behind.discard(panel.index)

    def showEvent(self, event: QShowEvent) -> None:
        """Shown again (its tab, the Playground borrowing it): the graphs come into view a
        panel at a time after the first frame (reveal.py), the curves caught up."""
        super().showEvent(event)
        if not event.spontaneous():
            plots = [w for p in self.shown_panels() for w in p.plots()]
            self._reveal = reveal(plots, self, self._reveal)
        self._queue_catch_up()

    def set_window(self, window_s: float) -> None:
        for panel in self.panels:
            panel.set_window(window_s)

    def set_stale(self, stale: bool) -> None:
        for panel in self.panels:
            panel.set_stale(stale)

    def clear_hover(self) -> None:
        for panel in self.panels:
            panel.clear_hover()

    def _relayout_again(self) -> None:
        """After a zoom step: the columns again (the panels are placed anew only when their
        number changes: placing all of them again was a second layout of the whole grid)."""
        self._relayout()
        self._queue_catch_up()

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if obj is self.viewport() and event.type() == QEvent.Type.Resize:
            self._relayout()
            self._queue_catch_up()
        return super().eventFilter(obj, event)

    @staticmethod
    def _series_fn(snap: Snapshot, history: History, window_s: float
                   ) -> Callable[[int, str], tuple[np.ndarray, np.ndarray]]:
        since = snap.timestamp_s - window_s

        def series(gpu: int, key: str) -> tuple[np.ndarray, np.ndarray]:
            return history.series(gpu, key, since=since)

        return series

    def _on_screen(self, panel: GpuPanel) -> bool:
        """Any part of the panel visible: shown, on the current tab, inside the viewport."""
        return panel.isVisible() and not panel.visibleRegion().isEmpty()

    def _queue_catch_up(self, *_: object) -> None:
        """Catch up once the event loop has laid the panels out (after a scroll or show),
        and after the frame being painted: the graphs of a grid just shown are veiled in
        it, and drawing the curves of 8 panels was ~30 ms of a tab switch's first frame."""
        if self._behind and not self._catch_up_queued:
            self._catch_up_queued = True
            after_next_frame(self, self.catch_up)

    def _usable_width(self) -> int:
        """The viewport's width without the vertical scroll bar, shown or not: the columns
        must not change when it comes or goes."""
        bar = self.verticalScrollBar()
        width = self.viewport().width()
        return width if bar.isVisible() else width - bar.sizeHint().width()

    def _panel_width(self, shown: Sequence[GpuPanel]) -> int:
        return max([PANEL_MIN_WIDTH] + [p.wanted_width() + SPACING for p in shown[:1]])

    def needed_height(self, width: int, every_row: bool = True, good: bool = False) -> int:
        """The least height that shows every shown panel (``every_row``; the columns chosen
        as the grid would for that height) or their first row, in a grid ``width`` wide;
        ``good``: with graphs of a good height rather than their least."""
        shown = self.shown_panels()
        if not shown:
            return 0
        width -= self.verticalScrollBar().sizeHint().width()
        n, panel_width = len(shown), self._panel_width(shown)

        def height_for(w: int) -> int:
            return shown[0].height_for(w, good)

        cols = columns_for(n, width, panel_width)
        if not every_row:
            return rows_height(min(n, cols), cols, width, height_for)
        fit = max(1, width // panel_width)
        return min(rows_height(n, c, width, height_for) for c in range(cols, min(fit, n) + 1))

    def first_graphs_height(self) -> int:
        """The least height that shows the first row's headers and ``PLOT_MIN_LINES`` lines of
        their graphs, the rest of the panels one scroll away: what the Monitor page keeps
        for the grid where it has no room for the first row whole (with View ▸ Activity on
        an 800 x 500 screen, the row needs 349 px of a 272 px page). As the panels are laid
        out now (0 without a shown panel)."""
        shown = self.shown_panels()
        if not shown:
            return 0
        from gpumon.ui.monitor.panel import PLOT_MIN_LINES

        graph = shown[0].memory_widget
        top = graph.mapTo(shown[0], QPoint(0, 0)).y()
        return (MARGIN + top + PLOT_MIN_LINES * graph.fontMetrics().height()
                + 2 * self.frameWidth())

    def first_row_count(self, width: int) -> int:
        """How many panels the first row holds in a grid ``width`` wide."""
        shown = self.shown_panels()
        if not shown:
            return 0
        width -= self.verticalScrollBar().sizeHint().width()
        return min(len(shown), self._columns or columns_for(len(shown), width,
                                                            self._panel_width(shown)))

    def _relayout(self) -> None:
        if not self.panels:
            return
        shown = self.shown_panels()
        cols = columns_for(len(shown), self._usable_width(), self._panel_width(shown),
                           self.viewport().height(),
                           shown[0].height_for if shown else None)
        if cols != self._columns:
            self._columns = cols
            for p in self.panels:
                self._layout.removeWidget(p)
                p.setVisible(p.index not in self._hidden)
            for i, p in enumerate(shown):
                self._layout.addWidget(p, i // cols, i % cols)
            for c in range(self._layout.columnCount()):
                self._layout.setColumnStretch(c, 1 if c < cols else 0)
            rows = math.ceil(len(shown) / cols)
            for r in range(self._layout.rowCount()):
                self._layout.setRowStretch(r, 1 if r < rows else 0)
        self._fill_rows(shown)

    def _fill_rows(self, shown: Sequence[GpuPanel]) -> None:
        """Where the rows do not all fit, as many whole rows as fit share the viewport's
        height (and scrolling shows the next ones as tall): rows at their least height
        left a part of the next row showing and the graphs smaller than they could be."""
        cols = max(1, self._columns)
        rows = math.ceil(len(shown) / cols)
        least = max((p.minimumSizeHint().height() for p in shown), default=0)
        room = self.viewport().height() - 2 * MARGIN
        fit = max(1, (room + SPACING) // max(1, least + SPACING))
        height = 0 if fit >= rows else max(least, (room - SPACING * (fit - 1)) // fit)
        for r in range(self._layout.rowCount()):
            if self._layout.rowMinimumHeight(r) != (height if r < rows else 0):
                self._layout.setRowMinimumHeight(r, height if r < rows else 0)
