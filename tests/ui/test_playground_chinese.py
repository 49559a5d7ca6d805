"""The Playground page in Simplified Chinese: its own words in Chinese, torch's messages,
code, device names and dtypes exactly as written, and no text cut off at 100 % or 200 %.

Actions run on the CPU build of torch in the real playground kernel, as in
test_playground_panel.py; errors are compared with what torch raises in this process.
"""

from __future__ import annotations

import re

import pytest
import torch
from PySide6.QtCore import Qt
from PySide6.QtGui import QTextDocument
from PySide6.QtWidgets import QCheckBox, QComboBox, QLabel, QPushButton, QWidget
from testkit import torch_error

from gpumon.playground.client.kernel_client import KernelExit
from gpumon.playground.data import actions as act
from gpumon.playground.data.errors import REFUSED, ErrorInfo
from gpumon.playground.data.outcome import Outcome
from gpumon.ui.playground.kernel_link import ended_outcome, interrupted_error
from gpumon.ui.playground.page import PlaygroundPage
from gpumon.ui.playground.style import (
    facts_text,
    outcome_html,
    outcome_plain,
    outcome_tag,
    took_text,
)
from tests.playground.kernel_helpers import touch_line
from tests.qt_fixtures import settled

CJK = re.compile("[\u4e00-\u9fff]")
# English words a Chinese card may still show: units, device names and torch's own terms.
KEPT = {"cpu", "cuda", "meta", "RSS", "MiB", "KiB", "GiB", "int64", "float32", "tensor",
        "torch", "ms", "µs"}


@pytest.fixture
def zh_panel(qtbot, make_window, chinese) -> PlaygroundPage:
    window = make_window()
    window.tabs.setCurrentWidget(window.playground)
    qtbot.waitUntil(lambda: bool(window.kernel_link.device_options), timeout=30000)
    return window.playground


def _click(qtbot, panel: PlaygroundPage, name: str) -> None:
    qtbot.mouseClick(panel.findChild(QPushButton, name), Qt.MouseButton.LeftButton)


def _plain(html_text: str) -> str:
    doc = QTextDocument()
    doc.setHtml(html_text)
    return doc.toPlainText()


def _english_words(text: str) -> set[str]:
    return {w for w in re.findall(r"[A-Za-z][A-Za-z0-9_]+", text) if w not in KEPT}


def test_forms_code_line_and_table_speak_chinese(zh_panel: PlaygroundPage) -> None:
    forms = zh_panel.forms
    assert [forms.tabText(i) for i in range(forms.count())] == [
        "创建", "移动", "计算", "模型", "查询"]
    labels = {w.text() for w in forms.findChildren(QLabel)}
    assert {"名称", "设备", "数值", "形状", "源", "结果", "运算"} <= labels
    buttons = {b.objectName(): b.text() for b in forms.buttons}
    assert buttons["runMoveButton"] == "移动" and buttons["runComputeButton"] == "计算"
    assert buttons["runCreateButton"] == "torch.tensor(values)"  # code stays code
    assert buttons["runIsAvailableButton"] == "is_available()"
    assert forms.findChild(QCheckBox, "modelBiasCheck").text() == "偏置"
    devices = forms.findChild(QComboBox, "deviceCombo")
    if not torch.cuda.is_available():
        assert "cuda:0 — 本机不可用" in [devices.itemText(i) for i in range(devices.count())]
    assert devices.lineEdit().placeholderText() == "默认"
    assert forms.findChild(QComboBox, "dtypeCombo").itemText(0) == "（默认）"
    bar = zh_panel.code_bar
    assert (bar.run_button.text(), bar.stop_button.text()) == ("运行", "停止")
    hint = bar.edit.placeholderText()
    assert hint.startswith("x = torch.ones(2, 3, device='cuda:0')") and "换行" in hint
    table = zh_panel.workspace_table
    model = table.model()
    headers = [model.headerData(c, Qt.Orientation.Horizontal) for c in range(model.columnCount())]
    assert headers == ["名称", "类别", "形状", "dtype", "设备", "大小"]
    assert "设备：" in zh_panel.status_label.text()


def test_card_has_chinese_labels_and_torchs_error_in_english(
        qtbot, zh_panel: PlaygroundPage) -> None:
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA; the CPU-only build's error is not raised")
    expected = torch_error(lambda: torch.tensor([1, 2, 3], device="cuda:0"))
    assert expected is not None
    zh_panel.findChild(QComboBox, "deviceCombo").setEditText("cuda:0")
    _click(qtbot, zh_panel, "runCreateButton")
    qtbot.waitUntil(lambda: zh_panel.log.count() == 1, timeout=20000)
    entry = zh_panel.log.entries()[0]
    err = entry.outcome.error
    assert err is not None and (err.type_name, err.message) == expected  # torch's own words
    assert "Torch not compiled with CUDA enabled" in err.message
    assert entry.tag.text() == "错误"
    assert entry.copy_button.text() == "复制"
    body = _plain(entry.body.text())
    assert f"{err.type_name}: {err.message}" in body  # shown exactly as torch wrote it
    foot = body.splitlines()[-1]
    assert took_text(entry.outcome) in foot and CJK.search(foot)
    assert not _english_words(foot)
    assert err.message in entry.plain_text()


