"""The playground's forms with the keyboard: Enter runs the form, the Move form shows only
the field its method takes, device lists offer cuda:i even where torch has none, and a
malformed value is explained in plain words under its field, across the form."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QComboBox, QLineEdit, QPushButton, QWidget

from gpumon.playground.data import actions as act
from gpumon.playground.data.device_offer import offered
from gpumon.playground.data.devices import DeviceOption
from gpumon.ui.playground.forms import ActionForms


@pytest.fixture
def forms(qtbot) -> ActionForms:
    f = ActionForms()
    qtbot.addWidget(f)
    f.resize(560, 360)
    f.show()
    qtbot.waitExposed(f)
    return f


def _emitted(forms: ActionForms) -> list[act.Action]:
    out: list[act.Action] = []
    forms.actionRequested.connect(out.append)
    return out


def test_enter_in_a_field_runs_that_form(qtbot, forms: ActionForms) -> None:
    got = _emitted(forms)
    qtbot.keyClick(forms.values_edit, Qt.Key.Key_Return)
    qtbot.keyClick(forms.shape_edit, Qt.Key.Key_Enter, Qt.KeyboardModifier.KeypadModifier)
    qtbot.keyClick(forms.device_combo.lineEdit(), Qt.Key.Key_Return)
    forms.setCurrentIndex(1)
    qtbot.keyClick(forms.move_dest, Qt.Key.Key_Return)
    forms.setCurrentIndex(3)
    qtbot.keyClick(forms.model_in, Qt.Key.Key_Return)
    qtbot.keyClick(forms.call_result, Qt.Key.Key_Return)
    assert [type(a).__name__ for a in got] == [
        "CreateTensor", "CreateFilled", "CreateTensor", "Move", "CreateModel", "CallModel"]
    assert forms.device_combo.count() == 1  # Enter did not add the typed text as an item


def test_move_form_shows_only_the_field_its_method_takes(forms: ActionForms) -> None:
    forms.setCurrentIndex(1)
    seen = {}
    for how in (".to(device)", ".cuda(index)", ".cuda()", ".cpu()"):
        forms.move_how.setCurrentText(how)
        seen[how] = (forms.move_device.isVisible(), forms.move_index.isVisible())
    assert seen == {".to(device)": (True, False), ".cuda(index)": (False, True),
                    ".cuda()": (False, False), ".cpu()": (False, False)}


def test_device_lists_offer_cuda_0_marked_not_available(forms: ActionForms) -> None:
    torch_devices = [DeviceOption("cpu", "cpu — main memory"), DeviceOption("meta", "meta")]
    forms.set_devices(offered(torch_devices, 2))
    for combo in forms.device_combos:
        assert [combo.itemText(i) for i in range(combo.count())] == [
            "cpu", "cuda:0 — not available here", "cuda:1 — not available here", "meta"]
    got = _emitted(forms)
    forms.device_combo.setCurrentIndex(1)
    forms.findChild(QPushButton, "runCreateButton").click()
    assert isinstance(got[-1], act.CreateTensor) and got[-1].device == "cuda:0"


def _below(widget: QWidget, other: QWidget, root: QWidget) -> bool:
    return widget.mapTo(root, QPoint(0, 0)).y() >= other.mapTo(root, QPoint(0, other.height())).y()


@pytest.mark.parametrize(("field", "text", "words", "then"), [
    ("values_edit", "[1, 2", ("[ at character 1 is never closed",), "fill_combo"),
    ("values_edit", "two", ("found 'two' at character 1",), "fill_combo"),
    ("shape_edit", "two", ("'two' at character 1 is not a whole number",), "runCreateButton"),
])
def test_a_malformed_value_is_explained_under_its_field_across_the_form(
        qtbot, forms: ActionForms, field: str, text: str, words: tuple[str, ...],
        then: str) -> None:
    got = _emitted(forms)
    edit: QLineEdit = getattr(forms, field)
    width = forms.width()
    edit.setText(text)
    qtbot.keyClick(edit, Qt.Key.Key_Return)
    error = forms.error_label
    qtbot.waitUntil(error.isVisible, timeout=5000)  # the sentence under the fields
    assert not got
    assert all(w in error.text() for w in words), error.text()
    assert "<unknown>" not in error.text() and "line 1" not in error.text()
    page = forms.currentWidget()
    assert _below(error, edit, page)  # under the field ...
    next_row = getattr(forms, then, None) or forms.findChild(QWidget, then)
    assert _below(next_row, error, page)  # ... and above the next row
    label_column = forms.findChild(QComboBox, "deviceCombo")
    assert error.width() > edit.width() + label_column.width()  # across the form
    assert error.mapTo(page, QPoint(0, 0)).x() < edit.mapTo(page, QPoint(0, 0)).x()
    assert forms.width() == width  # it does not push the form sideways


def test_cpu_only_learner_picks_cuda_0_and_reads_torchs_error(qtbot, make_window) -> None:
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("torch has CUDA here; cuda:0 is a real device")
    w = make_window()
    panel = w.playground
    w.tabs.setCurrentWidget(panel)
    qtbot.waitUntil(lambda: bool(w.kernel_link.device_options), timeout=30000)
    combo = panel.forms.device_combo
    index = combo.findText("cuda:0 — not available here")
    assert index >= 0
    combo.setCurrentIndex(index)
    qtbot.keyClick(panel.forms.values_edit, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: panel.log.count() >= 1, timeout=20000)
    out = panel.log.outcomes()[0]
    assert out.code == "x = torch.tensor([1, 2, 3], device='cuda:0')"
    assert out.error is not None and out.error.by_torch
    assert "CPU-only build" in out.error.explanation
