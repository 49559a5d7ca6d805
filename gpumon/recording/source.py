"""RecordingSource: a recording played back through the Source protocol the window samples.

A replay clock (``ReplayClock``) says which moment of the recording is shown: it runs at 1x,
10x or 60x while playing, stands while paused, and jumps on a seek. ``sample()`` returns the
last recorded snapshot at or before that moment, exactly as it was recorded (the machine's
source named ``Recording``, so the window offers no signals to PIDs of another time), with the
recorded snapshots since the one shown before in ``backfill``, oldest first: at 60x a tick
of 1 s brings 60 of them, and the graphs get every one, not a sample of them. After a seek
the backfill is the ``backfill_s`` before the new moment, so the graphs' window is full at
once. Nothing new to show: the last snapshot again, the same object each time, without the
backfill it first came with.

A GPU the recording had and the snapshot lacks (it disappeared, or a read failed there) stays
on screen, lost with a sentence, so the panels are not rebuilt each time it comes and goes.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable

from gpumon.i18n import tr
from gpumon.recording.reader import Recording
from gpumon.telemetry.model.types import (
    GpuInfo,
    GpuSample,
    MachineInfo,
    Snapshot,
    SourceState,
    SourceStatus,
)
from gpumon.telemetry.sources.sampler import unavailable_snapshot

SOURCE_NAME = "Recording"
SPEEDS = (1.0, 10.0, 60.0)
MAX_BACKFILL = 36_000  # the History's largest capacity


class ReplayClock:
    """The moment of the recording shown: ``position()``; thread-safe."""

    def __init__(self, start_s: float, end_s: float,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.start_s, self.end_s = start_s, end_s
        self._clock = clock
        self._lock = threading.Lock()
        self._at = start_s  # the position when the clock last changed
        self._since = clock()
        self._playing = False
        self._speed = 1.0
        self.seeks = 0  # how many jumps so far: the source refills the graphs after one

    def position(self) -> float:
        with self._lock:
            return self._position()

    def _position(self) -> float:
        if not self._playing:
            return self._at
        return min(self.end_s, self._at + (self._clock() - self._since) * self._speed)

    @property
    def playing(self) -> bool:
        with self._lock:
            if self._playing and self._position() >= self.end_s:  # the end: stand there
                self._at, self._since, self._playing = self.end_s, self._clock(), False
            return self._playing

    @property
    def speed(self) -> float:
        return self._speed

    def _rebase(self) -> None:
        self._at, self._since = self._position(), self._clock()

    def set_playing(self, playing: bool) -> None:
        with self._lock:
            self._rebase()
            if playing and self._at >= self.end_s:  # play at the end: from the start again
                self._at = self.start_s
                self.seeks += 1
            self._playing = playing

    def set_speed(self, speed: float) -> None:
        with self._lock:
            self._rebase()
            self._speed = max(0.1, float(speed))

    def seek(self, t: float) -> None:
        with self._lock:
            self._at = min(self.end_s, max(self.start_s, t))
            self._since = self._clock()
            self.seeks += 1


class RecordingSource:
    """A recording as a Source; plain calls, safe from the sampling thread and the GUI."""

    def __init__(self, recording: Recording, *, backfill_s: float = 300.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.recording = recording
        self.clock = ReplayClock(recording.start_s, recording.end_s, clock)
        self.backfill_s = backfill_s
        self._lock = threading.Lock()
        self._shown = -1  # index of the snapshot shown last
        self._seeks = -1  # the clock's seek count when it was shown
        self._last: Snapshot | None = None
        first = recording.first
        self._gpus: dict[int, GpuInfo] = {g.index: g for g in first.gpus} if first else {}
        self._machine = MachineInfo(
            host_name=recording.host, source_name=SOURCE_NAME,
            driver_version=first.machine.driver_version if first else None,
            cuda_driver_version=first.machine.cuda_driver_version if first else None,
            nvml_version=first.machine.nvml_version if first else None,
            simulated=bool(first and first.simulated))

    def title(self) -> str:
        """"recording of HOST, DATE": what the window's title says."""
        date = self.recording.clock(self.recording.start_s).strftime("%Y-%m-%d %H:%M")
        return tr("recording of {host}, {date}", host=self.recording.host, date=date)

    # -- the Source protocol -------------------------------------------------------------------
    def open(self) -> SourceStatus:
        self.recording.reopen()
        if not len(self.recording):
            return SourceStatus(SourceState.ERROR, " ".join(self.recording.problems()),
                                tr("Open another recording with File ▸ Open recording…"))
        return SourceStatus(SourceState.OK, tr("Replaying {name}: a {title}.",
                                               name=self.recording.name, title=self.title()))

    def machine(self) -> MachineInfo:
        return self._machine

    def gpus(self) -> list[GpuInfo]:
        return list(self._gpus.values())

    def close(self) -> None:
        self.recording.close()

    def sample(self, include_slow: bool = True) -> Snapshot:
        """The recorded snapshot at the clock's moment, with those since the last one in its
        backfill; never raises."""
        rec = self.recording
        with self._lock:
            self.clock.playing  # noqa: B018 - stops the clock at the end
            position, seeks = self.clock.position(), self.clock.seeks
            i = max(0, rec.index_at(position))
            if seeks == self._seeks and i == self._shown and self._last is not None:
                return self._last
            if seeks != self._seeks or self._shown < 0 or i < self._shown:
                first = max(0, rec.index_at(position - self.backfill_s))
            else:
                first = self._shown + 1
            first = max(first, i - MAX_BACKFILL)
            snaps = [self._replayed(s) for _, s in rec.read_range(first, i)]
            if not snaps:
                earlier = rec.at_or_before(position)
                if earlier is None:
                    return unavailable_snapshot(SourceStatus(
                        SourceState.ERROR, " ".join(rec.problems())), self._machine)
                snaps = [self._replayed(earlier)]
            snap = dataclasses.replace(snaps[-1], backfill=tuple(snaps[:-1]))
            # asked again with nothing new, the snapshot comes without its backfill: the
            # window would take that backfill for a jump and keep only it
            self._shown, self._seeks = i, seeks
            self._last = dataclasses.replace(snap, backfill=()) if snap.backfill else snap
            return snap

    def _replayed(self, snap: Snapshot) -> Snapshot:
        """``snap`` as shown: the source named, the GPUs seen before kept (lost, with why)."""
        for g in snap.gpus:
            self._gpus[g.index] = g
        have = {s.index for s in snap.samples}
        missing = [i for i in sorted(self._gpus) if i not in have]
        gpus, samples = snap.gpus, snap.samples
        if missing:
            gpus = tuple(sorted({**{g.index: g for g in gpus},
                                 **{i: self._gpus[i] for i in missing}}.values(),
                                key=lambda g: g.index))
            samples = tuple(sorted((*samples, *(GpuSample(
                index=i, timestamp_s=snap.timestamp_s, lost=True,
                message=tr("GPU {index} is not in the recording at this moment.", index=i))
                for i in missing)), key=lambda s: s.index))
        machine = dataclasses.replace(snap.machine, source_name=SOURCE_NAME)
        return dataclasses.replace(snap, machine=machine, gpus=gpus, samples=samples,
                                   read_duration_s=max(snap.read_duration_s, 1e-6))
