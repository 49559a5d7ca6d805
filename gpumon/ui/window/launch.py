"""Start the application: ``run()`` opens the main window and runs Qt's event loop.

Kept apart from ``main_window.py`` (the window itself) so the window can be built in tests and
benchmarks without the process-wide parts: the QApplication, the icon, remembered settings,
and the end of the process (``session_end.py``: on a signal, the last window closed or the
display gone).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, cast

from PySide6.QtCore import QTimer
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication, QMainWindow

from gpumon import ending, i18n
from gpumon.interval import SAMPLING
from gpumon.telemetry.choice import DEMO_HISTORY_S, source_factory
from gpumon.ui.window import add_machine, gcguard, open_cluster, open_recording
from gpumon.ui.window.language import choose, install_qt_translations
from gpumon.ui.window.main_window import MainWindow, simulated_factory
from gpumon.ui.window.session_end import SessionEnd
from gpumon.ui.window.settings import Settings
from gpumon.untrusted import for_terminal

if TYPE_CHECKING:
    from gpumon.recording.reader import Recording
    from gpumon.ssh.target import Target
    from gpumon.ui.window.replay_window import ReplayWindow

NOTICE_MS = 60_000  # how long the status bar says that the settings file was moved aside


def run(simulate: int | None, interval_s: float | None = None, seed: int = 0, *,
        make_window: Callable[[float, Settings], MainWindow] | None = None,
        lang: str | None = None, gpm: bool = True) -> int:
    """Open the window on simulated GPUs (``simulate`` = how many) or on NVML; run Qt.

    Settings are the user's (QSettings "gpumon"/"gpumon"); an interval given on the command
    line replaces the remembered one, otherwise the remembered one (or 1 s) is used.
    Ctrl+C (SIGINT) and SIGTERM close the window and quit cleanly, exit status 0; SIGHUP
    the same with status 129, a display that went away with status 1 (``session_end.py``).
    Python's cyclic garbage collection runs on this (the GUI) thread only (gcguard.py).
    ``make_window(interval_s, settings)`` builds another kind of main window instead.
    The language is ``lang`` (``--lang``), else the one saved in View ▸ Language, else the
    system's. ``gpm=False`` (``--no-gpm``): no GPU activity (GPM) is read.
    """
    ending.note_signals()
    app = QApplication.instance() or QApplication(sys.argv)
    assert isinstance(app, QApplication)
    if ending.noted():  # asked to end while Qt was loading: no window to open
        return ending.status_for(ending.noted()[0])
    session = SessionEnd(app)  # from here on, any end closes what is open by then
    gcguard.install()
    app.setApplicationName("gpumon")
    app.setDesktopFileName("gpumon")
    icon = _icon()
    if icon is not None:
        app.setWindowIcon(icon)
    settings = Settings.user()
    if settings.notice:  # the settings file was unusable and moved aside
        print(f"gpumon: {for_terminal(settings.notice)}", file=sys.stderr)
    install_qt_translations(app, choose(settings, lang))
    if interval_s is not None:
        settings.interval_s = interval_s
    if make_window is not None:
        window = make_window(settings.interval_s or SAMPLING.default, settings)
    else:
        factory = source_factory(simulate or None, seed, gpm, history_s=DEMO_HISTORY_S)
        window = MainWindow(factory, settings.interval_s or SAMPLING.default,
                            demo_factory=simulated_factory(4, seed), settings=settings)
    if icon is not None:
        window.setWindowIcon(icon)
    # A window over SSH has a RemoteFleet as its source. Its module is imported by the window
    # that uses it; one that is not imported (most starts: ~13 ms) cannot be this source.
    fleets = sys.modules.get("gpumon.remote.fleet")
    source = getattr(window, "source", None)
    fleet = source if fleets is not None and isinstance(source, fleets.RemoteFleet) else None
    add_machine.install(window, window.menus.file_menu, window.menus.actions.get("actionQuit"),
                        settings, fleet, lambda targets: ssh_window_for(targets, window))
    open_cluster.install(window, window.menus.file_menu, window.menus.actions.get("actionQuit"),
                         lambda url: cluster_window_for(url, window))
    install_recordings(window)
    _fit_to_screen(window)
    if not session.ending:  # the display went away while the window was being made
        window.show()
        QTimer.singleShot(0, window.presentation.screen_fit.fit)  # again, with its frame known
    if settings.notice:
        window.statusBar().showMessage(settings.notice, NOTICE_MS)
        window.statusBar().setToolTip(settings.notice)  # the whole sentence where it is cut
    loop_status = int(app.exec()) if not session.ending else ending.DISPLAY_LOST
    session.end(None)  # (done already, unless Qt left its loop without saying so)
    status = session.exit_status(loop_status)
    if window.sampling.running:
        _exit_leaving_hung_thread(status)
    return status


def install_recordings(window: MainWindow) -> open_recording.RecordingOpener:
    """File ▸ Open recording… in ``window`` (and Compare with recording… in a replay)."""

    def make(recording: Recording) -> MainWindow:
        from gpumon.ui.window.replay_window import ReplayWindow  # its graphs load pyqtgraph

        replay = ReplayWindow(recording, settings=_settings_like(window))
        replay.setWindowIcon(window.windowIcon())
        replay.resize(window.size())
        install_recordings(replay)
        return replay

    # A replay's module is imported by the first replay: before it no window is one.
    replays = sys.modules.get("gpumon.ui.window.replay_window")
    compare = None
    if replays is not None and isinstance(window, replays.ReplayWindow):
        compare = cast("ReplayWindow", window).compare_with
    return open_recording.install(window, window.menus.file_menu,
                                  window.menus.actions.get("actionQuit"), make, compare)


def _settings_like(window: MainWindow) -> Settings:
    """Settings in memory with ``window``'s zoom and theme (its own choices stay its own)."""
    settings = Settings.memory()
    settings.zoom = window.presentation.zoom
    settings.theme = window.presentation.choice
    return settings


