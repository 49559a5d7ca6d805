"""The "System" theme, the default: light or dark as the desktop is, and following a switch
while the window is open (gpumon/ui/widgets/color_scheme.py).

Qt's offscreen platform has no colour scheme (``QStyleHints.colorScheme`` stays Unknown and
``setColorScheme`` changes nothing), so there the desktop's switch arrives as a palette
change gpumon did not make; where the platform takes ``setColorScheme``, that drives it.
The dark theme covers every note: the cluster window's Playground note is dark in it.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QColor, QPalette
from PySide6.QtWidgets import QApplication, QLabel

from gpumon.ssh.command import SshOptions
from gpumon.ssh.target import Target
from gpumon.telemetry.cluster.prometheus import PrometheusSource
from gpumon.ui.widgets.color_scheme import palette_is_dark
from gpumon.ui.widgets.theme import DARK, LIGHT
from gpumon.ui.window.cluster_window import ClusterWindow
from gpumon.ui.window.remote_window import RemoteWindow
from gpumon.ui.window.settings import Settings

pytestmark = pytest.mark.usefixtures("restore_app_look")


def _desktop_palette(window: str, text: str) -> QPalette:
    pal = QPalette(QApplication.palette())
    pal.setColor(QPalette.ColorRole.Window, QColor(window))
    pal.setColor(QPalette.ColorRole.WindowText, QColor(text))
    return pal


@pytest.fixture
def no_scheme(qapp: QApplication) -> Iterator[None]:
    """The desktop's scheme as unknown (offscreen) afterwards, where the platform took one."""
    yield
    qapp.styleHints().unsetColorScheme()


def _window_colour(w) -> QColor:
    return w.palette().color(QPalette.ColorRole.Window)


def test_system_is_the_default_and_follows_the_desktop(qtbot, make_window, no_scheme) -> None:
    assert Settings.memory().theme == "system"
    w = make_window()
    assert w.presentation.choice == "system" and w.presentation.theme is LIGHT
    assert w.findChild(QAction, "actionThemeSystem").isChecked()
    app = QApplication.instance()
    hints = app.styleHints()
    hints.setColorScheme(Qt.ColorScheme.Dark)
    if hints.colorScheme() != Qt.ColorScheme.Dark:  # offscreen: the palette instead
        app.setPalette(_desktop_palette("#202020", "#f0f0f0"))
    qtbot.waitUntil(lambda: w.presentation.theme is DARK, timeout=3000)
    qtbot.waitUntil(lambda: _window_colour(w) == QColor(DARK.window), timeout=3000)
    assert w.gpu_panel(0) is None or w.gpu_panel(0).memory_widget.backgroundBrush().color() \
        == QColor(DARK.plot_bg)
    assert w.settings.theme == "system"  # the choice stays; what it shows changed
    # And back to light when the desktop switches back.
    hints.setColorScheme(Qt.ColorScheme.Light)
    if hints.colorScheme() != Qt.ColorScheme.Light:
        app.setPalette(_desktop_palette("#efefef", "#000000"))
    qtbot.waitUntil(lambda: w.presentation.theme is LIGHT, timeout=3000)
    assert not palette_is_dark(QApplication.palette())


def test_a_chosen_theme_does_not_follow_the_desktop(qtbot, make_window, no_scheme) -> None:
    w = make_window()
    w.findChild(QAction, "actionThemeLight").trigger()
    assert w.presentation.choice == "light" and w.settings.theme == "light"
    app = QApplication.instance()
    app.setPalette(_desktop_palette("#202020", "#f0f0f0"))
    qtbot.wait(50)  # not awaiting: a change of theme, if one came, would have come by now
    assert w.presentation.theme is LIGHT
    w.findChild(QAction, "actionThemeSystem").trigger()  # now it does: the desktop is dark
    assert w.presentation.theme is DARK and w.settings.theme == "system"


def test_gpumon_s_own_palette_is_not_the_desktop_s(qtbot, make_window) -> None:
    w = make_window()
    w.presentation.set_theme("dark")
    w.presentation.set_theme("system")  # the desktop is light: gpumon's dark palette was its own
    assert w.presentation.theme is LIGHT


def _cluster_window(settings: Settings) -> ClusterWindow:
    return ClusterWindow(PrometheusSource("http://127.0.0.1:9"), 1.0, settings=settings)


def _remote_window(settings: Settings) -> RemoteWindow:
    # a machine nobody answers for: its link fails with a sentence, the notes are built
    return RemoteWindow(Target("127.0.0.1", port=9), SshOptions(connect_timeout_s=1), 1.0,
                        settings=settings)


@pytest.mark.parametrize(("make", "name"), [(_cluster_window, "playgroundStaysLocal"),
                                            (_remote_window, "playgroundRunsThere")])
def test_a_window_s_playground_note_follows_the_theme(qtbot, make, name) -> None:
    settings = Settings.memory()
    settings.theme = "dark"
    w = make(settings)
    qtbot.addWidget(w)
    w.show()
    note = w.playground.findChild(QLabel, name)  # (its tab not shown: no kernel starts)
    assert note is not None
    note.resize(400, note.heightForWidth(400))

    def colours() -> tuple[QColor, QColor]:
        shot = note.grab().toImage()
        ratio = shot.devicePixelRatio()
        return (shot.pixelColor(int(2 * ratio), int(note.height() // 2 * ratio)),
                note.palette().color(note.foregroundRole()))

    background, text = colours()
    assert palette_is_dark(_only(background)) and not palette_is_dark(_only(text))
    w.presentation.set_theme("light")
    background, text = colours()
    assert background == QColor("#e3f2fd") and palette_is_dark(_only(text))
    w.close()


def _only(colour: QColor) -> QPalette:
    pal = QPalette()
    pal.setColor(QPalette.ColorRole.Window, colour)
    return pal


def test_following_the_desktop_costs_no_filter_on_every_event(qtbot, make_window,
                                                             monkeypatch) -> None:
    """The desktop's palette change is a signal: an event filter on the application ran
    Python for every event of every widget (8 % of the GUI thread on the Monitor tab)."""
    from PySide6.QtCore import QEvent

    from gpumon.ui.widgets.color_scheme import SystemScheme

    seen: list[int] = []
    original = SystemScheme.eventFilter

    def counting(self, watched, event):
        seen.append(int(event.type().value))
        return original(self, watched, event)

    monkeypatch.setattr(SystemScheme, "eventFilter", counting)
    w = make_window()
    qtbot.waitUntil(lambda: w.snapshot_count > 0, timeout=5000)
    seen.clear()
    QApplication.sendEvent(w.header, QEvent(QEvent.Type.User))
    qtbot.wait(50)  # not awaiting: the event loop runs (a reading, its paints) unwatched
    assert seen == []
