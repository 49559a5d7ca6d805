"""The window's side of GPU health: each snapshot goes through one ``HealthWatch``; each GPU
panel's health line shows its clock words and health mark, and a new XID or a new
uncorrected ECC error goes to the event log with its time, its meaning and a hint.

The log is a dock at the bottom that does not open by itself: a first event opened it over
~40 % of the window and left the graphs ~30 px. Instead the toolbar shows a badge, "▲ 2
events: 15:39:45 GPU 1: XID 48, double-bit ECC error…" (cut with "…", the whole line in its
tooltip; the status bar cut it mid-word and took a line of its own), that opens the log when
clicked, as View ▸ Event log does. Opened, the dock takes
at most a quarter of the window's height (``DockCap``) unless the user drags it taller.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, QSize, Qt, Signal, Slot
from PySide6.QtGui import QMouseEvent
from PySide6.QtWidgets import QDockWidget, QListWidget, QMainWindow, QWidget

from gpumon.i18n import ntr, tr
from gpumon.telemetry.model.health import HealthEvent, HealthWatch, held_down, held_reasons
from gpumon.telemetry.model.types import Snapshot
from gpumon.ui.monitor.grid import GpuGrid
from gpumon.ui.widgets.refit import Refit
from gpumon.ui.widgets.runs_label import RunsLabel, TextRun

MAX_EVENTS = 500  # lines kept in the log; the oldest go first
DOCK_SHARE = 0.25  # the most of the window's height the log takes unless dragged taller
BADGE_COLOR = "#c62828"


class EventLog(QListWidget):
    """The window's event log: one line per health event, newest last."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("eventLog")
        self.setAccessibleName(tr("Event log"))
        self.setWordWrap(True)

    def sizeHint(self) -> QSize:
        """Four lines tall: a dock that takes no more than it needs from the graphs."""
        return QSize(super().sizeHint().width(), self.fontMetrics().lineSpacing() * 4 + 8)

    def add(self, text: str) -> None:
        self.addItem(text)
        while self.count() > MAX_EVENTS:
            self.takeItem(0)
        self.scrollToBottom()

    def lines(self) -> list[str]:
        return [self.item(i).text() for i in range(self.count())]


class EventsBadge(RunsLabel):
    """The toolbar's word on health events: how many, and the last one; a click opens
    the log (``clicked``)."""

    clicked = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("eventsBadge")
        self.setAccessibleName(tr("Health events: click to open the event log"))
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        # empty (nothing painted) until the first event; shown all along, as a toolbar
        # shows its widgets through their actions
        self.setContentsMargins(self.fontMetrics().averageCharWidth(), 0, 0, 0)

    def sizeHint(self) -> QSize:
        """Its count alone: in the toolbar it takes the room left and cuts the rest."""
        return QSize(self.fontMetrics().horizontalAdvance("▲ 99 events:") + 8,
                     super().sizeHint().height())

    def minimumSizeHint(self) -> QSize:
        return self.sizeHint()

    def show_events(self, count: int, last: str) -> None:
        head = ntr("▲ {n} event:", "▲ {n} events:", count)
        self.set_runs([TextRun(head, bold=True, color=BADGE_COLOR), TextRun(" " + last)])
        self.setToolTip(tr("{last}\n\nClick to open the event log.", last=last))

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        if event.button() == Qt.MouseButton.LeftButton and self.rect().contains(
                event.position().toPoint()):
            self.clicked.emit()
        super().mouseReleaseEvent(event)


class DockCap(QObject):
    """Keeps ``dock`` (at the bottom of ``window``) as tall as it asks (four lines), at most
    ``DOCK_SHARE`` of the window's height, when it opens, when the window is resized and
    after a zoom step (back to a smaller one, smaller again), until the user
    drags its edge (the main window gets the mouse on the separator between docks and the
    centre); from then on the user's height stays."""

    def __init__(self, window: QMainWindow, dock: QDockWidget) -> None:
        super().__init__(window)
        self._window, self._dock = window, dock
        self.user_sized = False
        self._pressed_at: int | None = None  # the dock's height when a press began
        self._refit = Refit(dock, self.apply)  # a zoom step: its new size hint
        window.installEventFilter(self)
        dock.visibilityChanged.connect(lambda shown: self._refit.queue() if shown else None)

    def limit(self) -> int:
        return int(self._window.height() * DOCK_SHARE)

    def apply(self) -> None:
        dock = self._dock
        if self.user_sized or not dock.isVisible() or dock.isFloating():
            return
        wanted = min(dock.sizeHint().height(), self.limit())
        if dock.height() != wanted:  # smaller too: back at 100 % from 200 %, it kept the
            # 200 % height (15 px more of an 800 x 500 screen, taken from the graphs)
            self._window.resizeDocks([dock], [wanted], Qt.Orientation.Vertical)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        kind = event.type()
        if obj is self._window:
            if kind == QEvent.Type.MouseButtonPress:
                self._pressed_at = self._dock.height()
            elif kind == QEvent.Type.MouseButtonRelease and self._pressed_at is not None:
                if self._dock.height() != self._pressed_at:
                    self.user_sized = True
                self._pressed_at = None
            elif kind == QEvent.Type.Resize:
                self._refit.queue()
        return super().eventFilter(obj, event)


class HealthEvents(QObject):
    """Connect ``on_snapshot`` to the window's snapshots (after the grid has shown them)."""

    happened = Signal(object)  # each new HealthEvent (a recording keeps it as a mark)

    def __init__(self, grid: GpuGrid, log: EventLog, badge: EventsBadge,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._grid = grid
        self._log = log
        self.badge = badge
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
                    mask = s.clocks_event_reasons
                    panel.health.show_health(held_down(mask), self.watch.health(s),
                                             held_reasons(mask))
        for event in events:
            self._log.add(event.text)
            self.happened.emit(event)
        if events:
            self.badge.show_events(self._log.count(), events[-1].text)


def install(window: QMainWindow, grid: GpuGrid,
            add_dock: Callable[[QWidget, str, Qt.DockWidgetArea], QDockWidget],
            place_badge: Callable[[QWidget], None]
            ) -> tuple[EventLog, QDockWidget, HealthEvents]:
    """The window's health watch: the panels' marks, and new XID / ECC errors in the event
    log (a dock at the bottom, closed until the badge, placed with ``place_badge``, or View ▸
    Event log opens it). Connect the returned HealthEvents' ``on_snapshot`` to the window's
    snapshots."""
    log = EventLog()
    dock = add_dock(log, tr("Event log"), Qt.DockWidgetArea.BottomDockWidgetArea)
    dock.hide()
    DockCap(window, dock)  # a child of the window, which keeps it
    badge = EventsBadge()
    place_badge(badge)
    badge.clicked.connect(lambda: open_log(dock, log))
    return log, dock, HealthEvents(grid, log, badge, window)


def open_log(dock: QDockWidget, log: EventLog) -> None:
    """Show the log with its newest line."""
    dock.show()
    dock.raise_()
    log.scrollToBottom()
