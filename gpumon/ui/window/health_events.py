"""The window's side of GPU health: each snapshot goes through one ``HealthWatch``; each GPU
panel's health line shows its clock words and health mark, and a new XID or a new
uncorrected ECC error is said in the status bar and added to the event log with its time,
its meaning and a hint."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, QSize, Qt, Slot
from PySide6.QtWidgets import QDockWidget, QListWidget, QWidget

from gpumon.i18n import tr
from gpumon.telemetry.model.health import HealthEvent, HealthWatch, held_down
from gpumon.telemetry.model.types import Snapshot
from gpumon.ui.monitor.grid import GpuGrid

MAX_EVENTS = 500  # lines kept in the log; the oldest go first


class EventLog(QListWidget):
    """The window's event log: one line per health event, newest last."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("eventLog")
        self.setAccessibleName(tr("Event log"))
        self.setWordWrap(True)

    def sizeHint(self) -> QSize:  # noqa: N802 (Qt name)
        """Four lines tall: a dock that takes no more than it needs from the graphs."""
        return QSize(super().sizeHint().width(), self.fontMetrics().lineSpacing() * 4 + 8)

    def add(self, text: str) -> None:
        self.addItem(text)
        while self.count() > MAX_EVENTS:
            self.takeItem(0)
        self.scrollToBottom()

    def lines(self) -> list[str]:
        return [self.item(i).text() for i in range(self.count())]


class HealthEvents(QObject):
    """Connect ``on_snapshot`` to the window's snapshots (after the grid has shown them)."""

    def __init__(self, grid: GpuGrid, log: EventLog, show_message: Callable[[str], None],
                 reveal_log: Callable[[], None], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._grid = grid
        self._log = log
        self._show_message = show_message
        self._reveal_log = reveal_log
        self.watch = HealthWatch()
        self._source: tuple[object, ...] | None = None

    @Slot(object)
    def on_snapshot(self, snap: Snapshot) -> None:
        # other GPUs (another machine, source, or a cluster's machine in focus): the counts
        # and first readings start again (a GPU is its index only within one machine)
        source = (snap.machine.host_name, snap.simulated, *((g.host, g.uuid) for g in snap.gpus))
        if source != self._source:
            self._source = source
            self.watch = HealthWatch()
        events: list[HealthEvent] = []
        for s in snap.samples:
            events += self.watch.update(s)
            panel = self._grid.panel(s.index)
            if panel is not None:
                if s.lost:
                    panel.health.show_health("", None)
                else:
                    panel.health.show_health(held_down(s.clocks_event_reasons),
                                             self.watch.health(s))
        for event in events:
            self._log.add(event.text)
        if events:
            self._show_message(events[-1].text)
            self._reveal_log()


def install(grid: GpuGrid, add_dock: Callable[[QWidget, str, Qt.DockWidgetArea], QDockWidget],
            show_message: Callable[[str], None], parent: QObject
            ) -> tuple[EventLog, QDockWidget, HealthEvents]:
    """The window's health watch: the panels' marks, and new XID / ECC errors in the status
    bar and the event log (a dock at the bottom, hidden until the first event comes).
    Connect the returned HealthEvents' ``on_snapshot`` to the window's snapshots."""
    log = EventLog()
    dock = add_dock(log, tr("Event log"), Qt.DockWidgetArea.BottomDockWidgetArea)
    dock.hide()
    return log, dock, HealthEvents(grid, log, show_message, dock.show, parent)
