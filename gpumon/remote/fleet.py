"""RemoteFleet: many machines over SSH as one overview, the way PrometheusSource gives a cluster.

Each machine has its own :class:`~gpumon.remote.feed.StreamFeed` (an ssh child and a reader
thread), so a machine that hangs or fails never holds up the others. A tick waits for no
one: it gathers what every feed has now (``Snapshot.hosts``, one HostView a machine, up
while its readings are fresh, else down with the sentence why) and hands the machine in
focus as the snapshot's own GPUs, processes and topology, so its whole Monitor shows. The
first machine is in focus until another is chosen (``set_focus``, from any thread).
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Mapping, Sequence

from gpumon.i18n import ntr, tr
from gpumon.remote.feed import StreamFeed
from gpumon.remote.source import FALLBACK_SOURCE, SOURCE_NAME, MachineView
from gpumon.ssh.backoff import Backoff
from gpumon.ssh.command import SshOptions
from gpumon.ssh.target import Target
from gpumon.telemetry.model.types import (
    GpuInfo,
    HostView,
    MachineInfo,
    Snapshot,
    SourceState,
    SourceStatus,
)


class RemoteFleet:
    """The GPUs of many machines reached with ``ssh``. Plain calls; each machine's feed reads
    on a thread of its own."""

    def __init__(self, targets: Sequence[Target], options: SshOptions | None = None,
                 interval_s: float = 1.0, *, extra_args: tuple[str, ...] = (),
                 env: Mapping[str, str] | None = None,
                 backoff: tuple[float, float] = (1.0, 60.0)) -> None:
        """``backoff``: the first and the longest wait between reconnects of a machine."""
        self.options = options or SshOptions()
        self.interval_s = interval_s
        self._extra, self._env, self._backoff = extra_args, env, backoff
        self._lock = threading.Lock()
        self._targets: list[Target] = list(targets)
        self._feeds: dict[str, StreamFeed] = {}
        self._views: dict[str, MachineView] = {}
        self._focus: str | None = None
        self._open = False
        self._machine = MachineInfo(host_name=tr("Machines over SSH"), source_name=SOURCE_NAME)

    @property
    def names(self) -> list[str]:
        with self._lock:
            return [t.name for t in self._targets]

    def add(self, target: Target) -> bool:
        """Watch one more machine (File ▸ Add machine…); False when it is watched already."""
        with self._lock:
            if any(t.name == target.name for t in self._targets):
                return False
            self._targets.append(target)
            if self._open:
                self._start(target)
            return True

    def _start(self, target: Target) -> None:
        feed = StreamFeed(target, self.options, self.interval_s, extra_args=self._extra,
                          env=self._env, backoff=Backoff(*self._backoff))
        self._feeds[target.name] = feed
        self._views[target.name] = MachineView(target, self.interval_s)
        feed.start()

    # -- the Source protocol ---------------------------------------------------------------------
    def open(self) -> SourceStatus:
        with self._lock:
            if not self._open:
                self._open = True
                for target in self._targets:
                    self._start(target)
        return SourceStatus(SourceState.OK, tr("Reading machines over SSH."))

    def machine(self) -> MachineInfo:
        return self._machine

    def gpus(self) -> list[GpuInfo]:
        with self._lock:
            view = self._views.get(self._focus or "")
            return list(view.gpus) if view is not None else []

    def close(self) -> None:
        with self._lock:
            feeds = list(self._feeds.values())
            self._feeds.clear()
            self._open = False
        for feed in feeds:  # all asked first, then each joined: one second in all
            feed.ask_to_stop()
        for feed in feeds:
            feed.stop(join_s=1.0)

    def wait_all(self, timeout_s: float) -> None:
        """Wait until every machine sent a snapshot or failed (``--once``), at most
        ``timeout_s`` in all."""
        deadline = time.monotonic() + timeout_s
        with self._lock:
            feeds = list(self._feeds.values())
        for feed in feeds:
            feed.wait_for(lambda s: s.lines > 0 or bool(s.problem),
                          max(0.0, deadline - time.monotonic()))

    # -- focus -------------------------------------------------------------------------------------
    @property
    def focus(self) -> str | None:
        with self._lock:
            return self._focus

    def set_focus(self, host: str | None) -> None:
        with self._lock:
            self._focus = host

    def feed(self, name: str) -> StreamFeed | None:
        with self._lock:
            return self._feeds.get(name)

    # -- reading -----------------------------------------------------------------------------------
    def sample(self, include_slow: bool = True) -> Snapshot:
        """Every machine as it is now, and the one in focus in full; never waits."""
        start = time.monotonic()
        now = time.time()
        with self._lock:
            items = [(t.name, self._feeds.get(t.name), self._views.get(t.name))
                     for t in self._targets]
            focus = self._focus
        hosts: list[HostView] = []
        focused: Snapshot | None = None
        for name, feed, view in items:
            if feed is None or view is None:
                continue
            snap = view.take(feed.state(), now, start)
            gpus = tuple(dataclasses.replace(g, host=name) for g in snap.gpus)
            up = view.fresh and snap.status.usable
            say = not up or snap.machine.source_name == FALLBACK_SOURCE  # the missing fields
            hosts.append(HostView(host=name, up=up, message=snap.status.message if say else "",
                                  gpus=gpus, samples=snap.samples, migs=snap.migs,
                                  driver_version=snap.machine.driver_version))
            if focused is None or name == focus:
                focused = dataclasses.replace(snap, gpus=gpus)
        n = sum(len(h.gpus) for h in hosts)
        status = SourceStatus(SourceState.OK if n else SourceState.NO_GPUS,
                              tr("{gpus} on {machines}, over SSH.",
                                 gpus=ntr("{n} GPU", "{n} GPUs", n),
                                 machines=ntr("{n} machine", "{n} machines", len(hosts))))
        base = focused or Snapshot(timestamp_s=now, machine=self._machine, status=status)
        return dataclasses.replace(
            base, timestamp_s=now, status=status, hosts=tuple(hosts),
            read_duration_s=max(1e-6, time.monotonic() - start),
            simulated=any(g.simulated for h in hosts for g in h.gpus))
