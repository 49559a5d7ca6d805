"""The loop the terminal commands share (``--once``, ``--watch``, ``dmon``, ``topo``): make the
source, open it, read it on a grid of intervals, and end cleanly on Ctrl+C, on a closed pipe
(``gpumon -l 1 | head``) and on a driver that stops answering.

The reading runs in a thread of its own while the main thread watches it: a driver call
never returns control to Python while it hangs, and nvidia-smi itself waits on such a driver
for minutes without a word. When no NVML call has started for ``SAY_AFTER_S`` (3 s) while a
reading is in progress, one sentence on stderr names the call the reading waits for; after
``--timeout`` seconds (10 by default) without progress the command ends with status 1. A
slow driver (200 ms a call) makes progress and is waited for. Ctrl+C ends the command at any
moment, a hung call included; the thread left in the driver is a daemon and ends with the
process.

    def body(readings: Readings) -> int:
        for snap in readings.every(period_s, count):
            ...
        return 0

    return run("gpumon dmon", make_source, body, args.timeout)
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import TypeVar

from gpumon.cli.argtypes import seconds
from gpumon.i18n import tr
from gpumon.interval import DRIVER_WAIT
from gpumon.telemetry.model.activity import FIRST_READING_WAIT_S, warming
from gpumon.telemetry.model.cadence import next_due
from gpumon.telemetry.model.facts import cpu_pending, with_gpu_rates_of
from gpumon.telemetry.model.types import Snapshot, Source, SourceState, SourceStatus
from gpumon.telemetry.sources.sampler import Sampler

T = TypeVar("T")

#: A reading that has started no NVML call for this long is said to wait (seconds).
SAY_AFTER_S = 3.0
#: How often the main thread looks at the reading in progress (seconds).
WATCH_EVERY_S = 0.1
#: How long Ctrl+C waits for the reading thread to close the source (it may hang in it).
CLOSE_WAIT_S = 1.0


def add_timeout_argument(parser: argparse.ArgumentParser) -> None:
    """``--timeout``: how long a reading may stand still in the driver before gpumon gives up."""
    parser.add_argument("--timeout", type=seconds(DRIVER_WAIT), metavar="SECONDS",
                        default=DRIVER_WAIT.default,
                        help=tr("give up with status 1 when the GPU driver has not answered "
                                "for SECONDS (default {default})",
                                default=f"{DRIVER_WAIT.default:g}"))


def fail(prefix: str, status: SourceStatus) -> int:
    """Status 1, with the status's message and hint on stderr."""
    from gpumon.text.smi_text import render_status

    say(prefix, render_status(status))
    return 1


def say(prefix: str, text: str) -> None:
    print(f"{prefix}: {text}", file=sys.stderr, flush=True)


class Readings:
    """The opened source as the command's body reads it, in the reading thread."""

    def __init__(self, sampler: Sampler, source: Source, stop: threading.Event) -> None:
        self.sampler = sampler
        self.source = source
        self.stop = stop  # set by Ctrl+C: the readings end at the next wait
        self.busy_since: float | None = None  # while open() or tick() runs (monotonic)

    def open(self) -> SourceStatus:
        return self._busy(self.sampler.open)

    def tick(self, slow: bool = False) -> Snapshot:
        """One reading; ``slow``: with the slow fields (process details, host CPU) now."""
        return self._busy(lambda: self.sampler.tick(slow=slow))

    def _busy(self, work: Callable[[], T]) -> T:
        self.busy_since = time.monotonic()
        try:
            return work()
        finally:
            self.busy_since = None

    def every(self, period_s: float, count: int | None, settle: bool = False
              ) -> Iterator[Snapshot]:
        """``count`` readings (None: until Ctrl+C), ``period_s`` apart on a grid (a late one
        skips the slots it overran). Where GPM's first sample leaves the first reading
        without activity, or a process without its CPU % (a rate too; nvitop -1 shows it the
        same way), it is read again FIRST_READING_WAIT_S later; ``settle``: the first
        reading is never shown, the next comes a period later (at least that wait), so rates
        and activity compare two readings from the first line on (``dmon``)."""
        snap = self.tick()
        rates = warming(snap) or cpu_pending(snap)
        if settle or rates:
            wait = FIRST_READING_WAIT_S if rates else 0.0
            if self.stop.wait(max(wait, period_s if settle else 0.0)):
                return
            first, snap = snap, self.tick(slow=rates)
            if rates:  # read again for GPM's or CPU %'s rates: keep the driver's samples
                snap = with_gpu_rates_of(first, snap)
        anchor, done = time.monotonic(), 0
        while True:
            yield snap
            done += 1
            if count is not None and done >= count:
                return
            due = next_due(anchor, period_s, time.monotonic())
            anchor = due - period_s
            if self.stop.wait(max(0.0, due - time.monotonic())):
                return
            snap = self.tick()


