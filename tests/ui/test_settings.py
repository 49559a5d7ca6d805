"""Settings remembered with QSettings, always in a temporary INI file in these tests."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pyqtgraph as pg
import pytest
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QApplication

from gpumon.telemetry.sources.simulated import SimulatedSource
from gpumon.ui.widgets.theme import LIGHT
from gpumon.ui.window.main_window import MainWindow
from gpumon.ui.window.presentation import base_font_and_palette
from gpumon.ui.window.settings import Settings


@pytest.fixture
def open_window(qtbot, qapp: QApplication) -> Iterator[Callable[..., MainWindow]]:
    windows: list[MainWindow] = []

    def make(settings: Settings, show: bool = False) -> MainWindow:
        w = MainWindow(lambda: SimulatedSource(4, seed=1), 0.1, window_s=60,
                       settings=settings)
        qtbot.addWidget(w)
        if show:
            w.show()
        windows.append(w)
        return w

    yield make
    for w in windows:
        w.close()
    font, palette = base_font_and_palette()
    qapp.setFont(font)
    qapp.setPalette(palette)
    pg.setConfigOptions(background=LIGHT.plot_bg, foreground=LIGHT.plot_fg)


def test_defaults_and_nonsense_values(tmp_path):
    memory = Settings.memory()
    assert memory.file_name == ""
    assert (memory.theme, memory.zoom, memory.interval_s, memory.window_s) == \
        ("system", 1.0, None, None)
    path = tmp_path / "gpumon.ini"
    path.write_text("[view]\ntheme=purple\nzoom=abc\n[sampling]\ninterval_s=nan\n")
    s = Settings.ini(path)
    assert (s.theme, s.zoom, s.interval_s, s.hidden_gpus) == ("system", 1.0, None, set())
    with pytest.raises(ValueError):
        s.theme = "purple"
    s.zoom = 99
    assert s.zoom == 3.0


def test_window_without_settings_remembers_nothing_on_disk(open_window):
    w = open_window(Settings.memory())
    assert w.settings.file_name == ""


def test_settings_round_trip(qtbot, open_window, tmp_path, monkeypatch):
    path = tmp_path / "gpumon.ini"
    w = open_window(Settings.ini(path), show=True)
    qtbot.waitUntil(lambda: w.gpu_panel(3) is not None, timeout=5000)
    uuid1 = w.gpu_panel(1).info.uuid
    w.controls.interval_spin.setValue(0.5)
    w.set_window(300)
    w.presentation.set_theme("dark")
    w.presentation.set_zoom(1.5)
    w.findChild(QAction, "actionShowGpu1").setChecked(False)
    assert not w.gpu_panel(1).isVisible() and len(w.gpu_grid.shown_panels()) == 3
    w.resize(1350, 800)
    w.close()

    again = Settings.ini(path)  # a fresh QSettings reads the file
    assert again.hidden_gpus == {uuid1}
    assert again.geometry is not None
    restored: list[bytes] = []
    original = MainWindow.restoreGeometry
    monkeypatch.setattr(MainWindow, "restoreGeometry",
                        lambda self, g: restored.append(bytes(g)) or original(self, g))
    w2 = open_window(again, show=True)
    assert w2.interval_s == 0.5 and w2.controls.interval_spin.value() == 0.5
    assert w2.window_s == 300 and w2.controls.window_combo.currentData() == 300
    assert w2.presentation.theme.name == "dark"
    assert w2.findChild(QAction, "actionThemeDark").isChecked()
    assert w2.presentation.zoom == 1.5
    # The offscreen screen is 800 px square, so Qt clamps the size; the bytes are ours.
    assert restored == [bytes(again.geometry)]
    qtbot.waitUntil(lambda: w2.gpu_panel(3) is not None, timeout=5000)
    assert not w2.gpu_panel(1).isVisible() and w2.gpu_panel(0).isVisible()
    assert not w2.findChild(QAction, "actionShowGpu1").isChecked()
    w2.findChild(QAction, "actionShowGpu1").setChecked(True)
    assert Settings.ini(path).hidden_gpus == set()
    assert len(w2.gpu_grid.shown_panels()) == 4