def cluster_window_for(url: str, window: MainWindow) -> MainWindow:
    """File ▸ Open cluster…'s window on ``url``, at ``window``'s interval, zoom and theme
    (its own settings in memory: its geometry and choices do not replace this window's)."""
    from gpumon.telemetry.cluster.prometheus import PrometheusSource
    from gpumon.ui.window.cluster_window import ClusterWindow

    settings = _settings_like(window)
    cluster = ClusterWindow(PrometheusSource(url), window.interval_s, settings=settings)
    cluster.setWindowIcon(window.windowIcon())
    cluster.resize(window.size())
    return cluster


def ssh_window_for(targets: list[Target], window: MainWindow) -> MainWindow:
    """File ▸ Add machine…'s overview of ``targets`` over SSH (the user's own ssh config),
    at ``window``'s interval, zoom and theme, with its own settings in memory."""
    from gpumon.ssh.command import SshOptions
    from gpumon.ui.window.remote_window import remote_window

    settings = Settings.memory()
    settings.zoom = window.presentation.zoom
    settings.theme = window.presentation.choice
    made = remote_window(targets, SshOptions(), window.interval_s,
                         ("--lang", i18n.language()), settings, overview=True)
    made.setWindowIcon(window.windowIcon())
    made.resize(window.size())
    return made


def _exit_leaving_hung_thread(status: int) -> None:
    """End the process now: a driver call hangs in the sampling thread, and destroying its
    running QThread at interpreter exit would abort ("QThread: Destroyed while thread is
    still running", status 134). Settings and the CSV were saved when the window closed."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


def _fit_to_screen(window: QMainWindow) -> None:
    """Shrink a window larger than the screen's free area (1400x900 on a 1280-wide screen)."""
    screen = window.screen()
    if screen is None:
        return
    free = screen.availableGeometry()
    if window.width() > free.width() or window.height() > free.height():
        window.resize(min(window.width(), free.width()), min(window.height(), free.height()))


def _icon() -> QIcon | None:
    """gpumon's icon from the installed resources, or None where Qt cannot load it."""
    try:
        from importlib.resources import files

        for name in ("gpumon.svg", "gpumon.png"):
            path = files("gpumon.resources") / name
            icon = QIcon(str(path)) if path.is_file() else QIcon()
            if not icon.pixmap(32, 32).isNull():  # the SVG needs Qt's svg icon plugin
                return icon
        return None
    except (ImportError, OSError):
        return None
