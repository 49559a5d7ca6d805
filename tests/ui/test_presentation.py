"""Zoom, themes, full screen, shortcuts and the about box, on a window of simulated GPUs."""

from __future__ import annotations

import sys
import types

import pyqtgraph as pg
import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QColor, QPalette
from PySide6.QtWidgets import QApplication, QLineEdit, QPushButton

from gpumon.playground.data.devices import DeviceOption
from gpumon.playground.data.outcome import LoadStatus
from gpumon.telemetry.sources.simulated import SimulatedSource
from gpumon.ui.widgets.theme import DARK, LIGHT
from gpumon.ui.window.about import (
    SHORTCUTS,
    InfoBox,
    about_text,
    show_about,
    show_shortcuts,
    versions,
)

# Zoom and theme are application-wide: the 100 % light look comes back after each test.
pytestmark = pytest.mark.usefixtures("restore_app_look")


def _active(qtbot, w) -> None:
    """Make ``w`` the active window. The offscreen platform now and then ignores a single
    request right after another test's window closed (about 1 run in 10), so ask again."""
    def active() -> bool:
        if not w.isActiveWindow():
            w.raise_()
            w.activateWindow()
        return w.isActiveWindow()

    qtbot.waitUntil(active, timeout=5000)


def _trigger(w, name: str) -> None:
    action = w.findChild(QAction, name)
    assert action is not None, name
    action.trigger()


def _bg(plot: pg.PlotWidget) -> str:
    return plot.backgroundBrush().color().name()


def test_zoom_in_out_reset_scales_fonts_within_bounds(qtbot, make_window):
    w = make_window(show=False)
    base = QApplication.font().pointSizeF()
    _trigger(w, "actionZoomIn")
    assert QApplication.font().pointSizeF() > base
    qtbot.waitUntil(lambda: w.font().pointSizeF() > base, timeout=2000)  # font change events
    assert w.settings.zoom == w.presentation.zoom > 1.0
    _trigger(w, "actionZoomOut")
    _trigger(w, "actionZoomOut")
    assert QApplication.font().pointSizeF() < base
    _trigger(w, "actionZoomReset")
    assert QApplication.font().pointSizeF() == pytest.approx(base)
    for _ in range(30):
        _trigger(w, "actionZoomIn")
    assert w.presentation.zoom == 3.0
    for _ in range(30):
        _trigger(w, "actionZoomOut")
    assert w.presentation.zoom == 0.5


def test_zoom_scales_graph_ticks_and_curves(qtbot, make_window):
    w = make_window()
    qtbot.waitUntil(lambda: w.gpu_panel(0) is not None, timeout=5000)
    plot = w.gpu_panel(0).memory_plot
    before = plot.getAxis("left").style["tickFont"].pointSizeF()
    width = plot.listDataItems()[0].opts["pen"].widthF()
    w.presentation.set_zoom(2.0)
    # the graphs take their new fonts and pens after the frame that answers the zoom
    qtbot.waitUntil(lambda: plot.getAxis("left").style["tickFont"].pointSizeF()
                    == pytest.approx(2 * before), timeout=3000)
    assert plot.listDataItems()[0].opts["pen"].widthF() == pytest.approx(2 * width)
    w.presentation.reset_zoom()
    qtbot.waitUntil(lambda: plot.listDataItems()[0].opts["pen"].widthF()
                    == pytest.approx(width), timeout=3000)


def test_theme_changes_palette_and_plots_including_new_panels(qtbot, make_window):
    w = make_window()
    qtbot.waitUntil(lambda: w.gpu_panel(3) is not None, timeout=5000)
    assert _bg(w.gpu_panel(0).memory_widget) == LIGHT.plot_bg
    _trigger(w, "actionThemeDark")
    qtbot.waitUntil(  # palette change events reach the widgets through the event loop
        lambda: w.palette().color(QPalette.ColorRole.Window) == QColor(DARK.window),
        timeout=2000)
    assert QApplication.palette().color(QPalette.ColorRole.Text) == QColor(DARK.text)
    for i in range(4):
        assert _bg(w.gpu_panel(i).memory_widget) == DARK.plot_bg
        assert _bg(w.gpu_panel(i).util_widget) == DARK.plot_bg
    assert w.settings.theme == "dark"
    old = w.gpu_panel(0)
    with qtbot.waitSignal(w.gpuPanelsChanged, timeout=5000):
        w.switch_source(lambda: SimulatedSource(2, seed=7))
    qtbot.waitUntil(lambda: w.gpu_panel(0) is not None and w.gpu_panel(0) is not old,
                    timeout=5000)
    assert _bg(w.gpu_panel(0).memory_widget) == DARK.plot_bg
    assert w.gpu_panel(0).memory_plot.getAxis("left").textPen().color() == QColor(DARK.plot_fg)
    _trigger(w, "actionThemeLight")
    assert _bg(w.gpu_panel(1).util_widget) == LIGHT.plot_bg
    assert w.findChild(QAction, "actionThemeLight").isChecked()


