"""The Lesson tab for a 45-minute class (issue 51): each step's "More" (what a class can skip)
folded under the narration, closed on every step and opened by a click or Alt+M; the steps that
need two GPUs marked, and Alt+S (or the mark) turning to the next step that does not."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from gpumon import i18n
from gpumon.playground.lesson.steps import LESSON
from gpumon.ui.lesson.page import LessonPage
from tests.qt_fixtures import activate

NUMBER = {s.id: i for i, s in enumerate(LESSON)}  # 0-based, as show_step takes it


def _shown_lesson(qtbot, w) -> LessonPage:
    page = w.lesson
    w.tabs.setCurrentWidget(page)
    qtbot.waitUntil(page.isVisible, timeout=3000)
    activate(qtbot, w)
    return page


def test_more_is_folded_on_every_step_and_opens_with_a_click_or_alt_m(qtbot, make_window):
    w = make_window()
    page = _shown_lesson(qtbot, w)
    page.show_step(NUMBER["cuda-queries"])
    QApplication.processEvents()
    more = page.more
    assert more.isVisible() and not more.area.isVisible() and more.button.text() == "More ▸"
    assert "CUDA_VISIBLE_DEVICES" not in page.narration.text()  # the class reads 3 sentences
    qtbot.mouseClick(more.button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(more.area.isVisible, timeout=2000)
    assert more.label.text() == LESSON[NUMBER["cuda-queries"]].more_text()
    assert "CUDA_VISIBLE_DEVICES" in more.label.text() and more.button.text() == "Less ▾"
    page.turn(1)  # the next step opens with its More closed again
    QApplication.processEvents()
    assert not more.area.isVisible() and more.label.text() == LESSON[page.index].more_text()
    page.run_button.setFocus()
    qtbot.keyClick(page.run_button, Qt.Key.Key_M, Qt.KeyboardModifier.AltModifier)
    qtbot.waitUntil(more.area.isVisible, timeout=2000)
    page.show_step(NUMBER["tensor-on-cpu"])  # a step with nothing more: no fold at all
    QApplication.processEvents()
    assert not LESSON[NUMBER["tensor-on-cpu"]].more and not more.isVisible()


def test_two_gpu_steps_are_marked_and_alt_s_skips_them(qtbot, make_window):
    w = make_window()
    page = _shown_lesson(qtbot, w)
    for index, step in enumerate(LESSON):
        page.show_step(index)
        QApplication.processEvents()
        assert page.skip_button.isVisible() == step.two_gpus, step.id
    page.show_step(NUMBER["model-on-gpu"])  # the step before "Copy between GPUs"
    page.run_button.setFocus()
    qtbot.keyClick(page.run_button, Qt.Key.Key_S, Qt.KeyboardModifier.AltModifier)
    assert page.index == NUMBER["copy-to-host"]  # one key, past the two-GPU step
    assert page.run_button.hasFocus()  # Space runs the step shown next
    page.show_step(NUMBER["copy-between-gpus"])
    QApplication.processEvents()
    qtbot.mouseClick(page.skip_button, Qt.MouseButton.LeftButton)
    assert page.index == NUMBER["copy-to-host"]
    last = len(LESSON) - 1
    assert LESSON[last].two_gpus
    page.show_step(last - 1)
    qtbot.keyClick(page.run_button, Qt.Key.Key_S, Qt.KeyboardModifier.AltModifier)
    assert page.index == last - 1  # nothing after it runs on one GPU: the page stays


def test_in_chinese(qtbot, make_window):
    i18n.set_language("zh_CN")
    try:
        w = make_window()
        page = _shown_lesson(qtbot, w)
        page.show_step(NUMBER["copy-between-gpus"])
        QApplication.processEvents()
        assert page.skip_button.text() == "需要两块 GPU：跳过 ▶▶"
        page.show_step(NUMBER["cuda-queries"])
        QApplication.processEvents()
        assert page.more.button.text() == "更多 ▸"
        assert page.more.label.text() == LESSON[NUMBER["cuda-queries"]].more_text()
        assert "带 CUDA 的 PyTorch" in page.more.label.text()
    finally:
        i18n.set_language("en")
