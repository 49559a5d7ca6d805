"""The event log's dock (``health_events.DockCap``): as tall as it asks, at most a quarter of
the window, after each zoom step, until the user drags its edge."""

from __future__ import annotations

import pytest
from qt_fixtures import settled

pytestmark = pytest.mark.usefixtures("restore_app_look")


def test_back_at_100_percent_the_log_is_as_tall_as_before(qtbot, make_window) -> None:
    """Zoomed to 200 % and back, an 800 x 500 window kept the dock at its 200 % height (a
    quarter of the window, 118 px instead of 90): with Noto fonts and View ▸ Activity, 15 px
    taken from the Monitor's graphs, which had none to spare (the walk, at 200 % desktop
    scale)."""
    w = make_window()
    w.resize(798, 498)
    qtbot.waitUntil(lambda: w.snapshot_count >= 1, timeout=5000)
    w.menus.actions["actionActivity"].setChecked(True)
    w.event_dock.show()
    dock = w.event_dock
    at_100 = settled(lambda: (dock.height(), dock.sizeHint().height()))
    assert at_100[0] == min(at_100[1], w.height() // 4)
    w.presentation.set_zoom(2.0)
    at_200 = settled(lambda: (dock.height(), dock.sizeHint().height(), w.presentation.zoom))
    assert at_200[0] > at_100[0], (at_100, at_200)
    w.presentation.set_zoom(1.0)
    back = settled(lambda: (dock.height(), dock.sizeHint().height(), w.presentation.zoom))
    assert back[0] == at_100[0], (at_100, at_200, back)
