"""An axis's unit title ("GiB", "%") never lies over its tick numbers (issue 57, item 3): at
200 % and 300 % "GiB" covered "10" and "15" in the GPU panels and the process window. The
title's rectangle and each drawn tick label's are compared in the scene."""

from __future__ import annotations

import pytest
from axis_rects import tick_rects
from axis_rects import title_overlaps as overlaps
from qt_fixtures import settled

from gpumon.ui.widgets.plot import LitePlot, LitePlotWidget
from tests.ui.test_process_window import _view

pytestmark = pytest.mark.usefixtures("restore_app_look")
ZOOMS = (1.0, 2.0, 3.0)


def title_overlaps(plots: list[LitePlotWidget] | list[LitePlot]) -> list[str]:
    for plot in plots:  # each axis draws tick labels: the comparison is never empty
        item = plot.getPlotItem() if isinstance(plot, LitePlotWidget) else plot
        assert tick_rects(item.getAxis("left")), "the axis draws tick labels"
    return overlaps(plots)


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

