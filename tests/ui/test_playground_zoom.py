"""The Playground at 100 %, 200 % and 300 % zoom in a 1400 x 900 window (issue 54 item 5,
issue 57 item 5): every form whole in its column (at 100 % the Model form's "nn.Linear" and
output box were cut, more at 200 % and 300 %), a column that scrolls up and down but never
sideways, the GPU graphs beside it at least one panel wide, and at 300 % the results of three
commands in sight, the newest first and whole. Screenshots go where GPUMON_SHOTS points."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, QRect, QSize, Qt
from PySide6.QtWidgets import (
    QLabel,
    QLineEdit,
    QPushButton,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)
from qt_fixtures import settled
from text_fit import cut_texts

from gpumon.playground.data.actions import RunCode
from gpumon.telemetry.sources.simulated import SimulatedSource
from gpumon.ui.playground.column_fit import LOG_LINES, left_heights
from gpumon.ui.playground.reflow import PAIRS, STACKED, WIDE, FormGrid, TabChoice
from gpumon.ui.window.main_window import MainWindow
from gpumon.ui.window.settings import Settings

pytestmark = pytest.mark.usefixtures("restore_app_look")
WAIT_MS = 30000


def shot(widget: QWidget, name: str) -> None:
    where = os.environ.get("GPUMON_SHOTS")
    if where:
        widget.grab().save(str(Path(where) / name))


def open_playground(qtbot, zoom: float) -> MainWindow:
    """A 1400 x 900 window at ``zoom`` (set before it is made, as a remembered zoom is, so
    the small offscreen screen does not shrink it), on the Playground with torch in."""
    settings = Settings.memory()
    settings.zoom = zoom
    w = MainWindow(lambda: SimulatedSource(4, seed=1), 0.5, settings=settings)
    qtbot.addWidget(w)
    w.resize(1400, 900)
    w.show()
    qtbot.waitExposed(w)
    w.show_tab("Playground")
    qtbot.waitUntil(lambda: bool(w.kernel_link.device_options), timeout=WAIT_MS)
    assert w.size() == QSize(1400, 900)
    return w


def page_settled(w) -> None:
    p = w.playground
    settled(lambda: (w.geometry(), p.splitter.sizes(), p.left.sizes(),
                     p.forms.currentWidget().geometry(), p.forms.geometry()))
    w.grab()  # a first paint: the axes widen for their labels and lay out again
    settled(lambda: (p.splitter.sizes(), p.left.sizes(), p.forms.geometry()))


@pytest.mark.parametrize("zoom", (1.0, 2.0, 3.0))
def test_every_form_is_whole_and_nothing_scrolls_sideways(qtbot, kernel_fork_server, zoom):
    w = open_playground(qtbot, zoom)
    p = w.playground
    for i in range(p.forms.count()):
        p.forms.setCurrentIndex(i)
        page_settled(w)
        shot(w, f"playground-form{i}-{round(zoom * 100)}.png")
        cut = cut_texts(p)
        assert cut == [], (zoom, p.forms.tabText(i), cut)
        assert not p.left_scroll.horizontalScrollBar().isVisible(), (zoom, p.splitter.sizes())
        assert not w.gpu_grid.horizontalScrollBar().isVisible(), (zoom, p.splitter.sizes())
        choice = p.forms_scroll.choice  # the tabs as buttons where their bar is too wide
        if choice.isVisible():
            assert [b.isChecked() for b in choice.buttons].count(True) == 1
            assert choice.buttons[i].isChecked(), (zoom, i)
        page = p.forms.currentWidget()  # the form in sight across its column's width
        seen = page.visibleRegion().boundingRect()
        assert seen.width() + 1 >= page.width(), (zoom, i, seen, page.size())


def test_at_300_percent_three_results_are_in_sight_newest_whole(qtbot, kernel_fork_server):
    w = open_playground(qtbot, 3.0)
    p = w.playground
    for code in ("x = torch.ones(2, 3)", "y = x * 2", "print(y.sum())"):
        p.submit(RunCode(code))
    qtbot.waitUntil(lambda: p.log.count() == 3, timeout=WAIT_MS)
    page_settled(w)
    shot(w, "playground-results-300.png")
    log = p.log
    seen = log.visibleRegion().boundingRect()
    lines = log.fontMetrics().lineSpacing()
    assert seen.height() >= 3 * lines, (seen, log.size(), p.left.sizes())
    window = QRect(QPoint(0, 0), w.size())
    assert window.contains(QRect(log.mapTo(w, seen.topLeft()), seen.size()))
    newest = log.entries()[0]
    assert newest.outcome.code == "print(y.sum())"
    in_view = newest.visibleRegion().boundingRect()
    assert in_view == newest.rect(), (in_view, newest.size(), log.viewport().size())


def test_the_newest_result_comes_before_the_forms_in_the_column_s_height() -> None:
    # 300 %: a 400 px column, forms wanting 330 (least 84), workspace least 110, a 255 px card
    assert left_heights(400, (84, 330), (110, 125), (180, 255)) == [84, 110, 206]
    ws, log = (110, 125), (180, 255)
    forms_h, ws_h, log_h = left_heights(460, (84, 330), ws, log)
    assert log_h >= 255 and ws_h >= 110 and forms_h >= 84 and forms_h + ws_h + log_h == 460
    # 100 %, no result yet: the forms what they need, the log its least lines and the rest
    assert left_heights(672, (60, 195), (80, 166), (80, 0)) == [195, 166, 311]


def test_a_form_puts_its_fields_side_by_side_then_in_pairs_then_stacked(qtbot) -> None:
    page = QWidget()
    qtbot.addWidget(page)
    name, wide_field, button = QLineEdit(), QLineEdit(), QPushButton("a button")
    wide_field.setMinimumWidth(300)
    grid = FormGrid([[QLabel("name"), name, QLabel("device"), wide_field], [],
                     [QLabel(""), button]])
    page.setLayout(grid)
    error = QLabel("an error")
    grid.place_across(error, 1)
    assert grid.need(WIDE) > grid.need(PAIRS) > grid.need(STACKED) >= 300
    for how, width, rows in ((WIDE, grid.need(WIDE), 3), (PAIRS, grid.need(WIDE) - 1, 4),
                             (STACKED, grid.need(PAIRS) - 1, 6)):
        grid.fit(width)
        assert grid.how == how
        # the error's row (under the first row's fields) follows the arrangement
        assert grid.getItemPosition(grid.indexOf(error))[0] == rows - 2
        assert grid.getItemPosition(grid.indexOf(button))[0] == rows - 1


def test_the_tab_buttons_mark_only_the_tab_in_front(qtbot) -> None:
    """Tabs chosen while the buttons were hidden (100 %) left every one of them marked
    once they showed (300 %)."""
    tabs = QTabWidget()
    for name in ("Create", "Move", "Compute", "Model"):
        tabs.addTab(QWidget(), name)
    choice = TabChoice(tabs)
    box = QWidget()
    qtbot.addWidget(box)
    layout = QVBoxLayout(box)
    layout.addWidget(choice)
    layout.addWidget(tabs)
    box.show()
    choice.fit(10_000)  # the bar fits: the buttons hidden
    assert not choice.isVisible() and tabs.tabBar().isVisible()
    for i in (1, 2, 3):
        tabs.setCurrentIndex(i)
    choice.fit(choice.need())  # one button a row
    assert choice.isVisible() and not tabs.tabBar().isVisible()
    assert [b.isChecked() for b in choice.buttons] == [False, False, False, True]
    qtbot.mouseClick(choice.buttons[1], Qt.MouseButton.LeftButton)
    assert tabs.currentIndex() == 1
    assert [b.isChecked() for b in choice.buttons] == [False, True, False, False]


def test_the_window_keeps_room_for_the_results_and_the_first_graphs(qtbot,
                                                                      kernel_fork_server):
    """The page asks for the forms' and workspace's least, ``LOG_LINES`` lines of results
    and the first graphs three lines tall, so the window grows for them (or the zoom step is
    taken back where the screen has no room): in Chinese with Noto fonts at 300 %, a
    1400 x 900 window left the results 70 px (1.4 lines) and cut the first graphs by 16 px,
    on a screen with 96 px more. Made as short as it can be, the window keeps them (at 200 %:
    at 300 % its least is taller than the tests' 800 px screen)."""
    w = open_playground(qtbot, 2.0)
    p = w.playground
    page_settled(w)
    w.resize(1400, 300)  # as short as the window's least
    page_settled(w)
    p.submit(RunCode("x = 1"))  # any change: the heights are kept
    qtbot.waitUntil(lambda: p.log.count() == 1, timeout=WAIT_MS)
    page_settled(w)
    shot(w, "playground-least-200.png")
    assert w.height() < 900, w.size()  # it did shrink, to its least
    log = p.log
    seen = log.visibleRegion().boundingRect()
    assert seen.height() >= LOG_LINES * log.fontMetrics().lineSpacing(), (
        seen, log.size(), p.left.sizes(), w.size())
    graph = w.gpu_panel(0).memory_widget
    viewport = w.gpu_grid.viewport()
    top = graph.mapTo(viewport, QPoint(0, 0)).y()
    in_sight = min(graph.height(), viewport.height() - top)
    assert in_sight >= 3 * graph.fontMetrics().height(), (in_sight, w.gpu_grid.size())


def test_the_window_is_never_narrower_than_the_forms_beside_one_panel(qtbot,
                                                                      kernel_fork_server):
    """At 300 % on a 1280 x 800 screen (1600 x 1000 at 125 %) the column was 10 px narrower
    than its forms one field a line beside one GPU panel: it scrolled sideways and the
    Compute form's list of operations was cut. The page asks for that width, so the window
    grows for it where the screen has room and the zoom step is taken back where it has
    not (test_zoom_refused.py); made narrower, the window keeps it."""
    w = open_playground(qtbot, 3.0)
    p = w.playground
    p.forms.setCurrentIndex(2)  # Compute
    page_settled(w)
    w.resize(900, 900)
    page_settled(w)
    shot(w, "playground-narrow-300.png")
    assert w.width() > 900  # its least
    assert not p.left_scroll.horizontalScrollBar().isVisible(), (w.size(), p.splitter.sizes())
    assert not w.gpu_grid.horizontalScrollBar().isVisible(), (w.size(), p.splitter.sizes())
    assert cut_texts(p) == []