def test_keyboard_shortcuts(qtbot, make_window):
    w = make_window()
    _active(qtbot, w)
    p = w.presentation
    qtbot.keyClick(w, Qt.Key.Key_Equal, Qt.KeyboardModifier.ControlModifier)
    assert p.zoom > 1.0
    qtbot.keyClick(w, Qt.Key.Key_0, Qt.KeyboardModifier.ControlModifier)
    assert p.zoom == 1.0
    qtbot.keyClick(w, Qt.Key.Key_Minus, Qt.KeyboardModifier.ControlModifier)
    assert p.zoom < 1.0
    qtbot.keyClick(w, Qt.Key.Key_F11)
    assert w.isFullScreen()
    assert w.findChild(QAction, "actionFullScreen").isChecked()
    qtbot.keyClick(w, Qt.Key.Key_F11)
    assert not w.isFullScreen()
    w.gpu_grid.setFocus()  # not a button: a focused button takes the space bar itself
    qtbot.waitUntil(w.gpu_grid.hasFocus, timeout=3000)
    qtbot.keyClick(w, Qt.Key.Key_Space)
    assert w.paused and w.controls.pause_button.isChecked()
    qtbot.keyClick(w, Qt.Key.Key_Space)
    assert not w.paused
    qtbot.keyClick(w, Qt.Key.Key_Q, Qt.KeyboardModifier.ControlModifier)
    assert not w.isVisible()


def test_space_types_into_text_fields_and_presses_buttons(qtbot, make_window):
    w = make_window()
    field = QLineEdit()
    button = QPushButton("Run")
    clicks: list[bool] = []
    button.clicked.connect(lambda: clicks.append(True))
    page = QLineEdit()
    w.add_page(page, "Typing")
    w.controls.addWidget(field)
    w.controls.addWidget(button)
    _active(qtbot, w)
    field.setFocus()
    qtbot.waitUntil(field.hasFocus, timeout=3000)
    qtbot.keyClicks(field, "a b")
    assert field.text() == "a b"
    assert not w.paused
    button.setFocus()
    qtbot.waitUntil(button.hasFocus, timeout=3000)
    qtbot.keyClick(button, Qt.Key.Key_Space)
    assert clicks == [True] and not w.paused
    w.gpu_grid.setFocus()
    qtbot.waitUntil(w.gpu_grid.hasFocus, timeout=3000)
    qtbot.keyClick(w.gpu_grid, Qt.Key.Key_Space)
    assert w.paused


def test_about_box_lists_versions(qtbot, make_window):
    w = make_window()
    qtbot.waitUntil(lambda: w.latest_snapshot is not None, timeout=5000)
    _active(qtbot, w)
    qtbot.keyClick(w, Qt.Key.Key_F1)
    box = w.findChild(InfoBox, "aboutDialog")
    assert box is not None and box.isVisible()
    text = box.text()
    for word in ("gpumon", "Python", "Qt / PySide6", "pyqtgraph", "PyTorch", "NVIDIA driver",
                 "CUDA", "NVML", "simulated"):
        assert word in text, word
    box.close()
    box2 = show_about(w, w.latest_snapshot)
    assert box2.objectName() == "aboutDialog"
    box2.close()


