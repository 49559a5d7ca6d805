"""How often NvmlSource reads what a driver makes costly: the reading budget.

Most NVML calls cost 2-12 us, but not all. On an H200 (driver 580.159.04, median of 20 calls)
the energy counter spins 3.3 ms of the caller's CPU, per-process utilization 2.8 ms (even to
say there is no sample), and the PCIe throughput call sleeps 21 ms a direction while NVML
samples the link. Read every tick at 1 s, the energy counter alone was 3.3 ms of CPU per GPU
per second, and each slow tick held the sampler 48 ms per GPU.

So NvmlSource times these "priced" readings per GPU as it makes them. A reading whose CPU
cost is larger than its share of the budget (:data:`SHARE_S`, CPU seconds per GPU per second)
is read only every ``cost / share`` seconds (at most :data:`MAX_EVERY_S`), its last value
kept in between; a cheap one is read every time it is asked, and only every
:data:`REMEASURE_EVERY`-th read is timed again. A reading whose wall time is longer than
:data:`HOLD_S` holds the tick (it sleeps): the PCIe rates then move to a thread of their own
(pcie.py). Each GPU learns from its own first reading, so a one-shot reading (``--once``)
still has every value. Two costly readings of one GPU never fall on the same tick: the second
waits for the next one it is asked on (the energy counter and per-process utilization
together held a tick 6 ms a GPU).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

T = TypeVar("T")

#: CPU seconds per GPU per second that one priced reading may cost on average. Two priced
#: readings on the tick (the energy counter and per-process utilization) then stay within
#: half of gpumon's budget of 1 ms per GPU per second on an H200: 3.3 ms / 0.25 ms/s reads
#: the energy counter every ~13 s, per-process utilization every ~11 s (on a slow tick).
SHARE_S = 0.25e-3
#: A costly reading is still read at least this often (seconds): a value is never older.
MAX_EVERY_S = 30.0
#: Below this period a reading is read every time it is asked (seconds).
MIN_EVERY_S = 1.0
#: A reading whose wall time is longer than this holds the tick (seconds per GPU).
HOLD_S = 5e-3
#: A cheap reading is timed again once in this many reads (timing costs ~1 us).
REMEASURE_EVERY = 64
_SMOOTH = 0.25  # weight of the newest cost in the running average (one spike: 15.7 ms)


@dataclass
class _Priced:
    """What one GPU's priced reading has cost, and when it is next due."""

    cpu_s: float = 0.0  # running average of its CPU time per read
    wall_s: float = 0.0  # and of its wall time
    timed: int = 0  # reads timed so far
    reads: int = 0
    every_s: float = 0.0  # the period its cost allows; 0: every time it is asked
    next_at: float = -math.inf
    last_at: float | None = None
    seen_every_s: float | None = None  # the time between its last two reads


class Budget:
    """Per GPU and priced reading (``key``): whether it is due, and its cost learnt by
    :meth:`read`. ``clock`` is the clock of the due times (the sampler's)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic,
                 share_s: float = SHARE_S) -> None:
        self._clock = clock
        self._share_s = share_s
        self._priced: dict[tuple[str, int], _Priced] = {}
        self._marks: dict[int, tuple[tuple[str, float], ...]] = {}
        self._costly_read: set[int] = set()  # GPUs a costly reading was made of this tick

    def tick(self) -> None:
        """A new reading of the GPUs begins (NvmlSource.sample)."""
        self._costly_read.clear()

    def due(self, key: str, gpu: int) -> bool:
        """Whether ``key`` of ``gpu`` should be read now: always until its cost is known;
        not on a tick that already made a costly reading of that GPU."""
        p = self._priced.get((key, gpu))
        if p is None:
            return True
        return self._clock() >= p.next_at and (p.every_s == 0.0 or gpu not in self._costly_read)

    def read(self, key: str, gpu: int, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` now, timed when its cost is not known well enough; what it raises
        passes through (its cost is then not learnt)."""
        p = self._priced.get((key, gpu))
        if p is None:
            p = self._priced[(key, gpu)] = _Priced()
        now = self._clock()
        if p.every_s == 0.0 and p.timed >= 2 and p.reads % REMEASURE_EVERY:
            value = fn(*args)  # cheap: not timed this time
        else:
            c0, w0 = time.thread_time(), time.perf_counter()
            value = fn(*args)
            self._learn(p, gpu, time.thread_time() - c0, time.perf_counter() - w0)
        p.reads += 1
        if p.last_at is not None and p.every_s > 0.0:
            p.seen_every_s = now - p.last_at
            self._marks.pop(gpu, None)
        p.last_at = now
        p.next_at = now + p.every_s
        if p.every_s > 0.0:
            self._costly_read.add(gpu)
        return value

    def _learn(self, p: _Priced, gpu: int, cpu_s: float, wall_s: float) -> None:
        first = p.timed == 0
        p.cpu_s = cpu_s if first else p.cpu_s + _SMOOTH * (cpu_s - p.cpu_s)
        p.wall_s = wall_s if first else p.wall_s + _SMOOTH * (wall_s - p.wall_s)
        p.timed += 1
        every = p.cpu_s / self._share_s
        every = 0.0 if every < MIN_EVERY_S else min(every, MAX_EVERY_S)
        if every != p.every_s:
            p.every_s, p.seen_every_s = every, None
            self._marks.pop(gpu, None)

    def holds_tick(self, key: str, gpu: int) -> bool:
        """Whether ``key`` of ``gpu`` takes longer than :data:`HOLD_S` (wall) a read."""
        p = self._priced.get((key, gpu))
        return p is not None and p.wall_s > HOLD_S

    def every_s(self, key: str, gpu: int) -> float:
        """Seconds between two reads of ``key`` on ``gpu``: as seen between the last two,
        else what its cost allows; 0 when it is read every time it is asked."""
        p = self._priced.get((key, gpu))
        if p is None or p.every_s == 0.0:
            return 0.0
        return p.seen_every_s if p.seen_every_s is not None else p.every_s

    def marks(self, gpu: int) -> tuple[tuple[str, float], ...]:
        """(key, seconds between reads) of each reading of ``gpu`` read less often than
        asked, for GpuSample.read_every_s (kept until a period changes)."""
        got = self._marks.get(gpu)
        if got is None:
            got = self._marks[gpu] = tuple(
                (key, self.every_s(key, index)) for (key, index) in self._priced
                if index == gpu and self.every_s(key, index) > 0.0)
        return got

    def forget(self) -> None:
        self._priced.clear()
        self._marks.clear()
