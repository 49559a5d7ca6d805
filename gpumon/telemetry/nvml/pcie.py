"""Each GPU's PCIe receive and transmit rates, without holding the sampler.

``nvmlDeviceGetPcieThroughput`` does not read a counter: NVML samples the link for 20 ms and
returns the rate, asleep all the while (21 ms a direction on an H200). Read on the tick, two
calls per GPU held the sampler 42 ms per GPU on each slow tick (0.34 s for 8 GPUs).

:class:`PcieRates` reads a GPU's rates on its slow ticks while that is cheap (a driver that
answers at once, the fake NVML of the tests). Once the budget (budget.py) has seen the call
hold the tick, that GPU's rates come from a thread of their own: each slow tick asks it for a
new pass over those GPUs and the tick takes the rates of the last pass (one slow period old,
plus the pass). The thread waits for a request, so it costs no wake-ups in between.

Where a GPU has GPM, its counters give the rates at every reading without a wait, and
NvmlSource takes those instead (activity.py); it asks this module only for the other GPUs
(``NvmlSource.pcie_rates``).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from gpumon.telemetry.nvml.budget import Budget
from gpumon.telemetry.nvml.readers import READERS, Guarded, first_of
from gpumon.telemetry.nvml.status import GpuLost

log = logging.getLogger(__name__)
T = TypeVar("T")

RX, TX = "pcie_rx_bytes_per_s", "pcie_tx_bytes_per_s"
KEY = "pcie"  # the budget's name for both directions of one GPU
Rates = tuple[float | None, float | None]


class _OffTick:
    """The source's guarded calls from the PCIe thread: failures go to ``failed`` (not the
    tick's), and they do not count as the reading's progress (``NvmlSource.call``)."""

    def __init__(self, call: Callable[..., Any], lacks: Callable[[str], bool]) -> None:
        self._call = call
        self.lacks = lacks
        self.failed: list[str] = []

    def call(self, fn: Callable[..., T], *args: Any, name: str | None = None) -> T | None:
        value: T | None = self._call(fn, *args, name=name, off_tick=self.failed)
        return value

    def first(self, fns: Sequence[Callable[..., T]], *args: Any) -> T | None:
        return first_of(self, fns, *args)


def read_rates(s: Guarded, handle: Any) -> Rates:
    """Both directions through the metric table's readers (bytes/s; None: not supported)."""
    return READERS[RX](s, handle, None, None), READERS[TX](s, handle, None, None)


class PcieRates:
    """PCIe rates per GPU: on the tick while cheap, else from the thread (module doc)."""

    def __init__(self, source: Guarded, call: Callable[..., Any], budget: Budget,
                 clock: Callable[[], float] = time.monotonic) -> None:
        """``clock``: the sampler's, on which the time between two passes is told."""
        self._source = source
        self._clock = clock
        self._guard = _OffTick(call, source.lacks)
        self._budget = budget
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._off_tick: set[int] = set()  # GPUs whose rates the thread reads
        self._wanted: dict[int, Any] = {}  # gpu -> handle for the next pass
        self._latest: dict[int, tuple[Rates, tuple[str, ...]]] = {}  # rates, failed calls
        self._asked: dict[int, tuple[float, float | None]] = {}  # gpu -> (last, seen every)
        self._stopped = threading.Event()  # the running thread's; a new one for the next
        self._thread: threading.Thread | None = None

    def rates(self, gpu: int, handle: Any, fresh: bool, last: Rates | None
              ) -> tuple[Rates, tuple[str, ...]]:
        """The rates of ``gpu`` for this tick and the off-tick calls that failed for them;
        ``fresh``: a slow tick (read them, or ask the thread for a new pass); ``last``: the
        GPU's previous rates (None: no previous reading). Raises what the guarded call
        raises on the tick (GpuLost)."""
        if gpu in self._off_tick:
            with self._lock:
                if fresh:
                    self._wanted[gpu] = handle
                    self._wake.notify()
                    now, before = self._clock(), self._asked.get(gpu)
                    self._asked[gpu] = (now, None if before is None else now - before[0])
                return self._latest.get(gpu, ((None, None), ()))
        if not fresh and last is not None:
            return last, ()
        got = self._budget.read(KEY, gpu, read_rates, self._source, handle)
        if self._budget.holds_tick(KEY, gpu):
            if not self._off_tick:
                log.info("NVML's PCIe throughput call holds the reading (GPU %d); gpumon reads "
                         "PCIe rates on a thread of its own from now on", gpu)
            with self._lock:
                self._off_tick.add(gpu)
                self._latest[gpu] = (got, ())
                self._start()
        return got, ()

    def marks(self, gpu: int) -> tuple[tuple[str, float], ...]:
        """(key, seconds between two passes asked) of RX and TX when the thread reads them."""
        seen = self._asked.get(gpu)
        if seen is None or seen[1] is None:
            return ()
        return ((RX, seen[1]), (TX, seen[1]))

    def stop(self, timeout_s: float = 0.5) -> None:
        """End the thread (after the call under way, if any: at most ``timeout_s``)."""
        with self._lock:
            self._stopped.set()
            self._wake.notify_all()
            thread, self._thread = self._thread, None
            self._stopped = threading.Event()
            self._off_tick.clear()
            self._wanted.clear()
            self._latest.clear()
            self._asked.clear()
        if thread is not None:  # a call that hangs is left behind: the thread is a daemon
            thread.join(timeout_s)

    def _start(self) -> None:  # under the lock
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, args=(self._stopped,),
                                            name="gpumon-nvml-pcie", daemon=True)
            self._thread.start()

    def _run(self, stopped: threading.Event) -> None:
        while True:
            with self._lock:
                while not self._wanted and not stopped.is_set():
                    self._wake.wait()
                if stopped.is_set():
                    return
                wanted, self._wanted = self._wanted, {}
            for gpu, handle in wanted.items():
                self._guard.failed = []
                try:
                    got = read_rates(self._guard, handle)
                except GpuLost:  # the tick marks the GPU lost; it is not wanted until back
                    got = (None, None)
                with self._lock:
                    if stopped.is_set():
                        return
                    self._latest[gpu] = (got, tuple(self._guard.failed))
