"""The "Playground" page: forms, workspace table and outcome log, beside the GPU graphs.

Every action goes through the kernel link it is given (the window's shared
:class:`KernelLink`), so torch never runs in the GUI thread and actions run in the order
they were asked for. While this page is shown (``set_shown(True)``) it borrows the monitor's
GPU grid (and gives it back where it was when hidden), so a marker for each CUDA action
and torch's memory curves appear next to the form that caused them. torch is imported when
the page is first shown or the first action is queued; if it cannot be, the page says so and
the monitor is unaffected.
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QSize, Qt, QTimer, Slot
from PySide6.QtGui import QKeySequence, QResizeEvent, QShortcut
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QScrollArea,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from gpumon.i18n import tr
from gpumon.playground.client.interrupt import Interrupted
from gpumon.playground.client.kernel_client import KernelExit
from gpumon.playground.data.actions import Action, RunCode
from gpumon.playground.data.device_offer import offered
from gpumon.playground.data.devices import DeviceOption
from gpumon.playground.data.outcome import LoadStatus, Outcome, WorkspacePage
from gpumon.ui.monitor.grid import MARGIN as GRID_MARGIN
from gpumon.ui.playground.code_line import CodeBar
from gpumon.ui.playground.column_fit import (
    GRAPHS_MIN,
    FormsScroll,
    column_least,
    fit_left_column,
    fit_left_heights,
    least_width,
    log_least,
)
from gpumon.ui.playground.cpu_view import CpuMemoryView
from gpumon.ui.playground.forms import ActionForms
from gpumon.ui.playground.kernel_link import ended_outcome, load_lost_text
from gpumon.ui.playground.log import OutcomeLog
from gpumon.ui.playground.monitor_link import MonitorLink
from gpumon.ui.playground.style import tones
from gpumon.ui.playground.workspace_table import WorkspaceTable, WorkspaceView
from gpumon.ui.widgets.next_frame import after_next_frame
from gpumon.ui.widgets.theme import is_dark

if TYPE_CHECKING:
    from gpumon.ui.monitor.grid import GpuGrid
    from gpumon.ui.playground.kernel_link import KernelLink

BUSY_COLORS = {False: "#8a5a00", True: "#ffb74d"}  # amber on a light / a dark palette


class PlaygroundPage(QWidget):
    """The playground page (see the module doc): actions go to ``kernel_link``, markers and
    torch's memory curves to ``grid``'s panels (wire ``link`` to the sampler)."""

    def __init__(self, kernel_link: KernelLink, grid: GpuGrid,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("playgroundPanel")
        self.setAccessibleName(tr("PyTorch playground"))
        self.kernel_link = kernel_link
        self._grid = grid
        self._grid_home: QSplitter | None = None  # where the grid goes back when hidden
        self._mine: deque[tuple[int, str]] = deque()  # (ticket, code) submitted here
        self._torch_devices: list[DeviceOption] = []  # what the kernel's torch offers

        self.status_label = QLabel(tr("PyTorch loads in the playground's own process when the "
                                      "playground is first used."))
        self.status_label.setObjectName("playgroundStatus")
        self.status_label.setAccessibleName(tr("PyTorch status"))
        self.status_label.setWordWrap(True)
        self.busy_bar = QProgressBar()
        self.busy_bar.setObjectName("busyBar")
        self.busy_bar.setRange(0, 0)
        self.busy_bar.setMaximumWidth(90)
        self.busy_bar.setMaximumHeight(12)
        self.busy_bar.setTextVisible(False)
        self.busy_bar.hide()
        self.busy_label = QLabel()
        self.busy_label.setObjectName("busyLabel")
        self.busy_label.setAccessibleName(tr("Running actions"))
        self.code_bar = CodeBar()
        self.forms = ActionForms()
        self.workspace_view = WorkspaceView()
        self.workspace_table: WorkspaceTable = self.workspace_view.table
        self.log = OutcomeLog()
        # torch's counters come from the kernel (sent while code runs), never from this process
        self.link = MonitorLink(grid, lambda: kernel_link.counters, self)

        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        top.addWidget(self.status_label, 1)
        top.addWidget(self.busy_label)
        top.addWidget(self.busy_bar)
        # The forms scroll on their own (up and down) where the column is short, so the
        # workspace and the results below them keep a place on screen (at 300 % the forms
        # alone were taller than the column, and the results list was scrolled away).
        self.forms_scroll = FormsScroll(self.forms)
        self.forms_scroll.needChanged.connect(lambda: self._fit_left_column())
        left = self.left = QSplitter(Qt.Orientation.Vertical)
        left.setObjectName("playgroundLeft")
        left.addWidget(self.forms_scroll)
        left.addWidget(self.workspace_view)
        left.addWidget(self.log)
        left.setChildrenCollapsible(False)
        left.setSizes([150, 130, 400])
        left.setStretchFactor(2, 1)
        self.graphs = QWidget()
        self.graphs.setObjectName("playgroundGraphs")
        graphs_layout = self._graphs_layout = QVBoxLayout(self.graphs)
        graphs_layout.setContentsMargins(0, 0, 0, 0)
        self._graphs_hint = QLabel(tr("The GPU graphs show here while this page is open."))
        self._graphs_hint.setAlignment(Qt.AlignmentFlag.AlignCenter)
        graphs_layout.addWidget(self._graphs_hint)
        # Without GPUs: the kernel process's main memory, live (cpu_view.py).
        self.cpu_view = CpuMemoryView(lambda: kernel_link.local_pid)
        self.cpu_view.hide()
        graphs_layout.addWidget(self.cpu_view)
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.setObjectName("playgroundSplitter")
        # In a scroll area: at 300 % zoom the column's fields no longer fit the screen's
        # height, and the window must not grow past it (nor squash the forms).
        self.left_scroll = left_scroll = QScrollArea()
        left_scroll.setObjectName("playgroundLeftScroll")
        left_scroll.setWidgetResizable(True)
        left_scroll.setFrameShape(QFrame.Shape.NoFrame)
        left_scroll.setWidget(left)
        self.splitter.addWidget(left_scroll)
        self.splitter.addWidget(self.graphs)
        self.splitter.setChildrenCollapsible(False)
        self.splitter.setSizes([520, 880])
        self.splitter.setStretchFactor(1, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.setSpacing(4)
        layout.addLayout(top)
        # The code line across the page, above the scrolled column: at 300 % the column is
        # wider than the window and its Stop button was scrolled out of sight ("S").
        layout.addWidget(self.code_bar)
        layout.addWidget(self.splitter, 1)

        self._want_grid = False  # the page is shown: the grid should be here
        self._stand_in = QWidget()  # in the grid's place on the Monitor while it is here
        self._stand_in.setObjectName("gridStandIn")
        self._sized = False
        self._status_tone = ""  # "", "busy" or "error": the status line's colour
        self._dark: bool | None = None
        self._apply_palette()
        self.forms.actionRequested.connect(self.submit)
        self.forms.codeRequested.connect(self.code_bar.edit.set_code)
        self.code_bar.edit.submitted.connect(lambda text: self.submit(RunCode(text)))
        self.code_bar.stop_button.clicked.connect(self.stop_code)
        stop = QShortcut(QKeySequence(Qt.Key.Key_Escape), self)
        stop.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        stop.activated.connect(self.stop_code)
        self.workspace_table.doubleClicked.connect(lambda i: self._use_name(i.row(), i.column()))
        e = self.kernel_link
        e.loadingStarted.connect(self._on_loading_started)
        e.loadingFinished.connect(self._on_loading_finished)
        e.loadingLost.connect(self._on_loading_lost)
        e.devicesChanged.connect(self._on_devices)
        e.outcomeReady.connect(self._on_outcome)
        e.actionFinished.connect(self._on_action_finished)
        e.workspaceChanged.connect(self._on_workspace)
        e.busyChanged.connect(self._on_busy)
        e.queueLengthChanged.connect(self._show_queue)
        e.kernelEnded.connect(self._on_kernel_ended)
        # What the shared kernel link already did before this page existed (the lesson may have
        # loaded torch, or failed to); the rest comes by the signals above.
        if e.loading:
            self._on_loading_started()
        if e.load_status is not None:
            self._on_loading_finished(e.load_status)
        if e.device_options:
            self._on_devices(e.device_options)
        if e.busy:
            self._on_busy(True)

    # -- public --------------------------------------------------------------------------
    def submit(self, action: Action) -> int:
        """Queue ``action`` in the kernel (torch loads first if needed); its ticket."""
        ticket = self.kernel_link.submit(action)
        if ticket >= 0:
            self._mine.append((ticket, action.code()))
            self._show_queue(self.kernel_link.queue_length)
        return ticket

    def stop_code(self) -> Interrupted:
        """Stop / Esc: interrupt the running code (the kernel restarts if it does not stop)."""
        how = self.kernel_link.interrupt()
        if how == "signalled":
            self.busy_label.setText(tr("stopping… (interrupted; restarted if not stopped in "
                                       "2 s)"))
        elif how == "restarted":
            self.busy_label.setText(tr("stopped: the kernel was still starting, so it was "
                                       "restarted"))
        return how

    def load(self) -> None:
        """Start importing torch now (the page does this when first shown)."""
        self.kernel_link.load()

    @Slot(bool)
    def set_shown(self, shown: bool) -> None:
        """The page became the one shown (borrow the graphs, load torch) or stopped being it
        (give the graphs back); both once the frame that answers the key is painted."""
        self._want_grid = shown
        after_next_frame(self, self._sync_grid)  # after the frame that answers the key
        if shown:
            after_next_frame(self, self.load)
            # Zoomed while another page was shown: once shown, the forms may need more room.
            QTimer.singleShot(0, self, self._fit_left_column)

    def resizeEvent(self, event: QResizeEvent) -> None:
        """Size the splitter when first shown at its real width (two columns of graphs), and
        widen the forms' column later where it is narrower than they need and there is room."""
        super().resizeEvent(event)
        self._fit_left_column()

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:
            # The zoom changed: once the forms have relaid out, fit the column to them. One
            # fit a FontChange, not one a turn (refit.py): built at 300 %, the page gets two,
            # and the second, once the first is laid out, gives the results their third line.
            QTimer.singleShot(0, self, lambda: self._fit_left_column(zoomed=True))
        if event.type() == QEvent.Type.PaletteChange:
            self._apply_palette()

    def _fit_left_column(self, zoomed: bool = False) -> None:
        if not self.isVisible() or self.splitter.width() <= 0:
            return
        first = not self._sized
        self._sized = True
        self.forms_scroll.fit()  # the forms' arrangement for the fields' widths of now
        self.forms_scroll.updateGeometry()
        fit_left_column(self.splitter, self.left_scroll, only_wider=not (first or zoomed),
                        need=self.forms_scroll.need(True), graphs_min=self._graphs_least())
        if first or zoomed or self.log.height() < log_least(self.log):
            fit_left_heights(self.left, self.forms, self.log)  # (the window grown for them)
        self._fit_least_size()

    def _fit_least_size(self) -> None:
        """The least size of the page's lower part, which the window grows for where its
        screen has room and a zoom step is taken back for where it has not: as wide as the
        forms one field a line beside one GPU panel (``least_width``); as tall as the
        forms', the workspace's and the results' least (``column_least``) and the first
        graphs three lines tall (``GpuGrid.first_graphs_height``). In Chinese at 300 % in a
        1400 x 900 window the results had 70 px, 1.4 lines, and the first graphs were cut
        by 16 px, while the screen had 96 px more."""
        splitter = self.splitter
        graphs = self._grid.first_graphs_height() if self._grid.parent() is self.graphs else 0
        least = QSize(least_width(self.left_scroll, self._graphs_least(), splitter.handleWidth()),
                      max(column_least(self.left, self.log), graphs))
        if least != splitter.minimumSize():
            splitter.setMinimumSize(least)

    def _room_for_newest(self) -> None:
        """The newest result whole: where the log is shorter than it, the column's heights
        again (the forms and the workspace give up what they can)."""
        if self.isVisible() and self.log.height() < self.log.room_for(1):
            fit_left_heights(self.left, self.forms, self.log)

    def _graphs_least(self) -> int:
        """The graphs' least width: one GPU panel and the grid's scroll bar (at 300 % a
        panel needs about 760 px, and narrower the grid scrolled sideways)."""
        if self._grid.parent() is not self.graphs:
            return GRAPHS_MIN
        panels = [max(p.minimumWidth(), p.minimumSizeHint().width())
                  for p in self._grid.panels if not p.isHidden()]
        bar = self._grid.verticalScrollBar().sizeHint().width()
        return max(GRAPHS_MIN, max(panels, default=0) + bar + 2 * GRID_MARGIN + 2)

    def _apply_palette(self) -> None:
        """Colours of the busy marks, hints and status for the current (light/dark) palette."""
        dark = is_dark(self.palette())
        if dark == self._dark:
            return
        self._dark = dark
        t = tones(dark)
        busy = BUSY_COLORS[dark]
        self.forms.set_busy_color(busy)
        self.busy_label.setStyleSheet(f"color: {busy};")
        self._graphs_hint.setStyleSheet(f"color: {t.faint};")
        self.forms.error_label.setStyleSheet(f"color: {t.error};")
        self._set_status_tone(self._status_tone)

    def _set_status_tone(self, tone: str) -> None:
        self._status_tone = tone
        dark = bool(self._dark)
        style = {"busy": f"color: {BUSY_COLORS[dark]};",
                 "error": f"color: {tones(dark).error}; font-weight: bold;"}.get(tone, "")
        self.status_label.setStyleSheet(style)

    # -- kernel link signals ---------------------------------------------------------------
    @Slot()
    def _on_loading_started(self) -> None:
        self.status_label.setText(tr("loading PyTorch… (in the playground's own process; the "
                                     "graphs keep updating)"))
        self._set_status_tone("busy")

    @Slot(object)
    def _on_loading_finished(self, status: LoadStatus) -> None:
        if status.ok:
            self.status_label.setText(status.status_text())
            self._set_status_tone("")
            self.forms.set_runnable(True)
            return
        # Not installed: the kernel's one sentence names the extra. Installed but broken: why.
        self.status_label.setText(status.message if status.torch_missing else tr(
            "The playground needs PyTorch, which is not usable here ({why}). The monitor "
            "keeps working; install PyTorch and restart gpumon to use the playground.",
            why=status.message))
        self._set_status_tone("error")
        self.forms.set_runnable(False)

    @Slot(object)
    def _on_loading_lost(self, ended: KernelExit) -> None:
        self.status_label.setText(load_lost_text(ended))
        self._set_status_tone("error")

    @Slot()
    def refresh_devices(self) -> None:
        """Offer torch's devices and the GPUs NVML sees (not simulated ones) in the forms;
        again whenever the GPU panels are rebuilt."""
        real = sum(1 for p in self._grid.panels if not p.info.simulated)
        self.forms.set_devices(offered(self._torch_devices, real))
        self._show_cpu_view()
        QTimer.singleShot(0, self, self._fit_left_column)  # a longer device name: room for it

    def _show_cpu_view(self) -> None:
        """No GPU panels while the graphs are borrowed: the CPU view takes their place."""
        borrowed = self._grid.parent() is self.graphs
        no_gpus = not self._grid.panels
        self.cpu_view.setVisible(borrowed and no_gpus)
        if borrowed:
            self._grid.setVisible(not no_gpus)

    @Slot(object)
    def _on_devices(self, options: list[DeviceOption]) -> None:
        self._torch_devices = list(options)
        self.refresh_devices()
        self.link.set_device_options(options)
        status = self.kernel_link.load_status
        names = ", ".join(o.name for o in options)
        self.status_label.setText(tr("{status} · devices: {names}",
                                     status=status.status_text() if status else "PyTorch",
                                     names=names))
        self.status_label.setToolTip("\n".join(o.label for o in options))

    @Slot(object)
    def _on_outcome(self, outcome: Outcome) -> None:
        self.log.add(outcome)
        QTimer.singleShot(0, self, self._room_for_newest)
        self.link.on_outcome(outcome)
        self.cpu_view.add_outcome(outcome)

    @Slot(int, object)
    def _on_action_finished(self, ticket: int, _outcome: Outcome) -> None:
        while self._mine and self._mine[0][0] <= ticket:
            self._mine.popleft()

    @Slot(object)
    def _on_workspace(self, page: WorkspacePage) -> None:
        self.workspace_view.set_page(page)
        self.forms.set_workspace(page.entries)
        self.cpu_view.set_workspace(page)

    @Slot(object, bool)
    def _on_kernel_ended(self, ended: KernelExit, on_a_card: bool) -> None:
        if not on_a_card:  # else the card of the action it died under says it
            self.log.add(ended_outcome(ended))

    @Slot(bool)
    def _on_busy(self, busy: bool) -> None:
        self.code_bar.stop_button.setEnabled(busy)
        self.busy_bar.setVisible(busy)
        self.forms.set_busy(busy)
        self._show_queue(self.kernel_link.queue_length)

    @Slot(int)
    def _show_queue(self, length: int) -> None:
        if length <= 0:
            self.busy_label.setText(tr("loading…") if self.kernel_link.loading else "")
            return
        running = self._mine[0][1] if self._mine else tr("an action")
        if length > 1:
            self.busy_label.setText(tr("running {code} · {queued} queued", code=running,
                                       queued=length - 1))
        else:
            self.busy_label.setText(tr("running {code}", code=running))

    @Slot(int, int)
    def _use_name(self, row: int, _column: int) -> None:
        """Double-click a workspace row: its name goes into the forms' name fields."""
        if 0 <= row < len(self.workspace_table.entries):
            entry = self.workspace_table.entries[row]
            self.forms.use_name(entry.name, entry.kind)

    # -- internals -----------------------------------------------------------------------
    def _sync_grid(self) -> None:
        """Borrow the grid or give it back, as the page is shown or not (after the frame
        that answered the tab's key: moving 16 graphs was most of it)."""
        if self._want_grid:
            self._borrow_grid()
        else:
            self._return_grid()

    def _borrow_grid(self) -> None:
        grid = self._grid
        monitor = grid.parentWidget()
        if grid.parent() is self.graphs or not isinstance(monitor, QSplitter):
            return
        self._grid_home = monitor
        # A blank stands in the grid's place on the Monitor meanwhile: back there, the page
        # shows at once with its tables, and the grid returns a frame later.
        monitor.replaceWidget(monitor.indexOf(grid), self._stand_in)
        self._graphs_hint.hide()
        self._graphs_layout.insertWidget(0, grid)
        grid.show()
        self._show_cpu_view()
        QTimer.singleShot(0, self, self._fit_left_column)  # one panel's width for the graphs

    def _return_grid(self) -> None:
        grid = self._grid
        monitor = self._grid_home
        if grid.parent() is not self.graphs or monitor is None:
            return
        self.cpu_view.hide()
        index = monitor.indexOf(self._stand_in)
        if index >= 0:
            monitor.replaceWidget(index, grid)
        else:
            monitor.insertWidget(0, grid)
        self._stand_in.setParent(None)
        grid.show()
        self._graphs_hint.show()
