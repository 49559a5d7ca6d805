"""Graphs that come into view a few at a time, so that a key is answered on screen at once.

Going back to the Monitor tab (8 GPUs: 16 graphs) or zooming painted every graph in the
frame that answered the key: 100-600 ms here, under load, before anything changed on screen.
``reveal(plots)`` veils the graphs (``LitePlotWidget.veiled``: they paint their background
only), so the first frame shows the page, its tables and every reading at once; then it
unveils ``PER_TURN`` graphs after each frame (next_frame.py), in the order given (top left
first), each in a frame of its own, with keys and readings handled between them.
``prepare(plot)`` runs on each graph just before it is unveiled (a zoom step restyles it
then: ~2 ms a graph); ``wait=True`` veils now and unveils from ``start()`` on.

    self._reveal = reveal(plots, self, self._reveal)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import shiboken6
from PySide6.QtCore import QObject, QPoint, QTimer

from gpumon.ui.widgets.next_frame import after_next_frame

if TYPE_CHECKING:
    from gpumon.ui.widgets.plot import LitePlotWidget

PER_TURN = 2  # graphs unveiled at each turn: one GPU panel's two


class Reveal(QObject):
    """Unveils ``plots`` a few at a time (see the module doc); made by ``reveal``."""

    def __init__(self, plots: Sequence[LitePlotWidget], parent: QObject | None = None,
                 prepare: Callable[[LitePlotWidget], None] | None = None,
                 wait: bool = False) -> None:
        super().__init__(parent)
        self._plots = list(plots)
        self._prepare = prepare
        self._widget = self._plots[0] if self._plots else None
        for plot in self._plots:
            plot.set_veiled(True)
        if not wait:
            self._queue()

    def start(self) -> None:
        """Begin unveiling (a reveal made with ``wait=True``), after the next frame."""
        if self._plots:
            self._queue()

    def _queue(self) -> None:
        if self._widget is not None and shiboken6.isValid(self._widget):
            after_next_frame(self._widget, self._next)  # the frame that answers the key first
        else:
            QTimer.singleShot(0, self, self._next)

    def _next(self) -> None:
        turn, self._plots = self._plots[:PER_TURN], self._plots[PER_TURN:]
        for plot in turn:
            if shiboken6.isValid(plot):
                if self._prepare is not None:
                    self._prepare(plot)
                plot.set_veiled(False)
        if self._plots:
            self._queue()
        else:
            self.deleteLater()

    def finish(self, prepare: bool = True) -> None:
        """Unveil the rest now (another reveal of the same graphs begins); ``prepare=False``:
        without preparing them (the next reveal does)."""
        for plot in self._plots:
            if shiboken6.isValid(plot):
                if prepare and self._prepare is not None:
                    self._prepare(plot)
                plot.set_veiled(False)
        self._plots = []


def on_screen_first(plots: Sequence[LitePlotWidget]) -> list[LitePlotWidget]:
    """``plots`` in reading order, those on screen first (the rest when scrolled to)."""
    def place(plot: LitePlotWidget) -> tuple[bool, int, int]:
        window = plot.window()
        at = plot.mapTo(window, QPoint(0, 0))
        return (not plot.isVisible() or plot.visibleRegion().isEmpty(), at.y(), at.x())

    return sorted(plots, key=place)


def reveal(plots: Sequence[LitePlotWidget], parent: QObject,
           previous: Reveal | None = None,
           prepare: Callable[[LitePlotWidget], None] | None = None,
           wait: bool = False) -> Reveal | None:
    """Veil ``plots`` now and unveil them over the next turns (see the module doc for
    ``prepare`` and ``wait``); ``previous`` (a reveal still going, of the same graphs) is
    finished first. Keep what it returns to pass it next."""
    if previous is not None and shiboken6.isValid(previous):
        previous.finish(prepare=prepare is None)  # else this one prepares them
    return Reveal(plots, parent, prepare, wait) if plots else None
