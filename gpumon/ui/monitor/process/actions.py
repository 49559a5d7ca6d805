"""A process table row's context menu: Open (the process's own window, as Enter and a
double-click open it), then interrupt, terminate or kill, also on the keys I, T and K
(nvitop's), each behind a confirmation that names the process, its user and its GPU memory.
A refusal (procs.signals.refusal) is one sentence in a message box.

The signals are offered only while the source is this machine's driver (``set_enabled``): a
simulated process is not real and a Prometheus source's PIDs are another machine's. Open is
always offered.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QPoint, Qt
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QMenu, QMessageBox

from gpumon.i18n import tr
from gpumon.telemetry.model.types import GpuProcess
from gpumon.telemetry.procs.signals import ACTIONS, Action, refusal, send
from gpumon.ui.monitor.process.table import ProcessTable, key_of
from gpumon.units import NA, format_bytes
from gpumon.untrusted import for_terminal

MAX_SHOWN_CHARS = 120  # of a command line in the confirmation


def shown_command(p: GpuProcess) -> str:
    """The process's command line for a dialog: escapes visible, cut to MAX_SHOWN_CHARS."""
    text = for_terminal(p.command or p.name or NA)
    return text if len(text) <= MAX_SHOWN_CHARS else text[:MAX_SHOWN_CHARS - 1] + "…"


class ProcessActions(QObject):
    """The signal actions of one ProcessTable."""

    def __init__(self, table: ProcessTable) -> None:
        super().__init__(table)
        self.table = table
        self.enabled = False
        table.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        table.customContextMenuRequested.connect(self._on_menu)
        table.installEventFilter(self)

    def set_enabled(self, enabled: bool) -> None:
        self.enabled = enabled

    def current(self) -> GpuProcess | None:
        index = self.table.currentIndex()
        if not index.isValid():
            return None
        return self.table.process_model.process_at(self.table.proxy.mapToSource(index).row())

    def menu_for(self, p: GpuProcess) -> QMenu:
        """The row's menu: Open, and the signals where they are offered."""
        menu = QMenu(self.table)
        menu.setObjectName("processMenu")
        open_item = menu.addAction(tr("Open") + "\t" + tr("Enter"))
        open_item.setObjectName("actionOpenProcess")
        open_item.triggered.connect(lambda _=False: self.open(p))
        menu.setDefaultAction(open_item)  # bold, as what a double-click does
        if self.enabled:
            menu.addSeparator()
            for action in ACTIONS:
                item = menu.addAction(f"{tr(action.label)}\t{action.key}")
                item.triggered.connect(lambda _=False, a=action: self.request(p, a))
        return menu

    def open(self, p: GpuProcess) -> None:
        """Open ``p``'s own window, as Enter or a double-click on its row does (the table's
        ``activated``, which the window answers); nothing when its row has gone."""
        model = self.table.process_model
        row = next((r for r, q in enumerate(model.processes) if key_of(q) == key_of(p)), None)
        if row is not None:
            index = self.table.proxy.mapFromSource(model.index(row, 0))
            if index.isValid():  # filtered out: not shown, not opened
                self.table.activated.emit(index)

    def request(self, p: GpuProcess, action: Action) -> bool:
        """Confirm, then signal; True when the signal was sent."""
        why = refusal(p.pid, p.started_s)
        if why is None and not self._confirm(p, action):
            return False
        why = why or send(p.pid, action, p.started_s)
        if why is not None:
            self._tell(why)
            return False
        return True

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if (self.enabled and event.type() == QEvent.Type.KeyPress
                and isinstance(event, QKeyEvent)
                and not event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier):
            action = next((a for a in ACTIONS if event.text().upper() == a.key), None)
            p = self.current()
            if action is not None and p is not None:
                self.request(p, action)
                return True
        return super().eventFilter(watched, event)

    def _on_menu(self, pos: QPoint) -> None:
        index = self.table.indexAt(pos)
        if not index.isValid():
            return
        self.table.setCurrentIndex(index)
        p = self.current()
        if p is not None:
            self.menu_for(p).exec(self.table.viewport().mapToGlobal(pos))

    def _confirm(self, p: GpuProcess, action: Action) -> bool:
        box = QMessageBox(QMessageBox.Icon.Warning, tr(action.verb), tr(
            "{verb} process {pid} ({command}) of user {user}? It holds {memory} of GPU memory "
            "on GPU {gpu}.", verb=tr(action.verb), pid=p.pid, command=shown_command(p),
            user=for_terminal(p.user or NA), memory=format_bytes(p.gpu_mem_bytes),
            gpu=p.gpu_index), QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
            self.table)
        box.setObjectName("signalConfirm")
        box.setTextFormat(Qt.TextFormat.PlainText)  # a command line is not markup
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        box.button(QMessageBox.StandardButton.Yes).setText(tr(action.verb))  # says what it does
        return box.exec() == QMessageBox.StandardButton.Yes

    def _tell(self, sentence: str) -> None:
        box = QMessageBox(QMessageBox.Icon.Information, tr("Process"), sentence,
                          QMessageBox.StandardButton.Ok, self.table)
        box.setObjectName("signalRefusal")
        box.setTextFormat(Qt.TextFormat.PlainText)
        box.exec()
