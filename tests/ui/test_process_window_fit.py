"""The process window on its screen (issue 54 item 7, issue 57 item 4): it follows the zoom
keys pressed in it, and at every zoom its frame, title bar included, stays within the
screen's available area from the moment it opens (on Wayland a program cannot move its
windows afterwards; the offscreen screen here has no window manager, so the main window
is given a 30 px title bar and 4 px borders, which the new window's frame takes after)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QRect, Qt
from qt_fixtures import activate, settled

from gpumon.ui.monitor.process.view import ProcessView
from gpumon.ui.window.main_window import MainWindow

pytestmark = pytest.mark.usefixtures("restore_app_look")
TITLE, BORDER = 30, 4


def _framed(self: MainWindow) -> QRect:
    return self.geometry().adjusted(-BORDER, -TITLE, BORDER, BORDER)


def _open(qtbot, w: MainWindow) -> ProcessView:
    model = w.process_table.process_model
    qtbot.waitUntil(lambda: model.rowCount() > 0, timeout=5000)
    view = w.open_process_view(w.process_table.proxy.index(0, 0))
    qtbot.addWidget(view)
    qtbot.waitExposed(view)
    return view


@pytest.mark.parametrize("zoom", [1.0, 2.0, 3.0])
def test_it_opens_within_the_screen_frame_included(qtbot, make_window, monkeypatch,
                                                   zoom: float) -> None:
    monkeypatch.setattr(MainWindow, "frameGeometry", _framed)
    w = make_window()
    w.presentation.set_zoom(zoom)
    view = _open(qtbot, w)
    area = view.screen().availableGeometry()
    size = settled(view.size)
    assert size.width() + 2 * BORDER <= area.width(), (size, area)
    assert size.height() + TITLE + BORDER <= area.height(), (size, area)
    # laid out within that size: nothing asks for more than the window has
    need = view.layout().totalMinimumSize()
    assert need.width() <= size.width() and need.height() <= size.height(), (need, size)
    for plot in view.plots.values():  # and every graph still shows three lines of numbers
        assert plot.height() >= 3 * plot.fontMetrics().height()


def test_the_zoom_keys_work_in_it(qtbot, make_window) -> None:
    w = make_window()
    view = _open(qtbot, w)
    activate(qtbot, view)
    qtbot.keyClick(view, Qt.Key.Key_Equal, Qt.KeyboardModifier.ControlModifier)
    assert w.presentation.zoom == 1.1
    qtbot.keyClick(view, Qt.Key.Key_Minus, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClick(view, Qt.Key.Key_Minus, Qt.KeyboardModifier.ControlModifier)
    assert w.presentation.zoom == 0.9
    qtbot.keyClick(view, Qt.Key.Key_0, Qt.KeyboardModifier.ControlModifier)
    assert w.presentation.zoom == 1.0
    w.topology.open()
    topology = w.topology.view
    assert topology is not None
    activate(qtbot, topology)
    qtbot.keyClick(topology, Qt.Key.Key_Equal, Qt.KeyboardModifier.ControlModifier)
    assert w.presentation.zoom == 1.1
    topology.close()
