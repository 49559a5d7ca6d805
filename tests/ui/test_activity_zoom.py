"""The Monitor at 300 % with View ▸ Activity on and the event log open (issue 54, item 2): the
activity values' one line (1431 px) made each panel wider than the grid, the Monitor scrolled
sideways and the right graph lost its "now". The values now fold onto two lines where one
does not fit, the grid never scrolls sideways, and every value shows whole."""

from __future__ import annotations

import pytest
from qt_fixtures import settled, zoomed_window

from gpumon.ui.window.main_window import MainWindow

pytestmark = pytest.mark.usefixtures("restore_app_look")


def open_with_activity(qtbot, zoom: float) -> MainWindow:
    w = zoomed_window(qtbot, zoom, readings=3)
    qtbot.waitUntil(lambda: w.gpu_panel(3) is not None, timeout=10000)
    w.menus.actions["actionActivity"].setChecked(True)
    w.event_dock.show()
    return w


@pytest.mark.parametrize("zoom", (1.0, 2.0, 3.0))
def test_activity_and_log_never_scroll_sideways(qtbot, zoom: float) -> None:
    w = open_with_activity(qtbot, zoom)
    grid = w.gpu_grid

    def state() -> tuple[object, ...]:
        return (grid.horizontalScrollBar().isVisible(), grid.widget().width(),
                grid.viewport().width(), tuple(p.width() for p in grid.panels))

    w.grab()  # a first paint: the axes widen for their labels and lay out again
    bar, content, viewport, _ = settled(state)
    assert not bar and content <= viewport, (zoom, content, viewport)
    for panel in grid.shown_panels():
        view = panel.views[0]
        values = view.values
        for label in (values.first, values.second):
            assert label.isHidden() or not label.is_elided(), (zoom, label.shown_text())
        shown = " ".join(lab.shown_text() for lab in (values.first, values.second)
                         if not lab.isHidden())
        for name in ("GPU", "SM", "Occ.", "Tensor", "DRAM"):
            assert f" {name} " in f" {shown}", (zoom, shown)
    values = grid.shown_panels()[0].views[0].values
    one_line = values.widest()[0] + 4
    assert values.two_lines == (values.width() < one_line), (zoom, values.width(), one_line)
    if zoom < 3.0:  # at 100 % and 200 % the panels take the width of the line, as before
        assert not values.two_lines
