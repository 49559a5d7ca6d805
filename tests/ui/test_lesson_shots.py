"""Steps 1, 16 and 17 of the Lesson tab run for real in the window, in English and Chinese,
and photographed (set GPUMON_LESSON_SHOTS=DIR to keep the pictures; docs/images has them):
step 1's box of the window's simulated GPUs said to be gpumon's view, with the seed's columns
explained; steps 16 (.item() at every step) and 17 (timing) with their numbers, which read the
same in both languages."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication

from gpumon import i18n
from gpumon.playground.lesson.results import SIMULATED_VIEW, StepResult
from gpumon.playground.lesson.smi_columns import heading
from gpumon.playground.lesson.steps import LESSON
from gpumon.ui.lesson.page import LessonPage

NUMBER = {step.id: i for i, step in enumerate(LESSON, start=1)}
pytestmark = [pytest.mark.usefixtures("restore_app_look"), pytest.mark.slow]


def _run(qtbot, page: LessonPage, number: int) -> StepResult:
    page.show_step(number - 1)
    with qtbot.waitSignal(page.stepFinished, timeout=180000) as blocker:
        page.run_current()
    result = blocker.args[0]
    assert isinstance(result, StepResult) and result.number == number
    return result


def _show(page: LessonPage, text: str) -> None:
    """Scroll the output so that ``text`` is in sight, halfway down, the code above it."""
    out = page.output
    out.moveCursor(out.textCursor().MoveOperation.End)
    assert out.find(text, out.document().FindFlag.FindBackward), text
    cursor = out.textCursor()
    cursor.clearSelection()
    out.setTextCursor(cursor)
    out.ensureCursorVisible()
    bar = out.verticalScrollBar()
    bar.setValue(max(0, bar.value() - out.viewport().height() // 2))
    QApplication.processEvents()


@pytest.mark.parametrize("language", ["en", "zh_CN"])
def test_steps_1_16_17_run_in_the_window(qtbot, make_window, tmp_path, language) -> None:
    i18n.set_language(language)
    w = make_window()
    qtbot.waitUntil(lambda: w.snapshot_count >= 2, timeout=5000)
    page = w.lesson
    assert isinstance(page, LessonPage)
    w.tabs.setCurrentWidget(page)
    qtbot.waitUntil(page.isVisible, timeout=3000)
    keep = os.environ.get("GPUMON_LESSON_SHOTS")
    folder = Path(keep) if keep else tmp_path
    folder.mkdir(parents=True, exist_ok=True)
    tag = "zh" if language == "zh_CN" else "en"

    first = _run(qtbot, page, 1)  # the window's GPUs are simulated: said so, not nvidia-smi's
    shown = page.output.toPlainText()
    assert not first.smi_real and i18n.tr(SIMULATED_VIEW)[:20] in shown
    assert heading() in shown and "Persistence-M" in shown
    assert (w.grab()).save(str(folder / f"lesson-{tag}-step01.png"))

    for step_id, shot in (("item-every-step", "step16"), ("timing", "step17")):
        assert f"step{NUMBER[step_id]}" == shot
        result = _run(qtbot, page, NUMBER[step_id])
        assert all(o.ok for o in result.outcomes), [o.error for o in result.outcomes]
        last = result.outcomes[-1].preview
        dtypes = re.sub(r"'(?:b?float\d+|tf32)'", "", last)  # keys that are code, not words
        assert re.fullmatch(r"\(.*\)|\{.*\}", last) and not re.search(r"[A-Za-z]{4,}", dtypes)
        _show(page, last)
        assert (w.grab()).save(str(folder / f"lesson-{tag}-{shot}.png"))
