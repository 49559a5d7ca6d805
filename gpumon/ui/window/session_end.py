"""The one way the window's process ends: on SIGINT, SIGTERM or SIGHUP, when the last window
is closed, or when the display goes away, in any order and at any moment.

The signals are noted where they arrive (``gpumon/ending.py`` says why nothing more is safe
there); Python writes each one's number to a socket that Qt watches, and ``SessionEnd``
acts on it from the top of the event loop. Qt leaves the loop by itself when the last
window is closed or its display connection breaks (X11: "The X11 connection broke", status
1); ``aboutToQuit`` then ends the rest the same way.

On X11, Qt's connection also goes through Xlib, whose lost connection ended the process on
the spot ("XIO: fatal IO error", C ``exit(1)``: no recording finished, no kernel ended): now
Xlib's handlers return (``_let_xlib_return``), and Qt's own check of the connection ends the
loop as above.

Ending, done once whatever asks again meanwhile: every recording is finished (its rows
written and the file closed, so a session's end loses none), every window is closed (a main
window's close ends its kernel and its sampling thread), and the loop is left with a status
that says why. ``exit_status`` then says on stderr what a user would otherwise not know:
that the display went away, and where each recording was saved.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import signal
import socket
import sys
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QSocketNotifier, QTimer, Slot
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication, QMainWindow

from gpumon import ending
from gpumon.i18n import ntr, tr
from gpumon.ui.window.file_actions import FileActions
from gpumon.untrusted import for_terminal


class SessionEnd(QObject):
    """Ends ``app`` once (see the module doc). ``deadline=False`` (tests in a process that
    must live on): no deadline is started."""

    def __init__(self, app: QApplication, *, deadline: bool = True) -> None:
        super().__init__(app)
        self._app = app
        self._deadline = deadline
        self.ending = False
        self.cause: int | None = None  # the signal that ended it, if one did
        self.saved: list[tuple[Path, int]] = []  # recordings finished by the end
        self._reader, self._writer = socket.socketpair()
        self._reader.setblocking(False)
        self._writer.setblocking(False)
        self._old_fd = signal.set_wakeup_fd(self._writer.fileno(), warn_on_full_buffer=False)
        self._notifier = QSocketNotifier(self._reader.fileno(), QSocketNotifier.Type.Read, self)
        self._notifier.activated.connect(self._woken)
        app.aboutToQuit.connect(self._quitting)
        QTimer.singleShot(0, self, self._loop_runs)
        self.xlib_returns = _let_xlib_return(app)

    @Slot()
    def _loop_runs(self) -> None:
        if self._deadline:
            ending.deadline_on_signals()
        self._woken()  # a signal that came while the window was made

    def close(self) -> None:
        """Stop watching (tests): the wake-up descriptor as it was, the sockets closed."""
        signal.set_wakeup_fd(self._old_fd)
        self._notifier.setEnabled(False)
        self._app.aboutToQuit.disconnect(self._quitting)
        self._reader.close()
        self._writer.close()

    @Slot()
    def _woken(self) -> None:
        with contextlib.suppress(OSError):
            while self._reader.recv(64):
                pass
        signals = ending.noted()
        if signals and not self.ending:
            self.cause = signals[0]
            self.end(ending.status_for(signals[0]))

    @Slot()
    def _quitting(self) -> None:
        """Qt leaves its loop (the last window closed, the display gone, or ``end``)."""
        self.end(None)

    def end(self, status: int | None) -> None:
        """Finish the recordings, close every window, leave the loop with ``status`` (None:
        Qt is leaving it already). Once: a second call, from any depth, does nothing."""
        if self.ending:
            return
        self.ending = True
        if self._deadline:
            ending.start_deadline()
        windows = self._app.topLevelWidgets()
        for window in windows:
            files = getattr(window, "files", None)  # a main window's (main_window.py)
            if isinstance(files, FileActions) and files.recording:
                recorder = files.recorder
                files.stop_recording()
                if recorder.path is not None:
                    self.saved.append((recorder.path, recorder.rows))
        for window in windows:
            if isinstance(window, QMainWindow) or window.isVisible():
                window.close()
        if status is not None:
            self._app.exit(status)

    def exit_status(self, loop_status: int) -> int:
        """The process's exit status once the loop returned ``loop_status``; says on stderr
        that the display went away, and where each recording was saved, when the end was
        not the user closing the window."""
        if self.cause is not None:
            status = ending.status_for(self.cause)
        elif loop_status != 0:  # Qt left the loop on its own: the display connection broke
            status = ending.DISPLAY_LOST
            _say(tr("the display {display} went away; the window has closed.",
                    display=_display_name()))
        else:
            return 0
        for path, rows in self.saved:
            _say(ntr("the recording {path} is complete: {rows} row.",
                     "the recording {path} is complete: {rows} rows.", rows,
                     path=for_terminal(str(path)), rows=rows))
        return status


def _let_xlib_return(app: QApplication) -> bool:
    """On X11: make Xlib's lost-connection handlers return instead of calling ``exit(1)``
    (libX11 1.7 and later; True where done). Both are libc's ``sched_yield``, a C function
    that takes no argument and returns 0: called with Xlib's arguments it ignores them, as
    the C calling convention allows, and needs no Python (no GIL) wherever Xlib calls it.
    Xlib then marks the display dead, and Qt's xcb connection, which broke too, ends the
    event loop with status 1."""
    if QGuiApplication.platformName() != "xcb":
        return False
    try:
        x11_app: Any = app.nativeInterface()  # QNativeInterface.QX11Application
        display = x11_app.display()
        x11 = ctypes.CDLL(ctypes.util.find_library("X11") or "libX11.so.6")
        libc = ctypes.CDLL(None)
        exit_handler = x11.XSetIOErrorExitHandler  # AttributeError before libX11 1.7
    except (AttributeError, OSError, TypeError):
        return False
    if not display:
        return False
    returns = ctypes.cast(libc.sched_yield, ctypes.c_void_p)
    exit_handler.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
    exit_handler.restype = None
    exit_handler(display, returns, None)
    x11.XSetIOErrorHandler.argtypes = [ctypes.c_void_p]
    x11.XSetIOErrorHandler.restype = ctypes.c_void_p
    x11.XSetIOErrorHandler(returns)
    return True


def _display_name() -> str:
    """The display the window was on, as the user set it ("wayland-0", ":0")."""
    platform = QGuiApplication.platformName()
    name = os.environ.get("WAYLAND_DISPLAY" if platform.startswith("wayland") else "DISPLAY")
    return for_terminal(name or platform)


def _say(sentence: str) -> None:
    """One line on stderr, where there still is one (a terminal that hung up has not)."""
    with contextlib.suppress(OSError, ValueError):
        print(f"gpumon: {sentence}", file=sys.stderr, flush=True)
