"""The Monitor page where it is too short for the first row of GPU panels (monitor/page.py):
on an 800 x 500 screen at 100 % with Noto fonts, View ▸ Activity and the event log open,
the first row needed 349 px of a 249 px page, and the nvidia-smi table's row and the
process list's least left the grid 111 px: the panels' headers and 45 px of their graphs
(the walk asks three lines, 51 px). There is no zoom step to take back at 100 %."""

from __future__ import annotations

from PySide6.QtCore import QPoint
from qt_fixtures import settled

from gpumon.ui.window.main_window import MainWindow


def _page_height(w: MainWindow, height: int) -> None:
    """Resize ``w`` so that its Monitor page is ``height`` px high (laid out)."""
    page = w.monitor_page
    for _ in range(3):
        w.resize(w.width(), w.height() + height - page.height())
        settled(lambda: (w.size(), page.sizes()))
        if page.height() == height:
            return


def _room(w: MainWindow) -> tuple[int, int, int]:
    """(the first graph's px in sight in the grid, three lines of it, its top in the grid's
    viewport)."""
    graph = w.gpu_panel(0).memory_widget  # type: ignore[union-attr]
    viewport = w.gpu_grid.viewport()
    top = graph.mapTo(viewport, QPoint(0, 0)).y()
    return min(graph.height(), viewport.height() - top), 3 * graph.fontMetrics().height(), top


def test_the_table_keeps_only_its_header_before_the_graphs_go(qtbot, make_window) -> None:
    w = make_window()
    w.resize(800, 700)
    qtbot.waitUntil(lambda: w.snapshot_count >= 2, timeout=5000)
    w.menus.actions["actionActivity"].setChecked(True)
    page, table = w.monitor_page, w.monitor_page.table
    settled(lambda: (page.sizes(), w.gpu_grid.needed_height(page.width(), every_row=False)))
    seen, lines, top = _room(w)
    # the grid's frame, the table's header and row, the process list at its least
    frame = w.gpu_grid.height() - w.gpu_grid.viewport().height()
    least = (frame + table.content_height(1) + page.processes.minimumSizeHint().height()
             + 2 * page.handleWidth())
    _page_height(w, top + lines + least - 10)  # with the table's row: 10 px short
    assert page.height() == top + lines + least - 10
    assert page.grid_short() > 0  # the first row of panels is not in sight whole
    seen, lines, _ = _room(w)
    assert seen >= lines, (seen, lines, page.sizes())
    assert table.height() == table.content_height(0)  # its row one scroll away
    assert page.processes.height() == page.processes.minimumSizeHint().height()
    # with the room for both, the table keeps its row
    _page_height(w, top + lines + least + 10)
    seen, lines, _ = _room(w)
    assert seen >= lines
    assert table.height() == table.content_height(1)
