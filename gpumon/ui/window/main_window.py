"""The main window: the one place that knows every part and wires them together.

Each part gets what it needs when it is made and learns the rest by signals: the monitor's
views get snapshots and the History; the playground and lesson pages get the shared kernel
link (``MainWindow.kernel_link``), the GPU grid, and snapshots; menus get the controllers their
actions call. No part imports this module. ``launch.run()`` starts the window.

- ``MainWindow.add_page(widget, title)`` / ``add_lazy_page(title, build)``: a tab beside
  "Monitor"; a lazy one is built when first shown or asked for (``page(title)``), so start-up
  pays neither for building the Playground and Lesson pages nor for importing their modules.
- ``MainWindow.sampling.add_extra_provider(fn)``: ``fn(snapshot) -> {gpu: {key: value}}``
  runs in the sampling thread after each tick; the values land in ``Snapshot.extra``, the
  History, and whatever memory series plot that key.
- ``snapshotReceived``: each Snapshot, after the views and History have it;
  ``gpuPanelsChanged``: the GPU panels were rebuilt.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QModelIndex, Qt, QTimer, Signal, Slot
from PySide6.QtGui import QCloseEvent, QKeySequence, QShortcut, QShowEvent
from PySide6.QtWidgets import QDockWidget, QMainWindow, QVBoxLayout, QWidget

from gpumon.i18n import N_, tr
from gpumon.interval import SAMPLING
from gpumon.telemetry.choice import DEMO_HISTORY_S, source_factory
from gpumon.telemetry.history.store import WINDOW_CHOICES_S, History, capacity_for
from gpumon.telemetry.model.facts import process_list_note
from gpumon.telemetry.model.readouts import readout_parts
from gpumon.telemetry.model.types import Snapshot, Source, SourceState, SourceStatus
from gpumon.text.smi_text import no_gpus_hint
from gpumon.ui.monitor.grid import GpuGrid
from gpumon.ui.monitor.header import HeaderBar, StatusBanner
from gpumon.ui.monitor.page import MonitorPage
from gpumon.ui.monitor.process.actions import ProcessActions
from gpumon.ui.monitor.process.pane import ProcessPane
from gpumon.ui.monitor.smi_table import SmiTable
from gpumon.ui.monitor.topology_view import TopologyWindows
from gpumon.ui.widgets.dock_title import DockTitle
from gpumon.ui.widgets.theme import Theme
from gpumon.ui.window import health_events
from gpumon.ui.window.controls import Controls
from gpumon.ui.window.file_actions import FileActions
from gpumon.ui.window.kernel_warmup import KernelWarmup
from gpumon.ui.window.lazy_tabs import LazyTabs
from gpumon.ui.window.menus import Menus
from gpumon.ui.window.presentation import Presentation
from gpumon.ui.window.settings import Settings
from gpumon.ui.window.status_bar import StatusBarShown
from gpumon.ui.window.status_text import StatusText
from gpumon.ui.window.workers import SamplingThread

if TYPE_CHECKING:  # imported when first used: the playground's engine; the graphs' modules
    from gpumon.playground.client.ssh_kernel import Remote
    from gpumon.ui.lesson.page import LessonPage
    from gpumon.ui.monitor.panel import GpuPanel
    from gpumon.ui.monitor.process.view import ProcessView
    from gpumon.ui.playground.kernel_link import KernelLink
    from gpumon.ui.playground.page import PlaygroundPage
    from gpumon.ui.window.about import TorchFacts

log = logging.getLogger(__name__)

# How long closing waits for the sampling thread: a driver call that hangs longer is left
# behind (launch.run() then ends the process without destroying the running QThread).
QUIT_WAIT_S = 1.5
DEFAULT_WINDOW_S = 300


def simulated_factory(n_gpus: int = 4, seed: int = 0, gpm: bool = True) -> Callable[[], Source]:
    return source_factory(n_gpus, seed, gpm, history_s=DEMO_HISTORY_S)


class MainWindow(QMainWindow):
    """Header, banner, toolbar, and a tab widget whose first page is the monitor."""

    snapshotReceived = Signal(object)  # Snapshot, after views and History are updated
    gpuPanelsChanged = Signal()  # the GPU panels were rebuilt (new source or GPU set)
    kernel_remote: Remote | None = None  # the machine the kernel runs on (RemoteWindow)

    def __init__(
        self,
        source_factory: Callable[[], Source],
        interval_s: float = SAMPLING.default,
        *,
        window_s: int = DEFAULT_WINDOW_S,
        demo_factory: Callable[[], Source] | None = None,
        settings: Settings | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("mainWindow")
        # Tooltips (a health mark's reasons) also while another window is active: Qt shows
        # them only in the active window unless told so.
        self.setAttribute(Qt.WidgetAttribute.WA_AlwaysShowToolTips)
        self.interval_s = SAMPLING.clamp(interval_s)
        self.window_s = int(window_s)
        self._demo_factory = demo_factory or simulated_factory(4)
        self.history = History(self._history_capacity())
        self.snapshot_count = 0
        self.latest_snapshot: Snapshot | None = None
        self.source_status = SourceStatus(SourceState.CLOSED, tr("Starting…"))
        self._paused = False

        self.sampling = SamplingThread(source_factory, self.interval_s, self)
        self._kernel_link: KernelLink | None = None  # made on first use (``kernel_link``)
        self.controls = Controls(self.interval_s, self.window_s, self)
        self.addToolBar(self.controls)
        self.header = HeaderBar()
        self.banner = StatusBanner()
        self.gpu_grid = GpuGrid()
        self.smi_table = SmiTable()
        self.process_pane = ProcessPane()
        self.process_table = self.process_pane.table
        self.process_actions = ProcessActions(self.process_table)
        self.process_table.activated.connect(self.open_process_view)  # Enter, double-click

        monitor = self.monitor_page = MonitorPage(self.gpu_grid, self.smi_table,
                                                  self.process_pane)
        self.tabs = LazyTabs()
        self.tabs.setObjectName("pages")
        self.tabs.setDocumentMode(True)
        self.tabs.add_keyed(monitor, N_("Monitor"))
        self.add_lazy_page(N_("Playground"), self._make_playground)
        self.header.wrap_into(self.tabs)  # the driver stack's second line, at 300 %
        central = QWidget()
        layout = QVBoxLayout(central)
        layout.setContentsMargins(4, 2, 4, 4)
        layout.setSpacing(4)
        layout.addWidget(self.header)
        layout.addWidget(self.banner)
        layout.addWidget(self.tabs, 1)
        self.setCentralWidget(central)
        StatusBarShown(self.statusBar())  # no empty line under the page

        self.status_text = StatusText(self, self.header, self.gpu_grid, self.setWindowTitle,
                                      self)
        self.sampling.snapshot.connect(self._on_snapshot)
        self.sampling.status.connect(self._on_status)
        self.sampling.errored.connect(self._on_errored)
        self.controls.pauseToggled.connect(self.set_paused)
        self.controls.intervalChanged.connect(self.set_interval)
        self.controls.windowChanged.connect(self.set_window)
        self.banner.simulateRequested.connect(self.show_simulated)
        self.gpu_grid.hovered.connect(self._on_hover)
        self.status_text.update_title(None)
        self.resize(1400, 900)
        # Remembered settings (in memory unless given), zoom/theme, file actions, menus.
        self.settings = settings or Settings.memory()
        self._restore_sampling()
        hidden = self.settings.hidden_process_columns
        if hidden is not None:
            self.process_table.set_hidden_columns(hidden)
        self.process_table.hiddenColumnsChanged.connect(
            lambda titles: setattr(self.settings, "hidden_process_columns", titles))
        self.presentation = Presentation(self, self.settings, pages=self.tabs.pages,
                                         short=self.monitor_page.grid_short)
        self.presentation.applied.connect(self._style_frame)
        self._style_frame(self.presentation.theme)
        self.gpuPanelsChanged.connect(self.presentation.restyle_plots)
        self.files = FileActions(self, self.gpu_grid, self.history, lambda: self.window_s)
        self.snapshotReceived.connect(self.files.on_snapshot)
        self.gpuPanelsChanged.connect(self.files.add_context_menus)
        self.topology = TopologyWindows(self, lambda: self.latest_snapshot)
        self.snapshotReceived.connect(self.topology.on_snapshot)
        self.menus = Menus(self, self.settings, presentation=self.presentation,
                           files=self.files, grid=self.gpu_grid, controls=self.controls,
                           toggle_pause=lambda: self.set_paused(not self._paused),
                           latest_snapshot=lambda: self.latest_snapshot, history=self.history,
                           torch_facts=self._torch_facts, topology=self.topology)
        self.gpuPanelsChanged.connect(self.menus.rebuild_gpu_menu)
        self.gpuPanelsChanged.connect(self.monitor_page.refit)
        # GPU health: the panels' marks, new XID / ECC errors in the status bar and a log.
        self.event_log, self.event_dock, self.health = health_events.install(
            self, self.gpu_grid, self.add_dock, self.controls.add_right)
        self.menus.add_view_action(self.event_dock.toggleViewAction())
        self.snapshotReceived.connect(self.health.on_snapshot)
        self.health.happened.connect(self.files.add_health_mark)
        self.add_lazy_page(N_("Lesson"), self._make_lesson)
        # The kernel starts when a kernel tab is wanted (kernel_warmup.py).
        self.warmup = KernelWarmup(self.tabs, self.settings, lambda: self.kernel_link.load(), self)
        for number, title in enumerate(("Monitor", "Playground", "Lesson"), start=1):
            key = QShortcut(QKeySequence(f"Ctrl+{number}"), self)
            key.activated.connect(lambda t=title: self.show_tab(t))

    def show_tab(self, title: str) -> None:
        """Ctrl+1/2/3: show tab ``title``; on the Playground the code line takes the focus, on
        the Lesson its Run button (so the next Space runs the step rather than pausing)."""
        focus = {"Playground": lambda: self.playground.code_bar.edit.setFocus(),
                 "Lesson": lambda: self.lesson.take_focus()}.get(title)
        self.tabs.show_key(title, focus)

    # -- extension points ----------------------------------------------------------------
    def add_page(self, widget: QWidget, title: str) -> int:
        """Add a tab beside "Monitor", labelled ``tr(title)``; returns its index."""
        return self.tabs.add_keyed(widget, title)

    def add_dock(self, widget: QWidget, title: str,
                 area: Qt.DockWidgetArea = Qt.DockWidgetArea.RightDockWidgetArea
                 ) -> QDockWidget:
        """Put ``widget`` in a dock (right side by default) and return the dock."""
        dock = QDockWidget(title, self)
        dock.setObjectName(f"dock_{title}")
        dock.setTitleBarWidget(DockTitle(dock))  # a title that zooms (dock_title.py)
        dock.setWidget(widget)
        self.addDockWidget(area, dock)
        return dock

    def add_lazy_page(self, title: str, build: Callable[[], QWidget]) -> int:
        """A tab beside "Monitor" whose page ``build()`` makes when it is first shown or
        asked for with ``page(title)``; until then the tab holds an empty placeholder."""
        return self.tabs.add_lazy_page(title, build)

    def page(self, title: str) -> QWidget | None:
        """The page of tab ``title``, built now if it was lazy and not built yet."""
        return self.tabs.page(title)

    @property
    def playground(self) -> PlaygroundPage:
        """The Playground page (built on first use; it borrows gpu_grid while shown)."""
        page = self.page("Playground")
        assert page is not None
        return page  # type: ignore[return-value]  # _make_playground's widget

    @property
    def lesson(self) -> LessonPage:
        """The Lesson page (built on first use)."""
        page = self.page("Lesson")
        assert page is not None
        return page  # type: ignore[return-value]  # _make_lesson's widget

    @property
    def kernel_link(self) -> KernelLink:
        """The one KernelLink, shared by the playground and the lesson; made when first
        asked for (its thread starts later still, on the first action)."""
        if self._kernel_link is None:
            from gpumon.ui.playground.kernel_link import KernelLink

            self._kernel_link = KernelLink(self, remote=self.kernel_remote)
        return self._kernel_link

    def _torch_facts(self) -> TorchFacts:
        """What the kernel said of its torch (nothing before the playground was used)."""
        link = self._kernel_link
        return (None, ()) if link is None else (link.load_status, link.device_options)

    def gpu_panel(self, index: int) -> GpuPanel | None:
        """The panel of NVML GPU ``index``, or None when there is no such GPU (yet)."""
        return self.gpu_grid.panel(index)

    # -- state ---------------------------------------------------------------------------
    @property
    def paused(self) -> bool:
        return self._paused

    @property
    def stale(self) -> bool:
        return self.status_text.stale

    def start(self) -> None:
        """Start sampling (on first show, once the window has painted its first frame)."""
        self.status_text.start(opening=not self.sampling.running and self.snapshot_count == 0)
        self.sampling.start(first_frame_of=self)

    @Slot(bool)
    def set_paused(self, paused: bool) -> None:
        self._paused = paused
        if self.controls.pause_button.isChecked() != paused:
            self.controls.pause_button.setChecked(paused)
        self.sampling.set_paused(paused)
        self.status_text.restart_clock(fresh=True)
        self.status_text.refresh()

    @Slot(float)
    def set_interval(self, interval_s: float) -> None:
        self.interval_s = SAMPLING.clamp(interval_s)
        self.controls.interval_spin.setValue(self.interval_s)  # no signal when unchanged
        self.history.resize(self._history_capacity())
        self.sampling.set_interval(self.interval_s)
        self.status_text.restart_clock()

    @Slot(int)
    def set_window(self, window_s: int) -> None:
        self.window_s = int(window_s)
        idx = self.controls.window_combo.findData(self.window_s)
        if idx >= 0 and idx != self.controls.window_combo.currentIndex():
            self.controls.window_combo.setCurrentIndex(idx)
        self.gpu_grid.set_window(self.window_s)
        if self.latest_snapshot is not None:
            self.gpu_grid.update_view(self.latest_snapshot, self.history, self.window_s)

    def switch_source(self, factory: Callable[[], Source]) -> None:
        """Close the current source and use the one ``factory()`` makes (in the worker)."""
        self.history.clear()
        self.sampling.set_source(factory)

    @Slot()
    def show_simulated(self) -> None:
        """The banner's button: 4 simulated GPUs, for a demo without hardware."""
        self.switch_source(self._demo_factory)

    # -- Qt events -------------------------------------------------------------------------
    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.start()
        self.warmup.window_shown()

    def closeEvent(self, event: QCloseEvent) -> None:
        self.hide()  # at once, even if a driver call keeps the sampling thread busy
        self.status_text.stop()
        # One budget for both: the kernel first (asked to exit, killed after 1 s if a long
        # torch call keeps it busy), then the sampling thread gets what is left of
        # QUIT_WAIT_S. Waiting for each in turn could add up past the 3 s a quit may take
        # when a driver call hangs while torch is busy.
        started = time.monotonic()
        if self._kernel_link is not None:
            self._kernel_link.stop()
        self.sampling.stop(max(0.1, QUIT_WAIT_S - (time.monotonic() - started)))
        super().closeEvent(event)

    # -- lazy pages ------------------------------------------------------------------------
    def _make_playground(self) -> QWidget:
        """The Playground page: the shared kernel link, the GPU grid it borrows while shown, and
        its link to the graphs wired to the sampler and the panels."""
        from gpumon.ui.playground.page import PlaygroundPage

        panel = PlaygroundPage(self.kernel_link, self.gpu_grid)
        self.sampling.add_extra_provider(panel.link.provider)
        self.gpuPanelsChanged.connect(panel.link.reapply)
        panel.link.marked.connect(self.files.add_action_mark)
        self.gpuPanelsChanged.connect(panel.refresh_devices)
        QTimer.singleShot(0, self.presentation, self.presentation.restyle_plots)  # CPU graph
        self.tabs.currentChanged.connect(
            lambda i: panel.set_shown(self.tabs.widget(i) is panel))
        return panel

    def _make_lesson(self) -> QWidget:
        """The Lesson page: the shared kernel link, and the snapshots step 1 shows."""
        from gpumon.ui.lesson.page import LessonPage

        page = LessonPage(self.kernel_link)
        # The lesson's actions reach the graphs through the Playground's link (the kernel link's
        # outcomeReady), exactly as the Playground's own actions: it must exist to mark them.
        self.page("Playground")
        if self.latest_snapshot is not None:
            page.on_snapshot(self.latest_snapshot)
        self.snapshotReceived.connect(page.on_snapshot)
        page.stepFinished.connect(self.files.add_lesson_mark)  # a mark while recording
        return page

    # -- slots -----------------------------------------------------------------------------
    @Slot(object)
    def _on_snapshot(self, snap: Snapshot) -> None:
        if self._paused:  # taken before the pause reached the sampler: the view stays put
            return
        self.status_text.arrived()  # the first reading: no more waiting
        self.snapshot_count += 1
        self.latest_snapshot = snap
        if self.gpu_grid.set_gpus(snap.gpus, self.window_s):
            self.history.clear()
            self.gpuPanelsChanged.emit()
            self.gpu_grid.set_empty_text(no_gpus_hint(snap.status) if snap.status.usable
                                         else "")
        for earlier in snap.backfill:  # what the source read before this (oldest first)
            self.history.append(earlier)
        self.history.append(snap)
        self.source_status = snap.status
        self.banner.show_status(snap.status)
        self.header.show_machine(snap.machine, snap.status, snap.simulated)
        self.gpu_grid.update_view(snap, self.history, self.window_s)
        self.smi_table.show_snapshot(snap)
        self.process_table.show_processes(snap.processes, snap.timestamp_s)
        # Signals only for this machine's real processes (not simulated, not Prometheus).
        self.process_actions.set_enabled(snap.machine.source_name == "NVML"
                                          and not snap.simulated)
        self.process_table.set_note(process_list_note(snap))
        self.status_text.shown(snap)
        self.snapshotReceived.emit(snap)

    @Slot(object)
    def _on_status(self, status: SourceStatus) -> None:
        self.source_status = status
        self.banner.show_status(status)
        self.status_text.refresh()
        self.status_text.update_title(self.latest_snapshot)

    @Slot(object)
    def _on_errored(self, exc: BaseException) -> None:
        log.error("sampling error: %r", exc)
        self.header.set_status_text(
            tr("Sampling error: {error}", error=f"{type(exc).__name__}: {exc}"), warn=True)

    @Slot(QModelIndex)
    def open_process_view(self, index: QModelIndex) -> ProcessView:
        """The row's process in a window of its own, fed by every snapshot from now on."""
        table = self.process_table
        p = table.process_model.process_at(table.proxy.mapToSource(index).row())
        snap = self.latest_snapshot
        real = snap is not None and snap.machine.source_name == "NVML" and not snap.simulated
        from gpumon.ui.monitor.process.view import ProcessView

        view = ProcessView(p, self.window_s, self, simulated=bool(snap and snap.simulated),
                           local=real, history=self.history)
        self.presentation.restyle_plots()  # its plots take the theme and zoom (a child of ours)
        view.addActions(self.menus.zoom_actions())  # Ctrl+=, Ctrl+-, Ctrl+0 there too
        self.snapshotReceived.connect(view.add)
        self.controls.windowChanged.connect(view.set_window)
        if snap is not None:
            view.add(snap)
        view.show()
        return view

    def _on_hover(self, gpu: int, t: float) -> None:
        """The pointer is over GPU ``gpu``'s graphs at time ``t``: its values beside it."""
        snap = self.latest_snapshot
        t_now = snap.timestamp_s if snap is not None else t
        panel = self.gpu_grid.panel(gpu)
        if panel is not None:
            panel.show_readout(*readout_parts(gpu, t_now, self.history.value_at(gpu, t)))

    # -- helpers ---------------------------------------------------------------------------
    @Slot(object)
    def _style_frame(self, theme: Theme) -> None:
        """The theme's colours on the window's own widgets (the banner)."""
        self.banner.setStyleSheet(
            "#statusBanner { background: #fff3e0; border: 1px solid #ef6c00;"
            f" border-radius: 4px; }} #statusBanner QLabel {{ color: {theme.banner_text}; }}")

    def _restore_sampling(self) -> None:
        """The remembered interval and time window (an --interval given wins: launch
        stores it in the settings before the window is made)."""
        s = self.settings
        if s.interval_s is not None:
            self.set_interval(s.interval_s)
        if s.window_s is not None and self.controls.window_combo.findData(s.window_s) >= 0:
            self.set_window(s.window_s)

    def _history_capacity(self) -> int:
        """Room for the longest window at this interval: widening the window shows data
        already kept instead of starting empty (bounded by the history's maximum)."""
        return capacity_for(max(WINDOW_CHOICES_S), self.interval_s)
