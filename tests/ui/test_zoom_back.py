"""Back at 100 % after 300 % (Ctrl+0), the graphs are drawn as in a window that never left
100 % (issue 54, item 1: "the graphs keep the 300 % axes or are cut until a tab switch"):
each graph's size, its axes' sizes and fonts, its view range and the tick labels it draws
are compared with those of a fresh window of the same size at 100 %."""

from __future__ import annotations

import pytest
from axis_rects import tick_rects
from qt_fixtures import settled

from gpumon.ui.widgets.plot import LitePlotWidget
from gpumon.ui.window.main_window import MainWindow
from gpumon.ui.window.settings import Settings

pytestmark = pytest.mark.usefixtures("restore_app_look")


def opened(qtbot) -> MainWindow:
    from gpumon.telemetry.sources.simulated import SimulatedSource

    w = MainWindow(lambda: SimulatedSource(4, seed=1), 0.2, window_s=60,
                   settings=Settings.memory())
    qtbot.addWidget(w)
    w.resize(760, 700)  # fits the 800 x 800 offscreen screen at 100 %
    w.show()
    qtbot.waitExposed(w)
    qtbot.waitUntil(lambda: w.gpu_panel(3) is not None and w.snapshot_count >= 3,
                    timeout=10000)
    return w


def drawn(w: MainWindow) -> list[tuple[object, ...]]:
    """Per graph of the first panel (in sight in both windows; one out of sight is drawn
    when it comes into view): its size, its tick labels inside the left axis (its width
    depends on the widest labels it drew before, in a fresh window too), the bottom axis's
    height, the tick font, the time range's
    length, the left axis's range and the labels both axes draw."""
    w.grab()  # painted: the axes size themselves for the labels they draw
    out = []
    for panel in w.gpu_grid.panels[:1]:
        for plot in panel.findChildren(LitePlotWidget):
            item = plot.getPlotItem()
            left, bottom = item.getAxis("left"), item.getAxis("bottom")
            (x0, x1), y = item.getViewBox().viewRange()
            at = left.mapToScene(0, 0).x()  # each label inside its axis: none cut
            inside = all(rect.left() >= at - 0.5 for _, rect in tick_rects(left))
            out.append((panel.index, plot.size().toTuple(), inside, round(bottom.height()),
                        left.style["tickFont"].pointSizeF(),
                        round(x1 - x0), [round(v, 3) for v in y],
                        sorted(t for t, _ in tick_rects(left)),
                        len(tick_rects(bottom))))
    return out


def test_ctrl_0_after_300_percent_draws_the_graphs_as_a_fresh_window(qtbot) -> None:
    w = opened(qtbot)
    for _ in range(7):  # 100 → 300 % in the zoom keys' steps
        w.presentation.zoom_in()
    assert settled(lambda: w.presentation.zoom) == 3.0
    w.grab()
    w.presentation.reset_zoom()
    assert settled(lambda: w.presentation.zoom) == 1.0
    back = settled(lambda: drawn(w))
    other = opened(qtbot)
    fresh = settled(lambda: drawn(other))
    for was, now in zip(back, fresh, strict=True):  # sizes within a pixel (rounding at 150 %)
        assert abs(was[1][0] - now[1][0]) <= 1 and abs(was[1][1] - now[1][1]) <= 1, (was, now)
        assert was[2:] == now[2:], (was, now)
