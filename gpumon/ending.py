"""How the window's process takes SIGINT, SIGTERM and SIGHUP, Qt-free (the command line
uses it before Qt is imported).

Python runs a signal's handler in the main thread between two bytecodes, wherever that
thread is: inside an event filter, in the middle of closing a window. A handler that called
Qt from there (``app.quit()``) re-entered QApplication's close-every-window loop while a
window was being closed, and that loop then spun at 100 % of a core for ever; that is what a
desktop session's end did (SIGTERM, and the X server's end at the same moment). So the
handler here only notes the signal and starts the deadline; Python's wake-up descriptor
tells Qt's event loop, which ends the window from the top of the loop
(``ui/window/session_end.py``).

Before Qt is loaded nothing of gpumon's runs that needs ending (no window, kernel or
recording yet): ``end_at_once`` ends the process on the spot with the status below.

The deadline: whatever holds the end up once the event loop runs, the process is gone
``END_DEADLINE_S`` after the first signal or the display's loss. faulthandler's watchdog, a
C thread that needs no GIL (the spin above held it), writes every thread's stack to stderr
and exits with status 1.

The exit status says why: 0 asked to quit (Ctrl+C, SIGTERM, the window closed), 129 hung up
(SIGHUP: the terminal, or the ``ssh -X`` link that carried the display, ended), 1 the
display went away.
"""

from __future__ import annotations

import faulthandler
import os
import signal
import sys
from types import FrameType

ENDING_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
END_DEADLINE_S = 3.0
ASKED = 0
DISPLAY_LOST = 1
HUNG_UP = 128 + signal.SIGHUP

_noted: list[int] = []
_deadline = [False]  # started (once per process)
_with_deadline = [False]  # a signal starts it (``deadline_on_signals``)


def end_at_once() -> None:
    """Until ``note_signals``: SIGINT, SIGTERM and SIGHUP end the process where they arrive
    (while Qt and the window's modules load), with the status that says why."""
    for sig in ENDING_SIGNALS:
        signal.signal(sig, _end_now)


def _end_now(signum: int, _frame: FrameType | None) -> None:
    os._exit(status_for(signum))


def note_signals() -> None:
    """From now on SIGINT, SIGTERM and SIGHUP are noted (``noted()``) and do nothing else
    where they arrive. Main thread only (Python's rule for handlers)."""
    for sig in ENDING_SIGNALS:
        signal.signal(sig, _note)


def deadline_on_signals(on: bool = True) -> None:
    """From now on (the event loop runs) a noted signal also starts the deadline; a test's
    process, which lives on, leaves it off."""
    _with_deadline[0] = on
    if on and _noted:
        start_deadline()


def _note(signum: int, _frame: FrameType | None) -> None:
    _noted.append(signum)
    if _with_deadline[0]:
        start_deadline()


def noted() -> tuple[int, ...]:
    """The ending signals received so far, first first."""
    return tuple(_noted)


def status_for(signum: int) -> int:
    """The exit status after ending on ``signum``."""
    return HUNG_UP if signum == signal.SIGHUP else ASKED


def start_deadline(seconds: float = END_DEADLINE_S) -> bool:
    """Make sure the process is gone ``seconds`` from the first call on (see the module
    doc); False where stderr has no descriptor to write the stacks to (then no deadline)."""
    if _deadline[0]:
        return True
    stream = sys.__stderr__
    try:
        if stream is None:
            raise ValueError("no stderr")
        faulthandler.dump_traceback_later(seconds, exit=True, file=stream)
    except (ValueError, RuntimeError, OSError, AttributeError):  # no usable descriptor
        return False
    _deadline[0] = True
    return True
