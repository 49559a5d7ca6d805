"""File ▸ Add machine…: one more machine over SSH, added to a running window and remembered.

The entry asks for ``[user@]host[:port]`` (an ssh_config alias is fine), checks it as the
command line does (``ssh/target.py``: nothing that could become an option or a shell word),
says in the dialog what is wrong and asks again. In the overview of machines over SSH the
machine joins the others at the next tick; in any other window an overview of the machines
added so far opens beside it. The list is remembered (Settings.ssh_machines).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QInputDialog,
    QMainWindow,
    QMenu,
    QWidget,
)

from gpumon.i18n import tr
from gpumon.ssh.target import Target, TargetError, parse_target
from gpumon.ui.widgets.checked_input import CheckedInput
from gpumon.ui.window.beside import show_beside
from gpumon.ui.window.settings import Settings

if TYPE_CHECKING:  # a window over SSH imports it; others need not (launch.py)
    from gpumon.remote.fleet import RemoteFleet


class MachineDialog(CheckedInput[Target]):
    """Asks for a machine; OK with a name that is refused says why and stays open."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent, "addMachineDialog", tr("Add machine"),
                         tr("A machine to watch over SSH, as you give it to ssh: host, "
                            "user@host or host:port (a Host of your ssh_config is fine):"),
                         lambda text: parse_target(text.strip()))  # TargetError: a ValueError

    @property
    def target(self) -> Target | None:
        """The checked machine, once accepted."""
        return self.value


class MachineAdder(QObject):
    """The menu entry; ``fleet`` is the window's own RemoteFleet (None: another window)."""

    def __init__(self, window: QMainWindow, menu: QMenu, before: QAction | None,
                 settings: Settings, fleet: RemoteFleet | None,
                 open_overview: Callable[[list[Target]], QMainWindow]) -> None:
        super().__init__(window)
        self._window, self._settings, self._fleet = window, settings, fleet
        self._open_overview = open_overview
        self.windows: list[QMainWindow] = []
        self.action = QAction(tr("Add &machine…"), window)
        self.action.setObjectName("actionAddMachine")
        self.action.setToolTip(tr("Watch one more machine's GPUs over SSH"))
        self.action.triggered.connect(lambda *_: self.ask())
        if before is None:
            menu.addAction(self.action)
        else:
            menu.insertAction(before, self.action)
        self.dialog: MachineDialog | None = None  # the open dialog (tests answer it)

    def ask(self) -> None:
        self.dialog = MachineDialog(self._window)
        try:
            if self.dialog.exec() == QInputDialog.DialogCode.Accepted and self.dialog.target:
                self.add(self.dialog.target)
        finally:
            self.dialog.deleteLater()
            self.dialog = None

    def add(self, target: Target) -> None:
        """Watch ``target``: in this window's overview, or in one opened beside it."""
        names = self._settings.ssh_machines
        if target.name not in names:
            self._settings.ssh_machines = [*names, target.name]
        if self._fleet is not None:
            self._fleet.add(target)
            return
        targets = []
        for name in self._settings.ssh_machines:
            try:
                targets.append(parse_target(name))
            except TargetError:
                continue  # a remembered name this gpumon refuses: never handed to ssh
        show_beside(self._open_overview(targets), self.windows)


def install(window: QMainWindow, menu: QMenu, before: QAction | None, settings: Settings,
            fleet: RemoteFleet | None,
            open_overview: Callable[[list[Target]], QMainWindow]) -> MachineAdder:
    """Put File ▸ Add machine… in ``menu`` (before ``before``)."""
    return MachineAdder(window, menu, before, settings, fleet, open_overview)
