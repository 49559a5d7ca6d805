"""Python's cyclic garbage collector, run on the GUI thread only.

CPython runs a collection in whichever thread happens to allocate past the threshold. When
that is a worker thread (the sampler, the playground engine importing torch, a CSV writer)
and the garbage holds a Qt object of the GUI thread (a closed panel, a pyqtgraph item), the
object is destroyed in the worker: ``QObject::~QObject`` takes Qt's signal-slot lock there
and then waits for the GIL to ask PySide about Python overrides, while the GUI thread holds
the GIL and waits for the same lock to connect a signal. Both wait forever: the window
freezes. (Seen as a rare hang of the test suite; a native stack showed exactly that.)

``install()`` turns automatic collection off and collects on the GUI thread instead,
generation by generation with the interpreter's own thresholds: pyqtgraph's
``util.garbage_collector.GarbageCollector`` does the same from a timer, for the same reason.
Reference counting still frees everything that is not in a cycle at once, in any thread.

Here the collection rides on a wake-up the GUI thread has anyway: ``tick()`` after each
snapshot (``workers.SamplingThread``). The timer only stands in when no snapshot came for
``INTERVAL_MS`` (sampling paused, a long interval, no source). An idle window woke three
times a second, twice for the timer; the timer's wake-ups were about a fifth of the whole
idle app's CPU (1.6-1.9 against 2.1-2.2 ms/s, 8 GPUs, window unmapped).
"""

from __future__ import annotations

import gc

from PySide6.QtCore import QCoreApplication, QThread, QTimer

INTERVAL_MS = 2000  # the timer: only when no tick() came for this long

_timer: QTimer | None = None


def install(interval_ms: int = INTERVAL_MS) -> bool:
    """Collect only on the GUI thread from now on (idempotent; call on the GUI thread once
    the QApplication exists). False when there is no application to run the timer."""
    global _timer
    app = QCoreApplication.instance()
    if app is None or QThread.currentThread() is not app.thread():
        return False
    if _timer is None:
        _timer = QTimer(app)
        _timer.setObjectName("gpumonGarbageCollector")
        _timer.timeout.connect(collect)
    gc.disable()
    if not _timer.isActive():
        _timer.start(interval_ms)
    return True


def installed() -> bool:
    return _timer is not None and _timer.isActive() and not gc.isenabled()


def timer() -> QTimer | None:
    """The timer that collects when no ``tick()`` came (None before ``install()``): the
    application's own, which a check of timers left running passes over."""
    return _timer


def tick() -> int:
    """``collect()`` now, from a GUI-thread wake-up that comes anyway, and the timer put
    off by its whole interval; returns the objects collected. Nothing without ``install()``
    (the interpreter collects by itself then)."""
    if _timer is None or not _timer.isActive() or gc.isenabled():
        return 0
    _timer.start()  # restarts: it fires only after INTERVAL_MS without a tick
    return collect()


def collect() -> int:
    """What automatic collection would have done by now; returns the objects collected."""
    threshold = gc.get_threshold()
    count = gc.get_count()
    found = 0
    if count[0] > threshold[0]:
        found += gc.collect(0)
        if count[1] > threshold[1]:
            found += gc.collect(1)
            if count[2] > threshold[2]:
                found += gc.collect(2)
    return found