def run(prefix: str, make_source: Callable[[], Source], body: Callable[[Readings], int],
        timeout_s: float = DRIVER_WAIT.default) -> int:
    """Make and open the source, then ``body``'s status; 1 with a sentence on stderr when the
    source cannot be made or opened, or when the driver stood still for ``timeout_s``; 0
    on Ctrl+C and when stdout's reader went away."""
    try:
        source = make_source()
    except ImportError as exc:  # e.g. nvidia-ml-py is not installed
        return fail(prefix, SourceStatus(
            SourceState.LIBRARY_NOT_FOUND,
            tr("gpumon could not load its NVML support ({error}).", error=exc),
            tr("Install nvidia-ml-py, or try --simulate 4.")))
    except KeyboardInterrupt:  # while the binding was imported
        return 0
    readings = Readings(Sampler(source), source, threading.Event())
    result: list[int] = []
    thread = threading.Thread(target=_read, args=(prefix, readings, body, result),
                              name="gpumon-readings", daemon=True)
    thread.start()
    try:
        return _watch(prefix, readings, thread, result, timeout_s)
    except KeyboardInterrupt:  # Ctrl+C ends a watch, as it ends nvidia-smi -l
        readings.stop.set()
        thread.join(CLOSE_WAIT_S)
        return 0


def _read(prefix: str, readings: Readings, body: Callable[[Readings], int],
          result: list[int]) -> None:
    """The reading thread: open, ``body``, close; its status into ``result``."""
    try:
        status = readings.open()
        result.append(body(readings) if status.usable else fail(prefix, status))
    except BrokenPipeError:  # the reader went away (`gpumon -l 1 | head`): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        result.append(0)
    finally:
        readings.sampler.close()


def _watch(prefix: str, readings: Readings, thread: threading.Thread, result: list[int],
           timeout_s: float) -> int:
    """Wait for the reading thread; give up when a reading stands still for ``timeout_s``."""
    said = False
    calls_seen: int | None = None
    progress_at = time.monotonic()
    while thread.is_alive():
        thread.join(WATCH_EVERY_S)
        now = time.monotonic()
        since = readings.busy_since
        # NvmlSource counts its calls; a source that does not (a machine over ssh) bounds
        # its own waits, so only the driver's calls are watched here.
        calls = getattr(readings.source, "calls_started", None)
        if since is None or calls is None or calls != calls_seen:
            calls_seen, progress_at = calls, now
            continue
        still = now - max(progress_at, since)
        if not said and still >= min(SAY_AFTER_S, timeout_s):
            said = True
            say(prefix, tr("the GPU driver has not answered {call} for {seconds} s; gpumon "
                           "gives up after {timeout} s without an answer (--timeout).",
                           call=_call_name(readings.source), seconds=f"{still:.0f}",
                           timeout=f"{timeout_s:g}"))
        if still >= timeout_s:
            return 1
    return result[0] if result else 1


def _call_name(source: Source) -> str:
    """The NVML function the source called last (NvmlSource.last_call), or words for it."""
    fn = getattr(source, "last_call", None)
    name = getattr(fn, "__name__", None)
    return name if isinstance(name, str) else tr("a call")
