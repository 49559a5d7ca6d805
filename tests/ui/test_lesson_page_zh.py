"""The Lesson tab in Chinese: title, narration, counter and buttons from the catalogue, the
glossary table, a step run for real with torch's own message beside the Chinese note, and
every step at 100 % and 200 % zoom with no text cut off (screenshots saved and looked at;
set GPUMON_LESSON_SHOTS=DIR to keep them)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from PySide6.QtGui import QFontMetricsF
from PySide6.QtWidgets import QApplication, QLabel, QPushButton
from qt_fixtures import settled

from gpumon import i18n
from gpumon.playground.lesson.steps import LESSON
from gpumon.ui.lesson.page import LessonPage

NUMBER = {step.id: i for i, step in enumerate(LESSON, start=1)}
pytestmark = pytest.mark.usefixtures("restore_app_look")


def _lesson(qtbot, w) -> LessonPage:
    page = w.lesson
    w.tabs.setCurrentWidget(page)
    qtbot.waitUntil(page.isVisible, timeout=3000)
    return page


def test_lesson_tab_speaks_chinese(qtbot, make_window, chinese) -> None:
    w = make_window()
    page = _lesson(qtbot, w)
    n = len(LESSON)
    assert w.tabs.tabText(w.tabs.indexOf(page)) == "课程"
    assert page.counter.text() == f"第 1 步（共 {n} 步）"
    assert page.title.text() == "用 nvidia-smi 查看 GPU"
    assert page.narration.text().startswith("nvidia-smi 是 NVIDIA 驱动自带的状态报告。")
    assert "“CUDA Version”" in page.narration.text()  # nvidia-smi's own words, quoted
    assert [b.text() for b in (page.prev_button, page.run_button, page.next_button)] == \
        ["◀ 上一步", "运行", "下一步 ▶"]
    assert page.output.placeholderText() == "按“运行”在本机上运行这一步。"

    page.next()  # the glossary: words to read, no code, nothing to run
    assert page.counter.text() == f"第 2 步（共 {n} 步）" and page.title.text().startswith("术语表")
    assert not page.code.isVisible() and page.run_button.isEnabled()
    assert page.run_button.toolTip() == "术语表没有代码：“运行”只会再显示一遍。"
    lines = page.output.toPlainText().replace("\xa0", " ").splitlines()
    for term, word in (("张量", "tensor"), ("显存", "GPU memory"), ("CUDA 上下文", "CUDA context"),
                       ("缓存分配器", "caching allocator"), ("流", "stream")):
        assert f"{term}   {word}" in lines  # the term, then the English word torch uses
    meaning = lines[lines.index("张量   tensor") + 1]
    assert meaning.startswith("有形状、dtype（数据类型）")
    sent: list[object] = []
    w.kernel_link.run_lesson_step = lambda *a: sent.append(a) or -1  # type: ignore[method-assign]
    with qtbot.waitSignal(page.stepFinished, timeout=1000):  # answered here, at once
        page.run_current()
    assert not sent and "张量" in page.output.toPlainText()  # the kernel was not asked
    page.next()
    assert page.code.isVisible() and page.run_button.isEnabled()
    assert "torch.cuda.is_available()" in page.code.toPlainText()  # code stays code


def test_a_chinese_step_shows_torchs_own_message(qtbot, make_window, chinese) -> None:
    torch = pytest.importorskip("torch")
    w = make_window(show=False)
    page = w.lesson
    page.show_step(NUMBER["to-gpu"] - 1)
    with qtbot.waitSignal(page.stepFinished, timeout=60000) as blocker:
        page.run_current()
        assert page.run_button.text() == "正在运行…"
        assert page.busy_label.text().startswith(("正在运行第", "正在加载 PyTorch"))
    result = blocker.args[0]
    text = page.output.toPlainText()
    assert page.run_button.text() == "再次运行"
    assert "说明：" in text and result.note in text
    if torch.cuda.is_available():
        assert "设备 cuda:0" in text
        return
    error = result.errors[0].error
    assert f"{error.type_name}: {error.message}" in text  # torch's words, unchanged
    assert "原因：" in text and "why:" not in text
    assert result.note.startswith("这一步需要 CUDA GPU")
    assert "在 meta 设备上的同一演示：" in text


def _cut_off(widget: QLabel | QPushButton) -> bool:
    """Whether ``widget``'s text needs more room than it has: a wrapped label more height
    for its width, anything else more width than it got (its style's size hint)."""
    if isinstance(widget, QLabel) and widget.wordWrap():
        return widget.heightForWidth(widget.contentsRect().width()) > widget.height() + 1
    fm = QFontMetricsF(widget.font())
    return (widget.width() < widget.sizeHint().width()
            or fm.horizontalAdvance(widget.text()) > widget.contentsRect().width() + 1)


@pytest.mark.parametrize("zoom", [1.0, 2.0, 3.0])
def test_every_chinese_step_fits_at_every_zoom(qtbot, make_window, chinese, tmp_path,
                                               zoom) -> None:
    """At 100 % and 200 % every line of every step's narration is in sight; at 300 % on the
    800 x 800 test screen a long one scrolls (a scroll bar shows), and none is cut off."""
    w = make_window()
    page = _lesson(qtbot, w)
    w.presentation.set_zoom(zoom)
    font_px = QFontMetricsF(QApplication.font()).height()
    qtbot.waitUntil(lambda: page.narration.fontMetrics().height() >= font_px - 1, timeout=3000)
    settled(lambda: (w.frameGeometry(), page.narration_area.geometry()))
    keep = os.environ.get("GPUMON_LESSON_SHOTS")
    folder = Path(keep) if keep else tmp_path
    folder.mkdir(parents=True, exist_ok=True)
    for index, step in enumerate(LESSON):
        page.show_step(index)
        settled(lambda: (page.narration.text(), page.narration.geometry(),
                         page.narration_area.geometry()))
        shown = (page.counter, page.title, page.narration, page.prev_button, page.run_button,
                 page.next_button)
        assert not [x.objectName() for x in shown if _cut_off(x)], (zoom, step.id)
        area = page.narration_area
        if zoom < 3:
            assert not area.cut_off(), (zoom, step.id)
        else:
            assert not area.cut_off() or area.verticalScrollBar().isVisible(), step.id
        assert page.narration.text() == i18n.tr(step.narration) != step.narration
        if step.id in ("nvidia-smi", "glossary", "cuda-queries", "mixed-devices", "memory"):
            image = page.grab()
            path = folder / f"lesson-zh-{int(zoom * 100)}-{index + 1:02d}-{step.id}.png"
            assert image.save(str(path)) and path.stat().st_size > 5000
