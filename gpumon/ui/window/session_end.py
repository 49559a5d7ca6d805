"""The one way the window's process ends: on SIGINT, SIGTERM or SIGHUP, when the last window
is closed, or when the display goes away, in any order and at any moment.

The signals are noted where they arrive (``gpumon/ending.py`` says why nothing more is safe
there); Python writes each one's number to a socket that Qt watches, and ``SessionEnd``
acts on it from the top of the event loop. Qt leaves the loop by itself when the last
window is closed or its display connection breaks (X11: "The X11 connection broke", status
1); ``aboutToQuit`` then ends the rest the same way.

On X11, Qt's connection also goes through Xlib, whose lost connection ended the process on
the spot ("XIO: fatal IO error", C ``exit(1)``: no recording finished, no kernel ended).
Xlib's handlers of a lost connection must not return: Xlib (through xcb, which Qt shares
with it) cannot take the socket back once the connection broke, and a handler that returns
leaves it with no request buffer, so its next request ("Xlib: request 18 length 24 would
exceed buffer size") writes through a null pointer: a segfault. So the handler
(``_end_when_xlib_loses``) ends the process itself, where Xlib called it: the recordings
finished, the sentences said, the kernels ended, then ``os._exit`` with the status that says
why (``_ended_by_xlib``). Where Qt meets the broken connection first, it ends the loop as
above.

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
import threading
import time
from pathlib import Path
from typing import Any, NoReturn

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
        self._xlib_ender: int | None = None  # the thread ending the process for Xlib
        self._xlib_status = ending.DISPLAY_LOST
        self.xlib_handled = _end_when_xlib_loses(app, self)

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
        self._finish_recordings(windows)
        for window in windows:
            if isinstance(window, QMainWindow) or window.isVisible():
                window.close()
        if status is not None:
            self._app.exit(status)

    def _finish_recordings(self, windows: list[Any]) -> None:
        for window in windows:
            files = getattr(window, "files", None)  # a main window's (main_window.py)
            if isinstance(files, FileActions) and files.recording:
                recorder = files.recorder
                files.stop_recording()
                if recorder.path is not None:
                    self.saved.append((recorder.path, recorder.rows))

    def _ended_by_xlib(self) -> NoReturn:
        """Xlib met the lost display and called its handler, which must not return (see the
        module doc): end here, in the thread that called Xlib. The recordings are finished
        and the sentences said first (the kernels end with the process anyway: their
        parent-death signal), then each kernel is shut down, then the process exits. Qt is
        not asked to close anything: a window's close could call Xlib again. A second call
        from the thread already ending (Xlib again, meanwhile) exits at once; one from
        another thread waits for the first to end the process."""
        me = threading.get_ident()
        if self._xlib_ender is not None:
            if self._xlib_ender == me:
                _exit(self._xlib_status)
            while True:
                time.sleep(1.0)
        self._xlib_ender = me
        try:
            if self.cause is not None:
                self._xlib_status = ending.status_for(self.cause)
            windows = self._app.topLevelWidgets()
            if not self.ending:
                self.ending = True
                self._finish_recordings(windows)
            self._xlib_status = self.exit_status(ending.DISPLAY_LOST)
            _stop_kernels(windows)
        finally:
            _exit(self._xlib_status)

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


# Xlib's handlers: ``int (*)(Display *)`` for a lost connection, and (libX11 1.7 and later)
# ``void (*)(Display *, void *)`` for the display's exit handler, which Xlib calls after it.
_IO_ERROR_HANDLER = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p)
_EXIT_HANDLER = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p)
_xlib_handlers: list[Any] = []  # the installed ones: Xlib may call them to the process's end


def _end_when_xlib_loses(app: QApplication, session: SessionEnd) -> bool:
    """On X11: Xlib's lost-connection handler, and the display's exit handler where libX11
    has one (1.7 and later), end the process through ``session`` and never return (see the
    module doc); True where installed."""
    if QGuiApplication.platformName() != "xcb":
        return False
    try:
        x11_app: Any = app.nativeInterface()  # QNativeInterface.QX11Application
        display = x11_app.display()
        x11 = ctypes.CDLL(ctypes.util.find_library("X11") or "libX11.so.6")
        set_io_handler = x11.XSetIOErrorHandler
    except (AttributeError, OSError, TypeError):
        return False
    if not display:
        return False

    def lost(_display: int | None) -> int:
        session._ended_by_xlib()

    def exit_handler(_display: int | None, _data: int | None) -> None:
        session._ended_by_xlib()

    io_handler = _IO_ERROR_HANDLER(lost)
    _xlib_handlers[:] = [io_handler]
    set_io_handler.argtypes = [_IO_ERROR_HANDLER]
    set_io_handler.restype = ctypes.c_void_p
    set_io_handler(io_handler)
    set_exit_handler = getattr(x11, "XSetIOErrorExitHandler", None)  # libX11 1.7 and later
    if set_exit_handler is not None:
        on_exit = _EXIT_HANDLER(exit_handler)
        _xlib_handlers.append(on_exit)
        set_exit_handler.argtypes = [ctypes.c_void_p, _EXIT_HANDLER, ctypes.c_void_p]
        set_exit_handler.restype = None
        set_exit_handler(display, on_exit, None)
    return True


def _stop_kernels(windows: list[Any]) -> None:
    """Shut down each window's kernel (Qt-free: ``KernelLink.stop``), where one was made."""
    module = sys.modules.get("gpumon.ui.playground.kernel_link")
    if module is None:  # never imported: no kernel
        return
    for window in windows:
        for link in window.findChildren(module.KernelLink):
            with contextlib.suppress(Exception):  # the process ends next whatever happens
                link.stop()


def _exit(status: int) -> NoReturn:
    """End the process now (Xlib's handler must not return), stderr flushed."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        sys.stderr.flush()
    os._exit(status)


def _display_name() -> str:
    """The display the window was on, as the user set it ("wayland-0", ":0")."""
    platform = QGuiApplication.platformName()
    name = os.environ.get("WAYLAND_DISPLAY" if platform.startswith("wayland") else "DISPLAY")
    return for_terminal(name or platform)


def _say(sentence: str) -> None:
    """One line on stderr, where there still is one (a terminal that hung up has not)."""
    with contextlib.suppress(OSError, ValueError):
        print(f"gpumon: {sentence}", file=sys.stderr, flush=True)
