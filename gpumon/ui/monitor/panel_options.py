"""The checkable options drawn on each GPU panel: memory by process (``MemoryStacks``) and
the activity view (``ActivityViews``). Each has one ``action``, in the View menu and in a
graph's context menu on every panel, starting ``on``; each change is given to ``remember``.
A subclass names the graph that offers it and says what the option does to the panels when
it is applied.

The options are made with the window's menus; what they draw is imported when there are
panels to draw it on (with the graphs' modules and pyqtgraph, after the first frame).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QWidget

from gpumon.i18n import N_, tr
from gpumon.telemetry.history.store import History
from gpumon.telemetry.model.types import Snapshot
from gpumon.ui.monitor.grid import GpuGrid

if TYPE_CHECKING:
    import numpy as np

    from gpumon.ui.monitor.activity_view import ActivityView
    from gpumon.ui.monitor.memory_stack import PanelStack
    from gpumon.ui.monitor.panel import GpuPanel

MEMORY_TEXT = N_("Memory by &process")
ACTIVITY_TEXT = N_("&Activity (SM, tensor, DRAM)")
ACTIVITY_TIP = N_("Under each GPU's graphs: how busy its SMs, tensor cores and memory were "
                  "(GPM, Hopper and newer), beside GPU-Util")


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


class MemoryStacks(PanelOption):
    """The option: ``action`` (checkable; in View and each memory graph's context menu),
    starting ``on``; each change is given to ``remember``. ``attach()`` after the panels are
    rebuilt; ``window_s()`` is the toolbar's time window."""

    def __init__(self, grid: GpuGrid, history: History, window_s: Callable[[], float],
                 parent: QWidget, *, on: bool = False,
                 remember: Callable[[bool], None] = lambda _on: None) -> None:
        super().__init__(grid, parent, text=tr(MEMORY_TEXT), name="actionMemoryByProcess",
                         tip=tr("Draw each GPU's used memory as bands, one per process"),
                         on=on, remember=remember)
        self._history = history
        self._window_s = window_s
        self.stacks: dict[int, PanelStack] = {}  # by GPU index, while the option is on

    def graph_of(self, panel: GpuPanel) -> QWidget:
        return panel.memory_widget

    def _apply(self) -> None:
        on = self.enabled
        panels = {p.index: p for p in self._grid.panels}
        for index, stack in list(self.stacks.items()):
            if on and panels.get(index) is stack.panel:
                continue
            del self.stacks[index]
            if panels.get(index) is stack.panel:  # a panel rebuilt is gone with its items
                stack.remove()
        t_ref = self._history.latest_time()
        for panel in panels.values():
            if on and panel.index not in self.stacks:
                from gpumon.ui.monitor.memory_stack import PanelStack  # with the first panels

                self.stacks[panel.index] = PanelStack(panel, self._history)
                if t_ref is not None:
                    self.stacks[panel.index](t_ref, self._window_s())
            panel.stack = self.stacks.get(panel.index)


class ActivityViews(PanelOption):
    """The option: ``action`` (checkable; in View and in each utilization graph's context
    menu), starting ``on``; each change is given to ``remember``. ``attach()`` after the
    panels are rebuilt. A view turned on is drawn at once from the History and the latest
    snapshot; ``restyle`` then gives its graph the theme and the zoom."""

    def __init__(self, grid: GpuGrid, history: History, parent: QWidget, *,
                 latest: Callable[[], Snapshot | None] = lambda: None,
                 restyle: Callable[[], None] = lambda: None, on: bool = False,
                 remember: Callable[[bool], None] = lambda _on: None) -> None:
        super().__init__(grid, parent, text=tr(ACTIVITY_TEXT), name="actionActivity",
                         tip=tr(ACTIVITY_TIP), on=on, remember=remember)
        self._history = history
        self._latest = latest
        self._restyle = restyle
        self.views: dict[int, ActivityView] = {}  # by GPU index, while the option is on

    def graph_of(self, panel: GpuPanel) -> QWidget:
        return panel.util_widget

    def _apply(self) -> None:
        on = self.enabled
        panels = {p.index: p for p in self._grid.panels}
        for index, view in list(self.views.items()):
            if on and panels.get(index) is view.panel:
                continue
            del self.views[index]
            if panels.get(index) is view.panel:  # a rebuilt panel is gone with its views
                view.panel.remove_view(view)
                view.hide()  # at once: it is deleted when the event loop comes back
                view.deleteLater()
        made = []
        for panel in panels.values():
            if on and panel.index not in self.views:
                from gpumon.ui.monitor.activity_view import ActivityView  # with the panels

                view = self.views[panel.index] = ActivityView(panel)
                view.plot_widget.addAction(self.action)
                view.plot_widget.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)
                panel.add_view(view)
                made.append(view)
        if made:
            self._restyle()
            self._draw_now(made)

    def _draw_now(self, views: list[ActivityView]) -> None:
        """The new views show the latest reading and the History's curves at once."""
        snap = self._latest()
        t_ref = self._history.latest_time()
        for view in views:
            view.show_sample(snap.sample_for(view.panel.index) if snap is not None else None)
            if t_ref is not None:
                low, _ = view.panel.util_plot.getViewBox().viewRange()[0]
                view.draw(partial(self._series, since=t_ref + low), t_ref)

    def _series(self, gpu: int, key: str, since: float) -> tuple[np.ndarray, np.ndarray]:
        return self._history.series(gpu, key, since=since)
