"""The Lesson tab: navigation, and steps run for real on the shared kernel."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QPushButton

from gpumon.playground.lesson.steps import LESSON
from gpumon.ui.lesson.page import LessonPage


def _page(w) -> LessonPage:
    assert w.findChild(LessonPage, "lessonPage") is None  # built on first use, not at start
    assert w.lesson is not None  # builds it
    page = w.findChild(LessonPage, "lessonPage")
    assert page is not None
    return page


def _number(step_id: str) -> int:
    return next(i for i, s in enumerate(LESSON) if s.id == step_id) + 1


def test_navigation(qtbot, make_window):
    w = make_window(show=False)
    page = _page(w)
    assert w.tabs.tabText(w.tabs.indexOf(page)) == "Lesson"
    n = len(LESSON)
    assert page.counter.text() == f"Step 1 of {n}"
    assert not page.prev_button.isEnabled()
    qtbot.mouseClick(page.next_button, Qt.MouseButton.LeftButton)
    assert page.counter.text() == f"Step 2 of {n}"
    assert page.title.text() == LESSON[1].title
    assert LESSON[2].actions[0].code() not in page.code.toPlainText()
    qtbot.mouseClick(page.next_button, Qt.MouseButton.LeftButton)
    assert page.counter.text() == f"Step 3 of {n}"
    assert LESSON[2].actions[0].code() in page.code.toPlainText()
    page.show_step(n - 1)
    assert not page.next_button.isEnabled()
    qtbot.mouseClick(page.prev_button, Qt.MouseButton.LeftButton)
    assert page.index == n - 2
    assert not w.kernel_link.running  # navigating never starts torch


def test_step_one_shows_nvidia_smi_text(qtbot, make_window):
    w = make_window()
    qtbot.waitUntil(lambda: w.latest_snapshot is not None, timeout=5000)
    page = _page(w)
    with qtbot.waitSignal(page.stepFinished, timeout=20000) as blocker:
        qtbot.mouseClick(page.findChild(QPushButton, "lessonRun"), Qt.MouseButton.LeftButton)
    assert blocker.args[0].smi_text
    assert "Memory-Usage" in page.output.toPlainText()
    assert "simulated" in page.output.toPlainText()
    assert page.run_button.text() == "Run again"


def test_cuda_step_without_cuda_shows_the_real_error(qtbot, make_window):
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA; the GPU tests cover the CUDA path")
    w = make_window(show=False)
    page = _page(w)
    page.show_step(_number("to-gpu") - 1)
    with qtbot.waitSignal(page.stepFinished, timeout=60000) as blocker:
        page.run_current()
        assert page.running and page.busy_bar.isVisibleTo(page)
        assert page.run_button.text() == "Running…"
    result = blocker.args[0]
    errors = result.errors
    assert errors, "a CUDA step on a machine without CUDA gives torch's error"
    text = page.output.toPlainText()
    assert errors[0].error.type_name in text
    assert errors[0].error.message.splitlines()[0] in text
    assert "why: " + errors[0].error.explanation in text
    assert "Note:" in text and result.note in text
    if result.meta_outcomes:
        assert "meta device" in text
    assert not page.busy_bar.isVisibleTo(page) and page.run_button.isEnabled()


def test_lesson_steps_share_the_playground_workspace_and_keep_its_names(qtbot, make_window):
    """The lesson runs in the playground's kernel workspace: its tensors appear there, and
    jumping between steps (a reset and replay) forgets only the lesson's own names."""
    from gpumon.playground.data import actions as act

    w = make_window(show=False)
    with qtbot.waitSignal(w.kernel_link.actionFinished, timeout=60000):
        w.kernel_link.submit(act.CreateTensor("mine", "[7, 8, 9]"))
    page = _page(w)
    page.show_step(_number("to-gpu") - 1)  # not the next step: the runner resets and replays
    with qtbot.waitSignal(page.stepFinished, timeout=60000):
        page.run_current()
    with qtbot.waitSignal(w.kernel_link.callFinished, timeout=10000) as blocker:
        w.kernel_link.call("names")
    names = blocker.args[1]
    assert names[0] == "mine" and len(names) > 1  # the lesson's tensors are there too
    page.show_step(_number("to-gpu") - 1)  # jump again: a reset of the lesson's names only
    with qtbot.waitSignal(page.stepFinished, timeout=60000):
        page.run_current()
    with qtbot.waitSignal(w.kernel_link.callFinished, timeout=10000) as again:
        w.kernel_link.call("names")
    assert again.args[1] == names


def test_nvidia_smi_s_own_output_is_shown_as_text_not_html() -> None:
    """Step 1's real nvidia-smi output goes into the page escaped: markup in it stays text."""
    from gpumon.playground.lesson.results import StepResult
    from gpumon.ui.lesson.page import result_html

    shown = result_html(StepResult(1, LESSON[0], (), smi_text="| <b>GPU</b> & 0 |\n",
                                   smi_real=True))
    assert "$ nvidia-smi" in shown and "&lt;b&gt;GPU&lt;/b&gt; &amp; 0" in shown
    assert "<b>GPU</b>" not in shown


def test_at_300_percent_the_output_keeps_three_lines_in_sight(qtbot, make_window):
    """At 300 % a long narration left the step's output one line, the code two (issue 54,
    item 6): the output keeps three lines, the narration scrolls instead."""
    from qt_fixtures import settled

    from gpumon.ui.lesson.page import OUTPUT_LINES

    w = make_window()
    page = _page(w)
    w.show_tab("Lesson")
    w.presentation.set_zoom(3.0)
    page.show_step(0)  # nvidia-smi: the longest narration of the first steps
    settled(lambda: (page.output.geometry(), page.narration_area.geometry(),
                     page.fontMetrics().height()))
    line = page.output.fontMetrics().lineSpacing()
    assert page.output.viewport().height() >= OUTPUT_LINES * line, (
        page.output.viewport().height(), line)
    assert page.narration_area.cut_off() and page.narration_area.verticalScrollBar().isVisible()