def test_about_box_names_torch_from_the_kernel_never_from_this_process(monkeypatch) -> None:
    """The window never imports torch: a torch in this process's modules is not what the
    About box reports; the kernel's answer to "load" (its version, build and devices) is."""
    stand_in = types.ModuleType("torch")
    stand_in.__version__ = "9.9.9"  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "torch", stand_in)
    assert dict(versions(None))["PyTorch"].startswith("not loaded yet")
    cpu = [DeviceOption("cpu", "cpu — main memory"),
           DeviceOption("cuda:0", "cuda:0 — not available here", available=False),
           DeviceOption("meta", "meta — shapes only, no data (no GPU here)")]
    facts = dict(versions(None, (LoadStatus(True, "PyTorch 2.13.0+cpu", "2.13.0+cpu"), cpu)))
    assert facts["PyTorch"] == "2.13.0+cpu (CPU-only build)"
    assert facts["PyTorch devices"] == ("cpu — main memory; meta — shapes only, no data "
                                        "(no GPU here)")
    gpu = [DeviceOption("cuda:0", "cuda:0 — NVIDIA H200 (139.8 GiB)"), cpu[0]]
    facts = dict(versions(None, (LoadStatus(True, "PyTorch 2.13.0", "2.13.0", "12.8"), gpu)))
    assert facts["PyTorch"] == "2.13.0 (built for CUDA 12.8)"
    assert facts["PyTorch devices"].startswith("cuda:0 — NVIDIA H200")
    broken = dict(versions(None, (LoadStatus(False, "No module named 'torch'"), ())))
    assert broken["PyTorch"] == "not usable: No module named 'torch'"
    assert "PyTorch devices" not in broken
    assert "9.9.9" not in about_text(None)


@pytest.mark.slow
def test_about_box_shows_the_kernels_torch_once_loaded(qtbot, make_window) -> None:
    w = make_window()
    _trigger(w, "actionAbout")
    box = w.findChild(InfoBox, "aboutDialog")
    assert "not loaded yet" in box.text()
    box.close()
    w.tabs.setCurrentWidget(w.playground)  # the kernel loads torch
    qtbot.waitUntil(lambda: bool(w.kernel_link.device_options), timeout=60000)
    status = w.kernel_link.load_status
    assert status is not None and status.ok and status.torch_version
    qtbot.waitUntil(lambda: w.findChild(InfoBox, "aboutDialog") is None, timeout=5000)
    _trigger(w, "actionAbout")
    box = w.findChild(InfoBox, "aboutDialog")
    text = box.text()
    assert status.torch_version in text and "not loaded yet" not in text
    assert ("CPU-only build" in text) == (status.cuda_version is None)
    assert "PyTorch devices" in text and "cpu — main memory" in text
    box.close()


def test_help_menu_lists_every_shortcut(make_window):
    w = make_window(show=False)
    _trigger(w, "actionShortcuts")
    box = w.findChild(InfoBox, "shortcutsDialog")
    assert box is not None
    for keys, _ in SHORTCUTS:
        assert keys.split(" ")[0] in box.text()
    box.close()
    names = {a.objectName() for a in w.findChildren(QAction)}
    assert {"actionZoomIn", "actionZoomOut", "actionZoomReset", "actionFullScreen",
            "actionThemeDark", "actionThemeLight", "actionAbout", "actionQuit",
            "actionPause"} <= names


def test_window_icon_from_resources(qapp):
    from gpumon.ui.window.launch import _icon

    icon = _icon()
    assert icon is not None and not icon.pixmap(64, 64).isNull()


@pytest.mark.parametrize("zoom", [1.0, 2.0, 3.0])
def test_the_about_box_and_the_shortcuts_fit_the_screen(qtbot, make_window, zoom) -> None:
    """At 200 % the list of shortcuts, a message box, was 1344 px high on a 1000 px screen,
    at 300 % 3078 (issue 54's walk): now it scrolls within the screen."""
    w = make_window()
    w.presentation.set_zoom(zoom)
    for box in (show_about(w, w.latest_snapshot), show_shortcuts(w)):
        qtbot.waitExposed(box)
        area = box.screen().availableGeometry()
        assert area.contains(box.frameGeometry()), (box.objectName(), box.frameGeometry())
        bar = box.browser.verticalScrollBar()
        # the whole text can be read: in sight, or by scrolling
        assert bar.maximum() == 0 or bar.isVisible()
        if zoom == 1.0:  # where the screen has room, all of it in sight
            assert bar.maximum() == 0, box.objectName()
        box.close()
