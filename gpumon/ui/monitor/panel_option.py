"""A checkable option drawn on each GPU panel (memory by process, the activity view): one
``action``, in the View menu and in a graph's context menu on every panel, starting ``on``;
each change is given to ``remember``. A subclass names the graph that offers it and says
what the option does to the panels when it is applied."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QWidget

from gpumon.ui.monitor.grid import GpuGrid
from gpumon.ui.monitor.panel import GpuPanel


class PanelOption(QObject):
    """``attach()`` after the grid's panels are rebuilt: it offers the option on the new ones
    and applies it."""

    def __init__(self, grid: GpuGrid, parent: QWidget, *, text: str, name: str, tip: str,
                 on: bool, remember: Callable[[bool], None]) -> None:
        super().__init__(parent)
        self._grid = grid
        self._remember = remember
        self.action = QAction(text, parent)
        self.action.setObjectName(name)
        self.action.setCheckable(True)
        self.action.setChecked(on)
        self.action.setToolTip(tip)
        self.action.toggled.connect(self.set_enabled)

    @property
    def enabled(self) -> bool:
        return self.action.isChecked()

    def attach(self) -> None:
        """Offer the option in each panel's graph (``graph_of``), and apply it."""
        for panel in self._grid.panels:
            widget = self.graph_of(panel)
            if self.action not in widget.actions():
                widget.addAction(self.action)
                widget.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)
        self._apply()

    def set_enabled(self, on: bool) -> None:
        if self.action.isChecked() != on:
            self.action.setChecked(on)  # toggled calls back here
            return
        self._remember(on)
        self._apply()

    def graph_of(self, panel: GpuPanel) -> QWidget:
        """The graph of ``panel`` whose context menu offers the option."""
        raise NotImplementedError

    def _apply(self) -> None:
        """Bring every panel in line with ``enabled``."""
        raise NotImplementedError
