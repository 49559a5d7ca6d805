"""A GPU panel's crosshair and the box of values beside the pointer (hover_box.py).

The pointer over either graph puts a vertical line on both at the time under it, and the
panel asks the window for the values there (``GpuPanel.hovered``), which come back through
``show_readout``: beside the pointer, or mid-height on the line when the time was set without
a pointer (another view's graph of the same GPU). The pointer leaving a graph takes both away:
they stayed for minutes when only a move elsewhere cleared them.
"""

from __future__ import annotations

from collections.abc import Callable

import pyqtgraph as pg
from PySide6.QtCore import QEvent, QObject, QPoint, QPointF, QRect
from PySide6.QtWidgets import QWidget

from gpumon.ui.widgets.hover_box import HoverBox
from gpumon.ui.widgets.plot import LitePlotWidget


class Crosshair(QObject):
    """The crosshair over ``graphs`` (the first places a readout without a pointer) of
    ``panel``; ``moved(x)``: the pointer is at ``x`` seconds from now on a graph, inside
    ``window_s()``; ``left()``: it left the graphs."""

    def __init__(self, panel: QWidget, graphs: tuple[LitePlotWidget, ...],
                 window_s: Callable[[], float], moved: Callable[[float], None],
                 left: Callable[[], None]) -> None:
        super().__init__(panel)
        self._panel = panel
        self._graphs = graphs
        self._window_s = window_s
        self._moved = moved
        self._left = left
        self.lines: list[pg.InfiniteLine] = []  # made on the first hover
        self.x: float | None = None  # seconds from now under a pointer on a graph
        # where the pointer is (panel coordinates) and the graph it is over
        self._pointer: tuple[QPoint, QWidget] | None = None
        self.box: HoverBox | None = None  # the values under the pointer, made when needed
        for graph in graphs:
            graph.viewport().installEventFilter(self)
            graph.scene().sigMouseMoved.connect(
                lambda pos, graph=graph: self._on_mouse_moved(graph, pos))

    def show_at(self, x_rel: float) -> None:
        """The line at ``x_rel`` seconds from now on every graph."""
        if self._pointer is None:
            widget = self._graphs[0]
            vb = widget.getPlotItem().getViewBox()
            scene = vb.mapViewToScene(QPointF(x_rel, 0.0))
            middle = vb.sceneBoundingRect().center().y()
            point = widget.mapFromScene(QPointF(scene.x(), middle))
            self._pointer = (widget.viewport().mapTo(self._panel, point), widget)
        if not self.lines:
            for graph in self._graphs:
                line = pg.InfiniteLine(angle=90, movable=False, pen=pg.mkPen("#999", width=1))
                graph.getPlotItem().addItem(line, ignoreBounds=True)
                self.lines.append(line)
        for line in self.lines:
            line.setValue(x_rel)
            line.show()
        self.x = x_rel

    def clear(self) -> bool:
        """Hide the line and the box; whether they were shown."""
        was = self.x is not None
        self.x = None
        self._pointer = None
        for line in self.lines:
            line.hide()
        if self.box is not None:
            self.box.hide()
        return was

    def show_readout(self, heading: str, lines: list[str]) -> None:
        """The values under the pointer, in a box beside it over the graph."""
        if self._pointer is None:
            return
        point, graph = self._pointer
        if self.box is None:
            self.box = HoverBox(self._panel)
        self.box.show_at(heading, lines, point,
                         QRect(graph.mapTo(self._panel, QPoint(0, 0)), graph.size()))

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        """The pointer left a graph. Every event of the graphs passes here: nothing else is
        done (a call to the base class's filter cost ~0.1 ms an event, 20 ms of a tab
        switch)."""
        if event.type() == QEvent.Type.Leave:
            self._left()
        return False

    def _on_mouse_moved(self, widget: LitePlotWidget, pos: QPointF) -> None:
        vb = widget.getPlotItem().getViewBox()
        if not vb.sceneBoundingRect().contains(pos):
            self._left()
            return
        x = vb.mapSceneToView(pos).x()
        if -self._window_s() <= x <= 0:
            self._pointer = (widget.viewport().mapTo(self._panel, widget.mapFromScene(pos)),
                             widget)
            self._moved(float(x))
