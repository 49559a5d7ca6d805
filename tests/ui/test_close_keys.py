"""Esc and Ctrl+W close every window of its own (issue 54, item 8): the topology, the about
box, the list of shortcuts and the cluster address; a process's window is tested in
test_process_window.py. Each is closed by a real key press in it, with the main window open
behind it (whose own Esc stops the playground's code and must not take the key)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWidget

from gpumon.ui.monitor.topology_view import TopologyView
from gpumon.ui.window.about import show_about, show_shortcuts
from gpumon.ui.window.add_machine import MachineDialog
from gpumon.ui.window.main_window import MainWindow
from gpumon.ui.window.open_cluster import UrlDialog
from tests.qt_fixtures import activate


def _topology(w: MainWindow) -> QWidget:
    action = w.findChild(object, "actionTopology")
    assert action is not None
    action.trigger()
    views = w.findChildren(TopologyView)
    assert len(views) == 1
    return views[0]


def _cluster_address(w: MainWindow) -> QWidget:
    dialog = UrlDialog(w)  # what File ▸ Open cluster… shows (it waits there in exec())
    dialog.open()
    return dialog


def _add_machine(w: MainWindow) -> QWidget:
    dialog = MachineDialog(w)  # what File ▸ Add machine… shows
    dialog.open()
    return dialog


OPENERS: dict[str, Callable[[MainWindow], QWidget]] = {
    "topology": _topology,
    "about": lambda w: show_about(w, w.latest_snapshot),
    "shortcuts": show_shortcuts,
    "cluster address": _cluster_address,
    "add machine": _add_machine,
}


@pytest.mark.parametrize("keys", ["Esc", "Ctrl+W"])
@pytest.mark.parametrize("which", list(OPENERS))
def test_esc_and_ctrl_w_close_it(qtbot, make_window, which: str, keys: str) -> None:
    w = make_window()
    window = OPENERS[which](w)
    qtbot.waitExposed(window)
    activate(qtbot, window)
    if keys == "Esc":
        qtbot.keyClick(window, Qt.Key.Key_Escape)
    else:
        qtbot.keyClick(window, Qt.Key.Key_W, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: not window.isVisible(), timeout=3000)
    assert w.isVisible()  # only the window the key was pressed in
