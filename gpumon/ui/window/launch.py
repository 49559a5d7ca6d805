"""Start the application: ``run()`` opens the main window and runs Qt's event loop.

Kept apart from ``main_window.py`` (the window itself) so the window can be built in tests and
benchmarks without the process-wide parts: the QApplication, the icon, remembered settings,
and quitting cleanly on Ctrl+C or SIGTERM.
"""

from __future__ import annotations

import os
import signal
import socket
import sys
from collections.abc import Callable

from PySide6.QtCore import QObject, QSocketNotifier
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication, QMainWindow

from gpumon.interval import SAMPLING
from gpumon.telemetry.choice import source_factory
from gpumon.ui.window import gcguard, open_cluster
from gpumon.ui.window.language import choose, install_qt_translations
from gpumon.ui.window.main_window import MainWindow, simulated_factory
from gpumon.ui.window.settings import Settings
from gpumon.untrusted import for_terminal

NOTICE_MS = 60_000  # how long the status bar says that the settings file was moved aside


def run(simulate: int | None, interval_s: float | None = None, seed: int = 0, *,
        make_window: Callable[[float, Settings], MainWindow] | None = None,
        lang: str | None = None, gpm: bool = True) -> int:
    """Open the window on simulated GPUs (``simulate`` = how many) or on NVML; run Qt.

    Settings are the user's (QSettings "gpumon"/"gpumon"); an interval given on the command
    line replaces the remembered one, otherwise the remembered one (or 1 s) is used.
    Ctrl+C (SIGINT) and SIGTERM close the window and quit cleanly, exit status 0.
    Python's cyclic garbage collection runs on this (the GUI) thread only (gcguard.py).
    ``make_window(interval_s, settings)`` builds another kind of main window instead.
    The language is ``lang`` (``--lang``), else the one saved in View ▸ Language, else the
    system's. ``gpm=False`` (``--no-gpm``): no GPU activity (GPM) is read.
    """
    app = QApplication.instance() or QApplication(sys.argv)
    assert isinstance(app, QApplication)
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
        factory = source_factory(simulate or None, seed, gpm)
        window = MainWindow(factory, settings.interval_s or SAMPLING.default,
                            demo_factory=simulated_factory(4, seed), settings=settings)
    if icon is not None:
        window.setWindowIcon(icon)
    open_cluster.install(window, window.menus.file_menu, window.menus.actions.get("actionQuit"),
                         lambda url: cluster_window_for(url, window))
    app.aboutToQuit.connect(window.close)  # quit without closing still joins the thread
    _fit_to_screen(window)
    _quit_on_signals(app)
    window.show()
    if settings.notice:
        window.statusBar().showMessage(settings.notice, NOTICE_MS)
        window.statusBar().setToolTip(settings.notice)  # the whole sentence where it is cut
    status = int(app.exec())
    if window.sampling.running:
        _exit_leaving_hung_thread(status)
    return status


def cluster_window_for(url: str, window: MainWindow) -> MainWindow:
    """File ▸ Open cluster…'s window on ``url``, at ``window``'s interval, zoom and theme
    (its own settings in memory: its geometry and choices do not replace this window's)."""
    from gpumon.telemetry.cluster.prometheus import PrometheusSource
    from gpumon.ui.window.cluster_window import ClusterWindow

    settings = Settings.memory()
    settings.zoom = window.presentation.zoom
    settings.theme = window.presentation.theme.name
    cluster = ClusterWindow(PrometheusSource(url), window.interval_s, settings=settings)
    cluster.setWindowIcon(window.windowIcon())
    cluster.resize(window.size())
    return cluster


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


def _quit_on_signals(app: QApplication) -> None:
    """Make SIGINT (Ctrl+C in the terminal) and SIGTERM quit the event loop cleanly.

    Python runs its signal handlers only between bytecodes, and Qt's event loop runs in C++;
    a wake-up socket that Qt watches makes the handler run at once.
    """
    reader, writer = socket.socketpair()
    reader.setblocking(False)
    writer.setblocking(False)
    signal.set_wakeup_fd(writer.fileno())
    notifier = QSocketNotifier(reader.fileno(), QSocketNotifier.Type.Read, app)
    notifier.activated.connect(lambda: reader.recv(64))
    keep = QObject(app)  # the sockets live as long as the application
    keep.setProperty("sockets", [reader, writer])
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: app.quit())


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
