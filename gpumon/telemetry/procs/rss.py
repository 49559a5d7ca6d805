"""The resident memory (RSS) of one process, read on a thread of its own.

On a machine without a GPU the playground shows its kernel process's memory instead of GPU
graphs. The sampling thread does not tick there (no usable source), and reading another
process's memory must not run on the GUI thread, so ``RssProbe`` owns a small daemon thread
that reads ``psutil.Process(pid).memory_info().rss`` every ``interval_s`` while started, into
a bounded ring (memory never grows with run time). ``pid`` is a callable, read on every
tick: the kernel can restart under a new PID. Qt-free.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable

import numpy as np
import psutil

MAX_POINTS = 4096  # an hour at ~1 s; the view shows the last minutes


def rss_of(pid: int | None) -> int | None:
    """Resident bytes of ``pid``; None when there is no such process (yet, or any more)."""
    if pid is None:
        return None
    try:
        return int(psutil.Process(pid).memory_info().rss)
    except (psutil.Error, OSError, ValueError):
        return None


class RssProbe:
    """Reads a process's RSS on its own thread; ``series()`` is safe from any thread."""

    def __init__(self, pid: Callable[[], int | None], interval_s: float = 0.5,
                 max_points: int = MAX_POINTS, read: Callable[[int | None], int | None] = rss_of
                 ) -> None:
        self._pid = pid
        self.interval_s = float(interval_s)
        self._read = read  # replaceable in tests
        self._points: deque[tuple[float, float]] = deque(maxlen=max_points)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> None:
        """Start reading (again); does nothing while running."""
        if self.running:
            return
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(self._stop,),
                                        name="gpumon-rss-probe", daemon=True)
        self._thread.start()

    def stop(self, timeout_s: float = 1.0) -> None:
        """Stop reading; the points read so far stay."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout_s)
            self._thread = None

    def read_once(self) -> None:
        """One reading now (the thread calls this every ``interval_s``)."""
        rss = self._read(self._pid())
        if rss is not None:
            self._points.append((time.time(), float(rss)))

    def series(self, since: float = -np.inf) -> tuple[np.ndarray, np.ndarray]:
        """(times, bytes) of the readings at or after ``since``, oldest first."""
        points = list(self._points)  # a copy: the thread may append meanwhile
        if not points:
            return np.empty(0), np.empty(0)
        arr = np.asarray(points, dtype=float)
        keep = arr[:, 0] >= since
        return arr[keep, 0], arr[keep, 1]

    def _run(self, stop: threading.Event) -> None:
        while not stop.is_set():
            self.read_once()
            stop.wait(self.interval_s)
