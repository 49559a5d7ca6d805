"""RemoteSource: one machine's GPUs over SSH, through the Source protocol the window samples.

The remote gpumon reads its own NVML with its own budget and streams snapshots
(``gpumon stream``); a :class:`~gpumon.remote.feed.StreamFeed` thread keeps the newest, and
``sample()`` only hands it over, so the sampling thread never waits on the network for long.
The snapshot is the remote's, with the machine named as the user named it (``lab1``) and its
source ``SSH`` (the window then offers no signals: those PIDs are not this machine's), or
``SSH nvidia-smi`` where gpumon is not installed there and nvidia-smi is read instead, its
status then naming the fields nvidia-smi does not give.

When the link is bad the GPUs stay on screen, shown lost with the reason, as the cluster
view shows a machine that is down: no line for ``STALE_INTERVALS`` intervals (the values are
stale), or the connection ended (ssh's reason, in one sentence, while it reconnects).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping

from gpumon.i18n import tr
from gpumon.remote import smi
from gpumon.remote.feed import FeedState, StreamFeed
from gpumon.ssh.backoff import Backoff
from gpumon.ssh.command import SshOptions
from gpumon.ssh.target import Target
from gpumon.telemetry.model.types import (
    GpuInfo,
    GpuProcess,
    GpuSample,
    MachineInfo,
    Snapshot,
    SourceState,
    SourceStatus,
)
from gpumon.untrusted import for_terminal

SOURCE_NAME = "SSH"
FALLBACK_SOURCE = "SSH nvidia-smi"  # gpumon is not there: read through nvidia-smi (smi.py)
STALE_INTERVALS = 3.0
NEW_LINE_WAIT_S = 0.5  # at most this long a tick waits for a line due about now


#: The playground kernels this window runs on each machine, by host as the user named it
#: (``client/ssh_kernel.py``): their processes count as "this process" there, as a local
#: kernel's do here (procinfo.set_own_children), for the NVML memory line of the Playground.
kernels: dict[str, frozenset[int]] = {}


def own_marked(processes: tuple[GpuProcess, ...], own: frozenset[int] | None
               ) -> tuple[GpuProcess, ...]:
    """``processes`` with those of ``own`` marked ``is_self``."""
    if not own:
        return processes
    return tuple(dataclasses.replace(p, is_self=True) if p.pid in own and not p.is_self
                 else p for p in processes)


class MachineView:
    """What one machine's feed gives to show now: the newest snapshot, or the last known
    GPUs lost with why. Keeps what it showed last, so a tick without a new line repeats it."""

    def __init__(self, target: Target, interval_s: float) -> None:
        self.target = target
        self.interval_s = interval_s
        self.seen = 0  # the feed's line count at the last take
        self._last: Snapshot | None = None
        self.machine = MachineInfo(host_name=target.name, source_name=SOURCE_NAME)
        self.gpus: tuple[GpuInfo, ...] = ()
        self.fresh = False  # the last take was a reading, not a reason

    def take(self, state: FeedState, now: float, mono_now: float) -> Snapshot:
        """The snapshot to show for ``state`` at wall time ``now`` (monotonic ``mono_now``)."""
        self.fresh = (state.connected and state.snapshot is not None
                      and state.arrived_s is not None
                      and mono_now - state.arrived_s <= STALE_INTERVALS * self.interval_s)
        if self.fresh and state.snapshot is not None:
            if state.lines == self.seen and self._last is not None:
                return self._last  # no new line yet: the newest again, as it was
            self.seen = state.lines
            snap = state.snapshot
            machine = dataclasses.replace(snap.machine, host_name=self.target.name,
                                          source_name=FALLBACK_SOURCE if (
                                              snap.machine.source_name == smi.SOURCE_NAME)
                                          else SOURCE_NAME)
            self.machine, self.gpus = machine, snap.gpus
            status = snap.status
            if not status.usable:  # the remote's own words say "this computer": name it
                status = dataclasses.replace(status, message=tr(
                    "On {host}: {message}", host=self.host, message=status.message))
            self._last = dataclasses.replace(snap, machine=machine, status=status,
                                             read_duration_s=max(snap.read_duration_s, 1e-6),
                                             processes=own_marked(snap.processes,
                                                                  kernels.get(self.target.name)))
            return self._last
        self._last = None
        if state.connected and state.arrived_s is not None:
            why = tr("No reading from {host} for {n} s: the machine or the link is stalled.",
                     host=self.host, n=f"{mono_now - state.arrived_s:.0f}")
        elif state.connected:
            why = ""  # the header came; the first snapshot is on its way
        else:
            why = state.problem
        if not why:
            return Snapshot(timestamp_s=now, machine=self.machine, status=SourceStatus(
                SourceState.NO_GPUS, tr("Connecting to {host} over SSH…", host=self.host)),
                gpus=self.gpus, read_duration_s=1e-6)
        return self.without(why, now)

    def without(self, why: str, now: float) -> Snapshot:
        """The machine's last known GPUs, each lost with ``why``; the status says it too."""
        status = SourceStatus(SourceState.ERROR, why,
                              tr("gpumon keeps trying, and the values come back by "
                                 "themselves when the machine answers again."))
        samples = tuple(GpuSample(index=g.index, timestamp_s=now, lost=True, message=why)
                        for g in self.gpus)
        return Snapshot(timestamp_s=now, machine=self.machine, status=status,
                        gpus=self.gpus, samples=samples, read_duration_s=1e-6)

    @property
    def host(self) -> str:
        return for_terminal(self.target.name)