def test_result_card_and_workspace_in_chinese(qtbot, zh_panel: PlaygroundPage) -> None:
    _click(qtbot, zh_panel, "runCreateButton")  # x = torch.tensor([1, 2, 3])
    zh_panel.submit(act.Move("x", "to", "cpu", None, "z"))  # no copy: already there
    qtbot.waitUntil(lambda: zh_panel.log.count() == 2, timeout=20000)
    moved, created = zh_panel.log.entries()
    assert created.outcome.ok and created.tag.text() == "cpu"  # a device name stays
    facts = facts_text(created.outcome)
    assert facts == "→ x · 形状 (3,) · int64 · 位于 cpu"
    assert "未复制：结果就是源本身" in facts_text(moved.outcome)
    for entry in (created, moved):
        body = _plain(entry.body.text())
        words = _english_words(body.replace(entry.outcome.preview, ""))
        assert not words, words  # every word of ours is Chinese; tensor(...) is torch's repr
    qtbot.waitUntil(lambda: zh_panel.workspace_table.rowCount() == 2, timeout=5000)
    assert zh_panel.workspace_table.row_texts()[0] == ("x", "张量", "(3,)", "int64", "cpu",
                                                        "24 B")


def test_a_detail_line_uses_the_full_width_colon(qtbot, zh_panel: PlaygroundPage) -> None:
    """Typed code's "made or changed" line: "新建或改动：x (cpu)", not "新建或改动: x"."""
    zh_panel.code_bar.edit.set_code("x = torch.ones(2)")
    qtbot.mouseClick(zh_panel.code_bar.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: zh_panel.log.count() == 1, timeout=20000)
    (entry,) = zh_panel.log.entries()
    assert entry.outcome.details[0][0] == "新建或改动"
    assert "新建或改动：x (cpu)" in outcome_plain(entry.outcome)
    assert "新建或改动：" in _plain(entry.body.text())


def test_compute_with_the_as_is_modifier_runs_in_chinese(qtbot,
                                                         zh_panel: PlaygroundPage) -> None:
    """The modifier combos show "（不变）" for form_text.AS_IS: the code must not get it."""
    zh_panel.submit(act.CreateTensor("x", "[1, 2, 3]"))
    a_mod = zh_panel.findChild(QComboBox, "computeAModCombo")
    assert a_mod.currentText() == "（不变）"
    zh_panel.findChild(QComboBox, "computeACombo").setEditText("x")
    _click(qtbot, zh_panel, "runComputeButton")
    qtbot.waitUntil(lambda: zh_panel.log.count() == 2, timeout=20000)
    newest = zh_panel.log.outcomes()[0]
    assert newest.ok and newest.code == "y = x ** 2"


def test_kernel_cards_and_stop_sentences_in_chinese(chinese) -> None:
    card = ended_outcome(KernelExit(pid=42, returncode=-9, lost_names=("x",),
                                    reason="killed after interrupt"))
    assert card.code == "# 停止：内核进程已被终止并重启"
    assert card.error is not None and card.error.type_name == "KernelRestarted"
    assert card.error.message.startswith("按下“停止”后 2 s 内代码仍未停下")
    assert "pid 42" in card.error.message and "新的内核进程已就绪" in card.error.explanation
    assert outcome_tag(card) == "内核进程"
    stopped = Outcome(act.IsAvailable(), "while True: pass", False, 0.0, 0.0,
                      error=interrupted_error())
    assert outcome_tag(stopped) == "已停止"
    text = outcome_plain(stopped)
    assert "KeyboardInterrupt: 已被“停止”按钮中断。" in text  # Python's name stays
    # How long the code ran is not known here: no "stopped before the operation ran".
    assert took_text(stopped) == took_text(card) == "" and "操作运行之前" not in text
    refused = Outcome(act.IsAvailable(), "x", False, 0.0, 0.0,
                      error=ErrorInfo(REFUSED, "no", "because", by_torch=False))
    assert outcome_tag(refused) == "已拒绝"
    assert "gpumon 在 torch 运行之前就拒绝了：because" in _plain(outcome_html(refused))


