"""The window on a recording: the ordinary window fed by a RecordingSource, with a time bar.

Every panel, the table, the processes, activity and health come from the recorded snapshots
as they came from NVML; the recording's marks (playground actions, lesson steps, health
events) are markers on the graphs; the title says "recording of HOST, DATE", so nobody takes
it for live. Pause and Space play and pause the recording rather than the sampling; the
sampling only looks at the replay's clock, four times a second, so a jump shows at once.
"""

from __future__ import annotations

import contextlib
import threading

from PySide6.QtCore import Signal, Slot

from gpumon.i18n import tr
from gpumon.recording.compare import RunSeries
from gpumon.recording.lines import MarkKind
from gpumon.recording.reader import Recording
from gpumon.recording.source import RecordingSource
from gpumon.telemetry.model.types import Snapshot
from gpumon.ui.monitor.compare_view import CompareView
from gpumon.ui.monitor.panel import GpuPanel
from gpumon.ui.window.main_window import DEFAULT_WINDOW_S, MainWindow
from gpumon.ui.window.replay_bar import ReplayBar
from gpumon.ui.window.settings import Settings

REPLAY_INTERVAL_S = 0.25  # how often the window looks at the replay's clock
MARK_COLORS = {MarkKind.ACTION: "#6a1b9a", MarkKind.LESSON: "#00695c",
               MarkKind.HEALTH: "#c62828"}


class ReplayWindow(MainWindow):
    """The main window over one recording; ``compare``: a second one drawn dashed under it."""

    compareLoaded = Signal(object)  # RunSeries, from the thread that read the second run

    def __init__(self, recording: Recording, *, at: float | None = None,
                 settings: Settings | None = None, play: bool = True,
                 compare: Recording | None = None) -> None:
        self.recording = recording
        self.compare_run: RunSeries | None = None
        self.compare_views: list[tuple[GpuPanel, CompareView]] = []
        self.replay = RecordingSource(recording, backfill_s=DEFAULT_WINDOW_S)
        if at is not None:
            self.replay.clock.seek(at)
        super().__init__(lambda: self.replay, REPLAY_INTERVAL_S, settings=settings)
        self.set_interval(REPLAY_INTERVAL_S)  # the remembered interval is live sampling's
        self.banner.simulate_button.hide()
        for action in self.controls.actions():  # the time bar's button plays and pauses
            if self.controls.widgetForAction(action) is self.controls.pause_button:
                action.setVisible(False)
        self.controls.interval_spin.setEnabled(False)
        self.time_bar = ReplayBar(self.replay.clock, recording, self)
        self.addToolBarBreak()
        self.addToolBar(self.time_bar)
        self.gpuPanelsChanged.connect(self._draw_marks)
        self.gpuPanelsChanged.connect(self._add_compare_views)
        self.compareLoaded.connect(self._on_compare_loaded)
        self.time_bar.set_playing(play)
        self.setWindowTitle("")
        if compare is not None:
            self.compare_with(compare)

    def setWindowTitle(self, title: str) -> None:
        """Always the recording's name: never the title of a live window."""
        title = self.replay.title()
        run = getattr(self, "compare_run", None)
        if run is not None:
            title = tr("{title}, compared with {name}", title=title, name=run.name)
        super().setWindowTitle(tr("gpumon — {title}", title=title))

    # -- a second run ------------------------------------------------------------------------
    def compare_with(self, other: Recording) -> None:
        """Draw ``other`` dashed under this recording, aligned at the starts; it is read on a
        thread of its own (~1 ms a snapshot of 8 GPUs) and closed once read."""
        start = self.recording.start_s

        def load() -> None:
            try:
                run = RunSeries.load(other, start)
            finally:
                other.close()
            with contextlib.suppress(RuntimeError):  # the window was closed meanwhile
                self.compareLoaded.emit(run)

        threading.Thread(target=load, name="gpumon-compare", daemon=True).start()

    @Slot(object)
    def _on_compare_loaded(self, run: RunSeries) -> None:
        self.compare_run = run
        self.setWindowTitle("")
        self._add_compare_views()

    @Slot()
    def _add_compare_views(self) -> None:
        """A CompareView on each panel (again when the panels were rebuilt)."""
        run = self.compare_run
        if run is None:
            return
        for panel, view in self.compare_views:
            with contextlib.suppress(RuntimeError):  # the panel was deleted, and the view
                view.detach()
                panel.remove_view(view)
                view.deleteLater()
        self.compare_views = []
        for panel in self.gpu_grid.panels:
            view = CompareView(panel.index, run, panel.memory_plot, panel.util_plot,
                               lambda: float(self.window_s))
            panel.add_view(view, above=True)
            self.compare_views.append((panel, view))
        if self.latest_snapshot is not None:
            self.gpu_grid.update_view(self.latest_snapshot, self.history, self.window_s)

    @property
    def paused(self) -> bool:
        return False  # the recording pauses; the sampling of its clock never does

    @Slot(bool)
    def set_paused(self, paused: bool) -> None:
        """Space and Pause: play or pause the recording."""
        self.time_bar.toggle()

    @Slot(int)
    def set_window(self, window_s: int) -> None:
        super().set_window(window_s)
        if hasattr(self, "replay"):
            self.replay.backfill_s = float(window_s)

    @Slot(object)
    def _on_snapshot(self, snap: Snapshot) -> None:
        """The recorded snapshots since the last one go to the History first; after a jump
        back (or forward) the History holds the window before the new moment only."""
        last = self.latest_snapshot
        if last is not None and not snap.backfill and snap.timestamp_s == last.timestamp_s:
            self.status_text.arrived()  # the clock stands: the same snapshot, nothing new
            return
        if snap.gpus and self.gpu_grid.set_gpus(snap.gpus, self.window_s):
            self.history.clear()
            self.gpuPanelsChanged.emit()
        latest = self.history.latest_time()
        first = snap.backfill[0] if snap.backfill else snap
        # The History keeps each GPU's own reading time; a snapshot's time (to the ms in
        # the file) may round either side of it, so the two are not compared.
        first_s = min((s.timestamp_s for s in first.samples), default=first.timestamp_s)
        if latest is not None and first_s <= latest:
            self.history.clear()
        super()._on_snapshot(snap)  # which records the backfill first

    @Slot()
    def _draw_marks(self) -> None:
        """The recording's marks on the panels they name (all panels when they name none)."""
        for mark in self.recording.marks:
            indices = ([mark.gpu_index] if mark.gpu_index is not None
                       else [p.index for p in self.gpu_grid.panels])
            for index in indices:
                panel = self.gpu_grid.panel(index)
                if panel is not None:
                    panel.add_marker(mark.timestamp_s, mark.text, MARK_COLORS[mark.kind])

    def closeEvent(self, event: object) -> None:
        super().closeEvent(event)  # type: ignore[arg-type]
        self.recording.close()

