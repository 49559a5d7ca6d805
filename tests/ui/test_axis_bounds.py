"""ThinAxis keeps its bounding rect between paints, and gives pyqtgraph's own whenever what
it depends on changes: the plot's size, the grid, the style, the view's place."""

from __future__ import annotations

import pyqtgraph as pg

from gpumon.ui.widgets.axis import ThinAxis
from gpumon.ui.widgets.plot import LitePlotWidget


def _pyqtgraphs(axis: ThinAxis):
    return pg.AxisItem.boundingRect(axis)


def test_the_kept_bounds_follow_every_change(qtbot) -> None:
    widget = LitePlotWidget()
    qtbot.addWidget(widget)
    widget.resize(400, 200)
    widget.show()
    qtbot.waitExposed(widget)
    plot = widget.getPlotItem()
    axes = [plot.getAxis("left"), plot.getAxis("bottom")]
    assert all(isinstance(a, ThinAxis) for a in axes)
    changes = [
        lambda: None,
        lambda: widget.resize(700, 300),
        lambda: plot.showGrid(x=True, y=True, alpha=0.25),
        lambda: [a.setStyle(tickLength=-12) for a in axes],
        lambda: plot.setLabel("left", "a much longer title, in GiB"),
        lambda: plot.showGrid(x=False, y=False),
        lambda: widget.resize(300, 500),
    ]
    for change in changes:
        change()
        widget.grab()  # a paint, as the scene asks for the bounds then
        # a resize reaches the layout at the next event loop: wait for pyqtgraph's rect to
        # be the kept one (a kept rect gone stale stays stale, and this times out)
        qtbot.waitUntil(lambda: [a.boundingRect() for a in axes]
                        == [_pyqtgraphs(a) for a in axes], timeout=2000)


def test_a_caller_that_changes_the_rect_changes_a_copy(qtbot) -> None:
    widget = LitePlotWidget()
    qtbot.addWidget(widget)
    widget.resize(400, 200)
    axis = widget.getPlotItem().getAxis("left")
    rect = axis.boundingRect()
    rect.adjust(0, 0, 100, 100)
    assert axis.boundingRect() == _pyqtgraphs(axis) != rect
