"""The Monitor tab: the GPU grid over the nvidia-smi table over the process list, in a
splitter whose parts are sized by what each needs rather than by fixed shares.

Fixed shares (560 : 130 : 170, scaled to the height) left a 1400×900 window at 300 % one GPU
panel whose graphs were ~40 px tall, one table row and half a process row. ``fit()`` first
gives each part what it cannot do without: the grid its first row of panels, the table the
rows of those GPUs (whole, under its header), the process list its filter and one row; then
the grid graphs of a good height (``panel.PLOT_GOOD_LINES``) in that row, the table its
other rows (up to ``TABLE_SHARE`` of the height), then the grid every row of
panels when they fit (it may take more columns for that, ``grid.columns_for``); what is left
over goes ``GRID_SHARE`` to the grid and the rest to the process list. Where even the first
needs do not fit, the process list gives way first, then the grid down to its first
graphs three lines tall (``GpuGrid.first_graphs_height``), then the table to its header,
then the grid (and the window takes back a zoom step that leaves the grid short:
``grid_short``; at 100 % there is none). It runs when the page is
shown or resized, after a zoom step, and when the GPUs or the table's rows change; once
the user drags a handle, only a zoom step or a new set of GPUs fits it again.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QResizeEvent, QShowEvent
from PySide6.QtWidgets import QSplitter, QWidget

from gpumon.ui.monitor.grid import GpuGrid
from gpumon.ui.monitor.process.pane import ProcessPane
from gpumon.ui.widgets.refit import Refit
from gpumon.ui.widgets.table_model import FittedTableView

TABLE_SHARE = 0.4  # the table never takes more of the page than this
GRID_SHARE = 0.7  # of the height left over once each part has what it needs


class MonitorPage(QSplitter):
    """``grid`` over ``table`` over ``processes`` (see the module doc)."""

    def __init__(self, grid: GpuGrid, table: FittedTableView, processes: ProcessPane,
                 parent: QWidget | None = None) -> None:
        super().__init__(Qt.Orientation.Vertical, parent)
        self.setObjectName("monitorPage")
        self.grid, self.table, self.processes = grid, table, processes
        table.set_least_rows(0)  # where the graphs lack the room (planned_sizes)
        for part in (grid, table, processes):
            self.addWidget(part)
        self.setChildrenCollapsible(False)
        self.setStretchFactor(0, 1)  # a taller window: the graphs grow first
        self._user_sized = False
        # fitted once the event loop has laid the new fonts, rows or panels out
        self._refit = Refit(self, self.fit)
        self.splitterMoved.connect(self._on_moved)
        grid.installEventFilter(self)  # it comes back from the Playground: fit again
        grid.shownChanged.connect(self.refit)
        model = table.model()
        if model is not None:
            model.modelReset.connect(self._refit.queue)
            model.rowsInserted.connect(self._refit.queue)
            model.rowsRemoved.connect(self._refit.queue)

    def _on_moved(self, *_: object) -> None:
        self._user_sized = True

    def refit(self) -> None:
        """Fit again even after the user sized the parts (a zoom step, new GPUs)."""
        self._user_sized = False
        self._refit.queue()

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if obj is self.grid and event.type() == QEvent.Type.ParentChange:
            self._refit.queue()
        return super().eventFilter(obj, event)

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:  # a zoom step, fitted (Refit) even
            self._user_sized = False  # after the user sized the parts

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.fit()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        if not self._user_sized:
            self.fit()

    def planned_sizes(self) -> list[int] | None:
        """Heights for the grid, the table and the process list; None while the grid is
        lent to the Playground (see the module doc)."""
        if self.count() != 3 or self.widget(0) is not self.grid:
            return None
        avail = self.height() - 2 * self.handleWidth()
        if avail <= 0:
            return None
        width, grid, table = self.width(), self.grid, self.table
        model = table.model()
        rows = model.rowCount() if model is not None else 0
        # first what each part cannot do without: the first row of panels, the table rows of
        # those GPUs, the filter and one process
        need = [grid.needed_height(width, every_row=False),
                table.content_height(min(rows, max(1, grid.first_row_count(width)))),
                self.processes.least_height()]
        spare = avail - sum(need)
        if spare < 0:  # too small for that: the process list gives way first, then the
            need[2] = max(self.processes.minimumSizeHint().height(), need[2] + spare)
            need[0] = max(0, avail - need[1] - need[2])  # grid down to three lines of its
            if need[0] < grid.first_graphs_height():  # graphs, then the table keeps only
                header = table.content_height(0)  # its header (its rows one scroll away)
                need[0], need[1] = need[0] + need[1] - header, header
            return need
        # then graphs of a good height in that first row, then every table row (up to
        # TABLE_SHARE), then every row of panels, then shares
        good = grid.needed_height(width, every_row=False, good=True) - need[0]
        need[0] += max(0, min(good, spare))
        spare = avail - sum(need)
        more = max(0, min(table.content_height(), int(avail * TABLE_SHARE)) - need[1])
        need[1] += min(more, spare)
        spare = avail - sum(need)
        every = grid.needed_height(width, every_row=True)
        if every - need[0] <= spare:
            spare -= every - need[0]
            need[0] = every
        need[0] += int(spare * GRID_SHARE)
        need[2] = avail - need[0] - need[1]
        return need

    def grid_short(self) -> int:
        """How many pixels the grid lacks for its first row of panels at their least height
        (graphs three lines tall) in this page's height; 0 where it has them, and while the
        page is out of sight or its grid lent. A zoom step that leaves it short is taken
        back (``Presentation.too_big``): on a 1067 x 667 screen (1600 x 1000 at 150 %) in
        Chinese, 300 % left the GPU panels their headers and graphs 32 px in sight."""
        sizes = self.planned_sizes() if self.isVisible() else None
        if sizes is None:
            return 0
        return max(0, self.grid.needed_height(self.width(), every_row=False) - sizes[0])

    def fit(self) -> None:
        """Size the three parts (see the module doc)."""
        sizes = self.planned_sizes()
        if sizes is not None and sizes != self.sizes():
            self.setSizes(sizes)
