"""The Lesson tab with keyboard and mouse: Previous / Run / Next stay where they are from
step to step, Run keeps a visible focus, and one Space press does one thing."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QApplication
from qt_fixtures import settled

from gpumon.ui.lesson.page import LessonPage
from tests.qt_fixtures import activate


def _shown_lesson(qtbot, w) -> LessonPage:
    page = w.lesson
    w.tabs.setCurrentWidget(page)
    qtbot.waitUntil(page.isVisible, timeout=3000)
    activate(qtbot, w)
    return page


def test_buttons_stay_in_one_place_whatever_the_step(qtbot, make_window):
    w = make_window()
    page = _shown_lesson(qtbot, w)
    places = set()
    for index in range(len(page.steps)):
        page.show_step(index)
        QApplication.processEvents()
        for button in (page.prev_button, page.run_button, page.next_button):
            places.add((button.objectName(), button.mapTo(page, QPoint(0, 0)).toTuple()))
    assert len(places) == 3, sorted(places)  # one place per button over every step


def test_space_on_run_runs_once_keeps_the_step_and_the_sampling(qtbot, make_window):
    w = make_window()
    qtbot.waitUntil(lambda: w.latest_snapshot is not None, timeout=5000)
    page = _shown_lesson(qtbot, w)
    page.run_button.setFocus()
    qtbot.waitUntil(page.run_button.hasFocus, timeout=2000)
    finished: list[object] = []
    page.stepFinished.connect(finished.append)
    qtbot.keyClick(page.run_button, Qt.Key.Key_Space)
    assert page.running and page.run_button.text() == "Running…"
    assert page.run_button.hasFocus()  # the focus did not jump to Next
    qtbot.keyClick(page.run_button, Qt.Key.Key_Space)  # pressed again while it runs
    qtbot.waitUntil(lambda: bool(finished), timeout=60000)
    settled(lambda: (len(finished), page.running))  # what the finish posted, handled
    assert len(finished) == 1 and not page.running  # the second Space started no run
    assert page.index == 0 and not w.paused
    assert page.run_button.hasFocus()
    assert w.testAttribute(Qt.WidgetAttribute.WA_KeyboardFocusChange)  # drawn as focused


def test_ctrl_3_from_the_code_line_then_space_runs_the_step(qtbot, make_window):
    """As in class: typing in the Playground, Ctrl+3, Space: the step runs, sampling goes on
    (the focus stayed on the hidden code line, and Space paused the sampling)."""
    w = make_window()
    qtbot.waitUntil(lambda: w.latest_snapshot is not None, timeout=5000)
    activate(qtbot, w)
    qtbot.keyClick(w, Qt.Key.Key_2, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(w.playground.code_bar.edit.hasFocus, timeout=3000)
    qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_3, Qt.KeyboardModifier.ControlModifier)
    page = w.lesson
    qtbot.waitUntil(page.run_button.hasFocus, timeout=3000)
    finished: list[object] = []
    page.stepFinished.connect(finished.append)
    qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Space)
    qtbot.waitUntil(lambda: bool(finished), timeout=60000)
    assert page.index == 0 and not w.paused


@pytest.mark.parametrize("zoom", [1.0, 3.0])
def test_space_after_a_click_on_next_or_previous_runs_the_step_never_turns_the_page(
        qtbot, make_window, restore_app_look, zoom: float) -> None:
    """A mouse click on Next, then Space: the step shown runs, the page stays (a click left
    the focus on Next, so Space pressed it again: step 6 went back to 5)."""
    w = make_window()
    w.presentation.set_zoom(zoom)
    page = _shown_lesson(qtbot, w)
    sent: list[int] = []
    w.kernel_link.run_lesson_step = (  # type: ignore[method-assign]
        lambda steps, number, snap: sent.append(number) or -1)
    page.show_step(4)
    for button, shown in ((page.next_button, 5), (page.next_button, 6),
                          (page.prev_button, 5)):
        qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
        assert page.index == shown
        for _ in range(3):  # pressed and released, three times, wherever the focus is
            qtbot.keyClick(QApplication.focusWidget() or w, Qt.Key.Key_Space)
        assert page.index == shown and not w.paused
        assert page.run_button.hasFocus()
        assert sent[-1] == shown + 1  # Run ran the step shown (once: it is busy after)
        page._ticket = None  # the stub answers nothing: Run may run again
    assert w.testAttribute(Qt.WidgetAttribute.WA_KeyboardFocusChange)  # Run drawn focused


def test_space_on_a_page_turn_button_a_program_focused_does_nothing(qtbot, make_window):
    w = make_window()
    page = _shown_lesson(qtbot, w)
    page.show_step(3)
    for button in (page.next_button, page.prev_button):
        assert button.focusPolicy() == Qt.FocusPolicy.NoFocus
        button.setFocus()
        qtbot.waitUntil(button.hasFocus, timeout=2000)
        qtbot.keyClick(button, Qt.Key.Key_Space)
        assert page.index == 3 and not page.running and not w.paused


def test_alt_arrows_turn_the_page_and_run_keeps_the_focus(qtbot, make_window):
    w = make_window()
    page = _shown_lesson(qtbot, w)
    page.take_focus()
    qtbot.waitUntil(page.run_button.hasFocus, timeout=2000)
    qtbot.keyClick(page.run_button, Qt.Key.Key_Right, Qt.KeyboardModifier.AltModifier)
    qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Right, Qt.KeyboardModifier.AltModifier)
    assert page.index == 2 and page.run_button.hasFocus()
    qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Left, Qt.KeyboardModifier.AltModifier)
    assert page.index == 1 and page.run_button.hasFocus()
    last = len(page.steps) - 1
    page.show_step(last)
    qtbot.keyClick(page.run_button, Qt.Key.Key_Right, Qt.KeyboardModifier.AltModifier)
    assert page.index == last and page.run_button.hasFocus()  # no page after the last


def test_run_keeps_the_focus_through_the_glossary(qtbot, make_window):
    """The glossary step has no code, yet Run stays enabled there: the focus stays on Run
    on the way through, so Space shows the glossary again and never turns the page."""
    w = make_window()
    page = _shown_lesson(qtbot, w)
    glossary = next(i for i, s in enumerate(page.steps) if s.kind == "glossary")
    page.show_step(glossary - 1)
    page.run_button.setFocus()
    qtbot.waitUntil(page.run_button.hasFocus, timeout=2000)
    page.next()  # as a click on Next would
    assert page.index == glossary and page.run_button.hasFocus()
    sent: list[object] = []
    w.kernel_link.run_lesson_step = lambda *a: sent.append(a) or -1  # type: ignore[method-assign]
    with qtbot.waitSignal(page.stepFinished, timeout=1000):
        qtbot.keyClick(page.run_button, Qt.Key.Key_Space)
    assert page.index == glossary and page.run_button.hasFocus() and not sent
    assert page.run_button.text() == "Run"  # not "Run again": nothing ran
    page.next()
    assert page.run_button.hasFocus() and page.run_button.isEnabled()