def _cut_off(root: QWidget) -> list[str]:
    """Visible one-line labels, buttons and check boxes narrower than their text."""
    cut = []
    for w in root.findChildren(QWidget):
        if not w.isVisible() or not isinstance(w, (QLabel, QPushButton, QCheckBox)):
            continue
        if isinstance(w, QLabel) and (w.wordWrap() or w.textFormat() == Qt.TextFormat.RichText
                                      or not w.text()):
            continue
        need = w.fontMetrics().horizontalAdvance(w.text())
        room = w.contentsRect().width()
        if isinstance(w, (QPushButton, QCheckBox)):
            need, room = w.sizeHint().width(), w.width()
        if need > room:
            cut.append(f"{w.objectName() or type(w).__name__} {w.text()!r} {need} > {room}")
    return cut


@pytest.mark.parametrize("zoom", [1.0, 2.0])
def test_no_chinese_text_is_cut_off(qtbot, make_window, chinese, restore_app_look,
                                    tmp_path, zoom) -> None:
    w = make_window()
    w.tabs.setCurrentWidget(w.playground)
    w.presentation.set_zoom(zoom)
    settled(lambda: (w.frameGeometry(), w.playground.forms.geometry()))
    forms = w.playground.forms
    bar = forms.tabBar()
    for i in range(forms.count()):
        forms.setCurrentIndex(i)
        settled(lambda: (forms.currentWidget().geometry(), _cut_off(forms.currentWidget())))
        text = bar.fontMetrics().horizontalAdvance(bar.tabText(i))
        assert bar.tabRect(i).width() > text, (zoom, bar.tabText(i))
        assert not _cut_off(forms.currentWidget()), (zoom, i, _cut_off(forms.currentWidget()))
        forms.grab().save(str(tmp_path / f"forms-{i}-{round(zoom * 100)}.png"))
    assert not _cut_off(w.playground.code_bar)
    assert not _cut_off(w.playground.log)
    assert CJK.search(w.playground.log.findChild(QLabel, "outcomesHint").text())  # the hint


def test_the_cut_off_check_finds_a_squeezed_button(qtbot) -> None:
    root = QWidget()
    qtbot.addWidget(root)
    button = QPushButton("参数所在设备", root)
    root.show()
    button.resize(button.sizeHint().width() // 2, button.sizeHint().height())
    assert len(_cut_off(root)) == 1
    button.resize(button.sizeHint())
    assert _cut_off(root) == []


def test_a_modifier_combo_gives_form_text_its_own_as_is(qtbot, chinese) -> None:
    from gpumon.playground.data.form_text import AS_IS
    from gpumon.ui.playground.form_keys import modifier

    combo = QComboBox()
    qtbot.addWidget(combo)
    combo.addItems(["（不变）", ".cpu()"])
    assert modifier(combo) == AS_IS
    combo.setCurrentIndex(1)
    assert modifier(combo) == ".cpu()"


def test_cards_already_in_the_log_follow_the_zoom(qtbot, make_window, chinese,
                                                  restore_app_look) -> None:
    """A card's style sheet styles its labels, which kept their 100 % font at 200 %."""
    w = make_window()
    w.tabs.setCurrentWidget(w.playground)
    log = w.playground.log
    entry = log.add(Outcome(act.IsAvailable(), "torch.cuda.is_available()", True, 0.0, 0.001,
                            preview="False"))
    qtbot.waitUntil(entry.body.isVisible, timeout=5000)
    before = entry.body.font().pointSizeF()
    w.presentation.set_zoom(2.0)
    settled(lambda: [wd.font().pointSizeF() for wd in (entry.code_label, entry.body)])
    for widget in (entry.code_label, entry.body, entry.copy_button, entry.tag):
        assert widget.font().pointSizeF() == pytest.approx(2 * before), widget.objectName()


def test_running_then_stop_speak_chinese(qtbot, zh_panel: PlaygroundPage, tmp_path) -> None:
    from gpumon.playground.data.actions import RunCode

    mark = tmp_path / "sleeping"
    code = touch_line(mark) + "import time\ntime.sleep(20)"
    zh_panel.submit(RunCode(code))
    zh_panel.submit(act.IsAvailable())
    assert zh_panel.busy_label.text() == f"正在运行 {code} · 还有 1 个在排队"
    qtbot.waitUntil(lambda: zh_panel.code_bar.stop_button.isEnabled(), timeout=5000)
    qtbot.waitUntil(mark.exists, timeout=30000)  # the sleep runs in the kernel now
    qtbot.mouseClick(zh_panel.code_bar.stop_button, Qt.MouseButton.LeftButton)
    assert zh_panel.busy_label.text().startswith("正在停止…")
    qtbot.waitUntil(lambda: zh_panel.log.count() == 2, timeout=20000)
    stopped = zh_panel.log.entries()[1]
    assert stopped.outcome.code == code
    assert stopped.outcome.error is not None
    assert stopped.outcome.error.type_name == "KeyboardInterrupt"
    assert stopped.tag.text() == "已停止"
    assert "KeyboardInterrupt: 已被“停止”按钮中断。" in _plain(stopped.body.text())
