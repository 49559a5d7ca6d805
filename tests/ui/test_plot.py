"""LitePlot: the part of pg.PlotItem's API the GPU panels, the theme, the exports and the
playground use, on a ViewBox with a left and a bottom axis."""

from __future__ import annotations

import pyqtgraph as pg

from gpumon.ui.widgets.plot import LitePlot, LitePlotWidget


def test_items_legend_and_axes(qtbot) -> None:
    widget = LitePlotWidget(background="w")
    qtbot.addWidget(widget)
    plot = widget.getPlotItem()
    assert isinstance(plot, LitePlot) and plot.getViewBox() is plot.vb
    assert plot.getAxis("left") is not None and plot.getAxis("bottom") is not None
    assert plot.getAxis("right") is None and plot.getAxis("top") is None
    first = plot.plot([0.0, 1.0], [1.0, 2.0], name="before the legend")
    legend = plot.addLegend(offset=(4, 4))
    assert plot.addLegend() is legend and plot.legend is legend
    second = plot.plot([0.0, 1.0], [3.0, 4.0], name="after")
    line = pg.InfiniteLine(pos=0.5, angle=90)
    plot.addItem(line, ignoreBounds=True)
    plot.addItem(line)  # twice: still once
    assert plot.items == [first, second, line]
    assert plot.listDataItems() == [first, second]
    assert [label.text for _, label in legend.items] == ["after"]  # as PlotItem does
    plot.removeItem(second)
    plot.removeItem(second)  # not there any more: nothing happens
    assert plot.listDataItems() == [first] and legend.items == []
    assert line.parentItem() is plot.vb.childGroup


def test_downsampling_clip_ranges_labels_and_grid(qtbot) -> None:
    widget = LitePlotWidget()
    qtbot.addWidget(widget)
    plot = widget.getPlotItem()
    early = plot.plot([0.0, 1.0], [0.0, 1.0])
    plot.setDownsampling(auto=True, mode="peak")
    plot.setClipToView(True)
    late = plot.plot([0.0, 1.0], [0.0, 1.0])
    for item in (early, late):
        assert item.opts["autoDownsample"] and item.opts["downsampleMethod"] == "peak"
        assert item.opts["clipToView"]
    plot.setXRange(-60, 0, padding=0)
    plot.setYRange(0, 100, padding=0)
    (x0, x1), (y0, y1) = plot.vb.viewRange()
    assert (x0, x1, y0, y1) == (-60, 0, 0, 100)
    plot.setLabel("left", "GiB")
    assert plot.getAxis("left").labelText == "GiB" and plot.getAxis("left").label.isVisible()
    plot.setLabel("bottom", "")
    assert not plot.getAxis("bottom").label.isVisible()
    plot.showGrid(x=True, y=False, alpha=0.5)
    assert plot.getAxis("bottom").grid == 127 and plot.getAxis("left").grid is False
    other_widget = LitePlotWidget()
    qtbot.addWidget(other_widget)
    other = other_widget.getPlotItem()
    plot.setXLink(other)
    other.setXRange(-10, 0, padding=0)
    assert plot.vb.viewRange()[0] == [-10, 0]


def test_legend_sample_shows_a_curve_items_fill(qtbot) -> None:
    from PySide6.QtGui import QColor, QImage, QPainter

    widget = LitePlotWidget()
    qtbot.addWidget(widget)
    plot = widget.getPlotItem()
    legend = plot.addLegend()
    fill = "#12c0a0"
    curve = pg.PlotCurveItem([0.0, 1.0], [1.0, 2.0], pen="#000000", fillLevel=0.0,
                             brush=pg.mkBrush(fill), name="filled")
    plot.addItem(curve)
    sample, _ = legend.items[0]
    image = QImage(20, 20, QImage.Format.Format_RGB32)
    image.fill(QColor("white"))
    painter = QPainter(image)
    sample.paint(painter)
    painter.end()
    colours = {QColor(image.pixel(x, y)).name() for x in range(20) for y in range(20)}
    assert fill in colours  # pyqtgraph's own sample drew the line only
