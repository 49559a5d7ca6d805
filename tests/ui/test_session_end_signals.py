"""The window's end on a signal, safe wherever the signal lands (gpumon/ending.py,
ui/window/session_end.py).

A session's end delivered SIGTERM while Qt was closing the window for the lost X server:
Python ran the handler inside an event filter of that close, the handler's ``app.quit()``
re-entered QApplication's close-every-window loop, and gpumon spun at 100 % of a core. The
first test does exactly that in a real ``launch.run`` (offscreen: Qt's own exit(1) stands
for the lost display) and fails while gpumon is still running 20 s later. The others drive
``SessionEnd`` in this process: a signal inside an event filter is only noted, the end runs
once from the event loop, finishes a recording and closes the window, and the exit status
says why.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QApplication

from gpumon import ending
from gpumon.ui.window.session_end import SessionEnd

PROGRAM = r"""
import os, signal, sys
from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QApplication
from gpumon.ui.window import launch
from gpumon.ui.window.main_window import MainWindow, simulated_factory

class SignalOnClose(QObject):
    # SIGTERM to itself as the window's handle gets its Close event: Python runs the handler
    # at the next bytecode, still inside this filter, in the middle of Qt's close.
    def eventFilter(self, obj, event):
        if event.type() == QEvent.Type.Close:
            os.kill(os.getpid(), signal.SIGTERM)
            sum(range(1000))  # bytecodes: the handler runs here
        return False

filters = []

def make(interval_s, settings):
    window = MainWindow(simulated_factory(2), 0.2, settings=settings)
    def arm():
        f = SignalOnClose(window)
        window.windowHandle().installEventFilter(f)
        filters.append(f)
        # What Qt's xcb plugin does when the X11 connection breaks.
        QTimer.singleShot(300, lambda: QApplication.instance().exit(1))
    QTimer.singleShot(200, window, arm)
    return window

sys.exit(launch.run(2, make_window=make))
"""


def test_a_signal_inside_the_close_of_a_lost_display_ends_the_window(tmp_path: Path) -> None:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", XDG_CONFIG_HOME=str(tmp_path),
               LANGUAGE="en", DISPLAY=":57")
    app = subprocess.Popen([sys.executable, "-c", PROGRAM], env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
    try:
        out, err = app.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        app.kill()
        out, err = app.communicate()
        pytest.fail(f"gpumon still runs 60 s after its loop was told to end:\n{err}")
    assert app.returncode == ending.DISPLAY_LOST, err
    assert "gpumon: the display :57 went away; the window has closed." in err, err
    assert "Traceback" not in err and "Timeout (" not in err, err


class RaiseInFilter(QObject):
    """Sends ``sig`` to this process from inside the event filter, on ``kind``, once."""

    def __init__(self, sig: signal.Signals, kind: QEvent.Type) -> None:
        super().__init__()
        self.sig, self.kind, self.raised = sig, kind, False

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == self.kind and not self.raised:
            self.raised = True
            os.kill(os.getpid(), self.sig)
            sum(range(1000))  # bytecodes: Python runs the handler here, inside the filter
        return False


@pytest.fixture
def session(qapp: QApplication, monkeypatch: pytest.MonkeyPatch) -> Iterator[SessionEnd]:
    """A SessionEnd on this process's application, without the deadline; the handlers, the
    wake-up descriptor and the application's loop as they were afterwards."""
    before = {sig: signal.getsignal(sig) for sig in ending.ENDING_SIGNALS}
    monkeypatch.setattr(ending, "_noted", [])
    monkeypatch.setattr(ending, "_with_deadline", [False])
    ending.note_signals()
    exits: list[int] = []
    monkeypatch.setattr(qapp, "exit", exits.append)  # this loop is pytest-qt's: not left
    end = SessionEnd(qapp, deadline=False)
    end.exits = exits  # type: ignore[attr-defined]
    yield end
    end.close()
    for sig, handler in before.items():
        signal.signal(sig, handler)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_a_signal_in_an_event_filter_is_only_noted_then_ends_once(
        qtbot, make_window, session: SessionEnd, sig: signal.Signals) -> None:
    w = make_window()
    raiser = RaiseInFilter(sig, QEvent.Type.Paint)
    w.installEventFilter(raiser)
    qtbot.waitUntil(lambda: raiser.raised, timeout=5000)
    # The handler ran inside the filter and did nothing but note the signal.
    assert ending.noted() == (sig,)
    qtbot.waitUntil(lambda: session.ending, timeout=5000)  # then, from the event loop
    assert session.cause == sig
    assert not w.isVisible() and not w.sampling.running
    assert session.exits == [0 if sig != signal.SIGHUP else 129]  # type: ignore[attr-defined]
    os.kill(os.getpid(), sig)  # a second one changes nothing
    qtbot.wait(50)  # not awaiting: a second end, if one came, would have come by now
    assert session.exits == [0 if sig != signal.SIGHUP else 129]  # type: ignore[attr-defined]
    assert session.exit_status(0) == ending.status_for(sig)


def test_the_end_finishes_the_recording_and_says_where(
        qtbot, make_window, session: SessionEnd, tmp_path: Path,
        capfd: pytest.CaptureFixture[str]) -> None:
    w = make_window()
    path = tmp_path / "r.csv"
    assert w.files.start_recording(path)
    qtbot.waitUntil(lambda: w.files.recorder.rows >= 12, timeout=10000)
    os.kill(os.getpid(), signal.SIGTERM)
    qtbot.waitUntil(lambda: session.ending, timeout=5000)
    assert not w.files.recording
    lines = path.read_text(encoding="utf-8").splitlines()
    rows = session.saved[0][1]
    assert session.saved == [(path, rows)] and rows == len(lines) - 1 >= 12
    assert session.exit_status(0) == 0
    assert f"gpumon: the recording {path} is complete: {rows} rows." in capfd.readouterr().err


def test_qt_leaving_its_loop_alone_is_a_lost_display(
        qtbot, make_window, session: SessionEnd, capfd: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DISPLAY", ":42")
    w = make_window()
    session.end(None)  # what aboutToQuit does
    assert not w.isVisible() and session.exits == []  # type: ignore[attr-defined]
    assert session.exit_status(1) == ending.DISPLAY_LOST
    err = capfd.readouterr().err
    assert "gpumon: the display" in err and "went away; the window has closed." in err


def test_the_window_closed_by_the_user_says_nothing(
        qtbot, make_window, session: SessionEnd, capfd: pytest.CaptureFixture[str]) -> None:
    w = make_window()
    w.close()
    session.end(None)
    assert session.exit_status(0) == 0
    assert "gpumon:" not in capfd.readouterr().err
