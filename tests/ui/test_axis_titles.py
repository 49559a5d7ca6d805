"""An axis's unit title ("GiB", "%") never lies over its tick numbers (issue 57, item 3): at
200 % and 300 % "GiB" covered "10" and "15" in the GPU panels and the process window. The
title's rectangle and each drawn tick label's are compared in the scene."""

from __future__ import annotations

import pyqtgraph as pg
import pytest
from PySide6.QtCore import QRectF
from PySide6.QtGui import QImage, QPainter
from qt_fixtures import settled

from gpumon.ui.widgets.plot import LitePlot, LitePlotWidget
from tests.ui.test_process_window import _view

pytestmark = pytest.mark.usefixtures("restore_app_look")
ZOOMS = (1.0, 2.0, 3.0)


def tick_rects(axis: pg.AxisItem) -> list[tuple[str, QRectF]]:
    """Each tick label the axis draws and its rectangle in the scene."""
    image = QImage(8, 8, QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    specs = axis.generateDrawSpecs(painter)
    painter.end()
    return [(text, axis.mapRectToScene(rect)) for rect, _, text in (specs[2] if specs else [])]


def title_overlaps(plots: list[LitePlotWidget] | list[LitePlot]) -> list[str]:
    found = []
    for plot in plots:
        item = plot.getPlotItem() if isinstance(plot, LitePlotWidget) else plot
        axis = item.getAxis("left")
        if not axis.label.isVisible() or not (axis.labelText or axis.labelUnits):
            continue
        title = axis.label.mapRectToScene(axis.label.boundingRect())
        texts = tick_rects(axis)
        assert texts, "the axis draws tick labels"
        for text, rect in texts:
            if title.intersects(rect):
                found.append(f"{axis.labelText!r} {title.getRect()} over {text!r} "
                             f"{rect.getRect()}")
    return found


@pytest.mark.parametrize("zoom", ZOOMS)
def test_gpu_panels_titles_clear_of_ticks(qtbot, make_window, zoom: float) -> None:
    w = make_window()
    w.resize(780, 760)
    qtbot.waitUntil(lambda: w.gpu_panel(3) is not None and w.snapshot_count >= 3, timeout=5000)
    w.presentation.set_zoom(zoom)
    plots = [p for panel in w.gpu_grid.panels for p in (panel.memory_plot, panel.util_plot)]
    # measured once drawing them has laid them out (an axis widens for the labels it draws)
    assert settled(lambda: title_overlaps(plots)) == []


@pytest.mark.parametrize("zoom", ZOOMS)
def test_process_window_titles_clear_of_ticks(qtbot, zoom: float) -> None:
    view = _view(qtbot, zoom)
    assert settled(lambda: title_overlaps(list(view.plots.values()))) == []

