"""The playground page: forms → kernel → log, workspace table, busy state, order.

The panel runs real actions on the CPU build of torch through the window's KernelLink.
Errors are compared with the message torch itself raises in this process.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
import torch
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QLineEdit, QPushButton
from qt_fixtures import monitor_fitted
from testkit import torch_error

from gpumon.playground.data import actions as act
from gpumon.ui.playground.page import PlaygroundPage
from gpumon.ui.playground.style import ERROR_COLOR, device_color

NAMES = ("playgroundPanel", "playgroundStatus", "actionForms", "workspaceTable", "outcomeLog",
         "deviceCombo", "dtypeCombo", "nameEdit", "valuesEdit", "fillCombo", "shapeEdit",
         "runCreateButton", "runFillButton", "moveSourceCombo", "moveHowCombo",
         "moveDeviceCombo", "moveIndexSpin", "moveDestEdit", "runMoveButton",
         "computeResultEdit", "computeOpCombo", "computeACombo", "computeAModCombo",
         "computeBCombo", "computeBModCombo", "runComputeButton", "modelNameCombo",
         "modelInSpin", "modelOutSpin", "modelBiasCheck", "modelDeviceCombo", "runModelButton",
         "runModelMoveButton", "runParamsButton", "callResultEdit", "callInputCombo",
         "callInputModCombo", "runCallButton", "queryIndexSpin", "queryNameCombo",
         "runIsAvailableButton", "runDeviceCountButton", "runCurrentDeviceButton",
         "runVersionsButton", "runDeviceNameButton", "runDevicePropsButton",
         "runTensorDeviceButton", "runDeleteButton", "runEmptyCacheButton", "busyBar",
         "busyLabel")


@pytest.fixture
def panel(qtbot, make_window) -> PlaygroundPage:
    window = make_window()
    pg = window.playground
    window.tabs.setCurrentWidget(pg)  # borrows the graphs and starts loading torch
    qtbot.waitUntil(lambda: bool(window.kernel_link.device_options), timeout=30000)
    return pg


def click(qtbot, panel: PlaygroundPage, name: str) -> None:
    qtbot.mouseClick(panel.findChild(QPushButton, name), Qt.MouseButton.LeftButton)


def wait_log(qtbot, panel: PlaygroundPage, count: int) -> None:
    qtbot.waitUntil(lambda: panel.log.count() >= count, timeout=20000)


def test_every_widget_has_a_stable_name(make_window) -> None:
    window = make_window(show=False)
    assert window.findChild(object, "playgroundPanel") is None  # built on first use
    assert window.playground.objectName() == "playgroundPanel"
    for name in NAMES:
        widget = window.findChild(object, name)
        assert widget is not None, name
        if name not in ("playgroundPanel",):
            assert widget.accessibleName() or widget.toolTip() or name.endswith(
                ("Edit", "Spin", "Combo", "Check", "Bar")), name
    assert window.tabs.tabText(window.tabs.indexOf(window.playground)) == "Playground"
    assert not window.kernel_link.running  # nothing started until the playground is used


def test_window_opens_without_importing_torch() -> None:
    code = ("import os, sys; os.environ['QT_QPA_PLATFORM'] = 'offscreen';"
            "from PySide6.QtWidgets import QApplication; app = QApplication([]);"
            "from gpumon.telemetry.sources.simulated import SimulatedSource;"
            "from gpumon.ui.window.main_window import MainWindow;"
            "w = MainWindow(lambda: SimulatedSource(2)); w.show(); app.processEvents();"
            "print('torch' in sys.modules, w.playground.objectName()); w.close()")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, check=False)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "playgroundPanel"]


def test_create_square_and_table(qtbot, panel: PlaygroundPage) -> None:
    assert "PyTorch" in panel.status_label.text() and "cpu" in panel.status_label.text()
    devices = panel.findChild(QComboBox, "deviceCombo")
    assert devices.isEditable()
    assert [devices.itemText(i) for i in range(devices.count())] == [
        "cpu", "cuda:0 — not available here", "meta"]
    click(qtbot, panel, "runCreateButton")  # x = torch.tensor([1, 2, 3])
    wait_log(qtbot, panel, 1)
    panel.findChild(QComboBox, "computeACombo").setEditText("x")
    click(qtbot, panel, "runComputeButton")  # y = x ** 2
    wait_log(qtbot, panel, 2)
    newest, first = panel.log.entries()
    assert first.outcome.code == "x = torch.tensor([1, 2, 3])"
    assert newest.outcome.code == "y = x ** 2"
    assert newest.outcome.preview == repr(torch.tensor([1, 2, 3]) ** 2)
    assert newest.tag.text() == "cpu" and newest.color == device_color("cpu")
    assert "tensor([1, 4, 9])" in newest.body.text() and "took" in newest.body.text()
    assert newest.code_label.textInteractionFlags() & Qt.TextInteractionFlag.TextSelectableByMouse
    qtbot.waitUntil(lambda: panel.workspace_table.rowCount() == 2, timeout=5000)
    assert panel.workspace_table.row_texts() == [
        ("x", "tensor", "(3,)", "int64", "cpu", "24 B"),
        ("y", "tensor", "(3,)", "int64", "cpu", "24 B")]
    newest.copy_button.click()
    from PySide6.QtGui import QGuiApplication

    assert QGuiApplication.clipboard().text() == "y = x ** 2"


def test_cuda_on_cpu_build_shows_torchs_own_error(qtbot, panel: PlaygroundPage) -> None:
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA; tests/gpu covers it")
    expected = torch_error(lambda: torch.tensor([1, 2, 3], device="cuda:0"))
    panel.findChild(QComboBox, "deviceCombo").setEditText("cuda:0")
    click(qtbot, panel, "runCreateButton")
    wait_log(qtbot, panel, 1)
    entry = panel.log.entries()[0]
    err = entry.outcome.error
    assert (err.type_name, err.message) == expected
    assert "Torch not compiled with CUDA enabled" in err.message
    assert "CPU-only build" in err.explanation
    assert entry.tag.text() == "error" and entry.color == ERROR_COLOR
    assert err.message in entry.plain_text()


def test_wrong_device_strings_get_clear_messages(qtbot, panel: PlaygroundPage) -> None:
    combo = panel.findChild(QComboBox, "deviceCombo")
    for i, text in enumerate(("gpu", "cuda:-1", "cuda:abc"), start=1):
        combo.setEditText(text)
        click(qtbot, panel, "runCreateButton")
        wait_log(qtbot, panel, i)
    cuda_abc, cuda_minus, gpu = panel.log.outcomes()
    expected = torch_error(lambda: torch.device("gpu"))
    assert (gpu.error.type_name, gpu.error.message) == expected
    assert "'gpu' is not one" in gpu.error.explanation
    for outcome, text in ((cuda_minus, "cuda:-1"), (cuda_abc, "cuda:abc")):
        assert outcome.error.message == torch_error(lambda t=text: torch.device(t))[1]
        assert "not a device name torch accepts" in outcome.error.explanation


def test_cpu_plus_meta_error_names_both_devices(qtbot, panel: PlaygroundPage) -> None:
    panel.submit(act.CreateTensor("x", "[1.0, 2.0, 3.0]"))
    panel.submit(act.CreateFilled("m", "zeros", (3,), device="meta"))
    panel.findChild(QComboBox, "computeOpCombo").setCurrentText("a + b")
    panel.findChild(QComboBox, "computeACombo").setEditText("x")
    panel.findChild(QComboBox, "computeBCombo").setEditText("m")
    panel.findChild(QLineEdit, "computeResultEdit").setText("z")
    click(qtbot, panel, "runComputeButton")
    wait_log(qtbot, panel, 3)
    outcome = panel.log.outcomes()[0]
    expected = torch_error(lambda: torch.tensor([1.0, 2.0, 3.0]) + torch.zeros(3, device="meta"))
    assert outcome.code == "z = x + m"
    assert (outcome.error.type_name, outcome.error.message) == expected
    assert [op.device for op in outcome.operands] == ["cpu", "meta"]
    text = panel.log.entries()[0].body.text()
    assert "x on cpu" in text and "m on meta" in text and "different devices" in text


def test_log_keeps_every_entry_newest_first_and_order_holds(qtbot,
                                                           panel: PlaygroundPage) -> None:
    codes = []
    for i in range(12):
        action = act.CreateFilled(f"t{i}", "arange", (i + 1,))
        codes.append(action.code())
        panel.submit(action)  # queued faster than they run
    wait_log(qtbot, panel, 12)
    assert [o.code for o in panel.log.outcomes()] == codes[::-1]
    assert [e.outcome.started_at for e in panel.log.entries()] == sorted(
        (o.started_at for o in panel.log.outcomes()), reverse=True)
    qtbot.waitUntil(lambda: panel.workspace_table.rowCount() == 12, timeout=5000)


def test_busy_state_while_an_action_runs(qtbot, panel: PlaygroundPage) -> None:
    panel.submit(act.CreateFilled("a", "randn", (1200, 1200)))
    button = panel.findChild(QPushButton, "runComputeButton")
    panel.submit(act.Compute("b", "matmul", "a", "a"))
    panel.submit(act.Compute("c", "matmul", "a", "a"))
    assert panel.kernel_link.busy
    assert button.property("busy") is True and button.isEnabled()  # a click still queues
    assert not panel.busy_bar.isHidden()
    assert panel.busy_label.text().startswith("running a = torch.randn(1200, 1200)")
    assert "2 queued" in panel.busy_label.text()
    wait_log(qtbot, panel, 3)
    qtbot.waitUntil(lambda: not panel.kernel_link.busy, timeout=5000)
    assert button.property("busy") is False and panel.busy_bar.isHidden()
    assert panel.busy_label.text() == ""


def test_model_on_a_device_lists_parameters_and_calls(qtbot, panel: PlaygroundPage) -> None:
    panel.submit(act.CreateTensor("x", "[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]"))
    click(qtbot, panel, "runModelButton")  # net = nn.Linear(3, 1)
    click(qtbot, panel, "runParamsButton")
    click(qtbot, panel, "runCallButton")  # out = net(x)
    wait_log(qtbot, panel, 4)
    call, params, model, _ = panel.log.outcomes()
    assert model.ok and model.code == "net = nn.Linear(3, 1)"
    assert params.ok and "cpu" in params.preview
    assert call.ok and call.shape == (2, 1) and call.device == "cpu" and call.grad_fn


def test_shape_typo_is_caught_in_the_form(qtbot, panel: PlaygroundPage) -> None:
    panel.findChild(QLineEdit, "shapeEdit").setText("2, x")
    click(qtbot, panel, "runFillButton")
    error = panel.forms.error_label
    assert not error.isHidden() and "whole numbers" in error.text()
    assert panel.log.count() == 0


def test_graphs_follow_the_current_tab(qtbot, make_window) -> None:
    from PySide6.QtWidgets import QSplitter

    w = make_window()
    qtbot.waitUntil(lambda: w.snapshot_count >= 1, timeout=5000)
    monitor = w.findChild(QSplitter, "monitorPage")
    qtbot.waitUntil(lambda: monitor_fitted(w), timeout=5000)  # its parts fit the first rows
    sizes = monitor.sizes()
    w.tabs.setCurrentWidget(w.playground)
    # the grid moves once the frame that answers the tab is painted
    qtbot.waitUntil(lambda: w.gpu_grid.parent() is w.playground.graphs, timeout=3000)
    assert w.gpu_grid.isVisible()
    assert monitor.sizes() == sizes  # a stand-in keeps the grid's place on the Monitor
    w.tabs.setCurrentIndex(0)
    qtbot.waitUntil(lambda: monitor.widget(0) is w.gpu_grid, timeout=3000)
    assert w.gpu_grid.isVisible()
    assert monitor.sizes() == sizes
    before = w.snapshot_count
    qtbot.waitUntil(lambda: w.snapshot_count >= before + 2, timeout=5000)
    assert len(w.gpu_grid.panels) == 4


def test_spaces_around_a_typed_device_are_stripped(qtbot, panel: PlaygroundPage) -> None:
    panel.findChild(QComboBox, "deviceCombo").setEditText(" cpu  ")
    click(qtbot, panel, "runCreateButton")
    wait_log(qtbot, panel, 1)
    panel.findChild(QComboBox, "moveHowCombo").setCurrentText(".to(device)")
    panel.findChild(QComboBox, "moveDeviceCombo").setEditText("meta ")
    panel.findChild(QComboBox, "moveSourceCombo").setEditText("x")
    panel.findChild(QLineEdit, "moveDestEdit").setText("m")
    click(qtbot, panel, "runMoveButton")
    wait_log(qtbot, panel, 2)
    moved, created = panel.log.outcomes()
    assert created.ok and created.code == "x = torch.tensor([1, 2, 3], device='cpu')"
    assert moved.ok and moved.code == "m = x.to('meta')" and moved.device == "meta"
