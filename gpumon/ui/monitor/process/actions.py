"""Interrupt, terminate or kill a process from the process table: its rows' context menu and
the keys I, T and K (nvitop's), each behind a confirmation that names the process, its user
and its GPU memory. A refusal (procs.signals.refusal) is one sentence in a message box.

Offered only while the source is this machine's driver (``set_enabled``): a simulated
process is not real and a Prometheus source's PIDs are another machine's.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QPoint, Qt
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QMenu, QMessageBox

from gpumon.i18n import tr
from gpumon.telemetry.model.types import GpuProcess
from gpumon.telemetry.procs.signals import ACTIONS, Action, refusal, send
from gpumon.ui.monitor.process.table import ProcessTable
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

    def menu_for(self, p: GpuProcess) -> QMenu | None:
        """The row's menu, or None when signals are not offered (simulated, Prometheus)."""
        if not self.enabled:
            return None
        menu = QMenu(self.table)
        for action in ACTIONS:
            item = menu.addAction(f"{tr(action.label)}\t{action.key}")
            item.triggered.connect(lambda _=False, a=action: self.request(p, a))
        return menu

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

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt name)
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
        menu = self.menu_for(p) if p is not None else None
        if menu is not None:
            menu.exec(self.table.viewport().mapToGlobal(pos))

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
