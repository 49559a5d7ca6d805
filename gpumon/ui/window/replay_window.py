"""The window on a recording: the ordinary window fed by a RecordingSource, with a time bar.

Every panel, the table, the processes, activity and health come from the recorded snapshots
as they came from NVML; the recording's marks (playground actions, lesson steps, health
events) are markers on the graphs; the title says "recording of HOST, DATE", so nobody takes
it for live. Pause and Space play and pause the recording rather than the sampling; the
sampling only looks at the replay's clock, four times a second, so a jump shows at once.
"""

from __future__ import annotations

from PySide6.QtCore import Slot

from gpumon.recording.lines import MarkKind
from gpumon.recording.reader import Recording
from gpumon.recording.source import RecordingSource
from gpumon.telemetry.model.types import Snapshot
from gpumon.ui.window.main_window import DEFAULT_WINDOW_S, MainWindow
from gpumon.ui.window.replay_bar import ReplayBar
from gpumon.ui.window.settings import Settings

REPLAY_INTERVAL_S = 0.25  # how often the window looks at the replay's clock
MARK_COLORS = {MarkKind.ACTION: "#6a1b9a", MarkKind.LESSON: "#00695c",
               MarkKind.HEALTH: "#c62828"}


class ReplayWindow(MainWindow):
    """The main window over one recording."""

    def __init__(self, recording: Recording, *, at: float | None = None,
                 settings: Settings | None = None, play: bool = True) -> None:
        self.recording = recording
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
        self.time_bar.set_playing(play)
        self.setWindowTitle("")

    def setWindowTitle(self, title: str) -> None:  # noqa: N802 (Qt name)
        """Always the recording's name: never the title of a live window."""
        super().setWindowTitle(f"gpumon — {self.replay.title()}")

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
        if snap is self.latest_snapshot:  # the clock stands: nothing new
            self.status_text.arrived()
            return
        if snap.gpus and self.gpu_grid.set_gpus(snap.gpus, self.window_s):
            self.history.clear()
            self.gpuPanelsChanged.emit()
        latest = self.history.latest_time()
        first = snap.backfill[0] if snap.backfill else snap
        if latest is not None and first.timestamp_s <= latest:
            self.history.clear()
        for earlier in snap.backfill:
            self.history.append(earlier)
        super()._on_snapshot(snap)

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

    def closeEvent(self, event: object) -> None:  # noqa: N802 (Qt name)
        super().closeEvent(event)  # type: ignore[arg-type]
        self.recording.close()