class RemoteSource:
    """The GPUs of one machine reached with ``ssh``. Plain calls; a thread of its own reads."""

    def __init__(self, target: Target, options: SshOptions | None = None,
                 interval_s: float = 1.0, *, first_wait_s: float = 0.0,
                 extra_args: tuple[str, ...] = (), env: Mapping[str, str] | None = None,
                 backoff: Backoff | None = None) -> None:
        """``first_wait_s``: how long ``open()`` waits for the first snapshot or the reason
        there is none (``--once``); 0: the window shows "connecting" meanwhile."""
        self.target = target
        self.options = options or SshOptions()
        self.interval_s = interval_s
        self.first_wait_s = first_wait_s
        self._make_feed = lambda: StreamFeed(target, self.options, interval_s,
                                             extra_args=extra_args, env=env,
                                             backoff=backoff or Backoff())
        self.feed: StreamFeed | None = None
        self.view = MachineView(target, interval_s)

    # -- the Source protocol -------------------------------------------------------------------
    def open(self) -> SourceStatus:
        if self.feed is None:
            self.feed = self._make_feed()
            self.feed.start()
        if self.first_wait_s > 0:
            self.feed.wait_for(lambda s: s.lines > 0 or bool(s.problem), self.first_wait_s)
        return SourceStatus(SourceState.OK, tr("Reading the GPUs of {host} over SSH.",
                                               host=self.view.host))

    def machine(self) -> MachineInfo:
        return self.view.machine

    def gpus(self) -> list[GpuInfo]:
        return list(self.view.gpus)

    def close(self) -> None:
        feed, self.feed = self.feed, None
        if feed is not None:
            feed.stop()

    def sample(self, include_slow: bool = True) -> Snapshot:
        """The newest snapshot of the machine, or its GPUs shown lost with why; never
        raises, and waits at most ``NEW_LINE_WAIT_S`` for a line that is about due."""
        feed = self.feed
        if feed is None:
            return self.view.without(tr("The connection to {host} is closed.",
                                        host=self.view.host), time.time())
        seen = self.view.seen
        state = feed.wait_for(lambda s: s.lines > seen or bool(s.problem),
                              min(NEW_LINE_WAIT_S, self.interval_s / 2))
        return self.view.take(state, time.time(), time.monotonic())
