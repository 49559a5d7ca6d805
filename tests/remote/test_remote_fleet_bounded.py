"""The overview over ssh keeps only what each machine said last (issue 53, item 1): a machine
whose GPU UUIDs change at every reading (MIG reconfigured in a loop, a buggy driver) costs
its newest GPUs, never a table of every UUID it ever named."""

from __future__ import annotations

import os
import time
import tracemalloc

from gpumon.remote.feed import FeedState
from gpumon.remote.fleet import RemoteFleet
from gpumon.remote.source import MachineView
from gpumon.ssh.target import parse_target
from gpumon.telemetry.model.types import GpuInfo, MachineInfo, Snapshot, SourceState, SourceStatus

READINGS = 3000


class ChangingFeed:
    """A machine's feed whose every reading names two GPUs never seen before."""

    def __init__(self) -> None:
        self.lines = 0

    def state(self) -> FeedState:
        self.lines += 1
        n = self.lines
        gpus = tuple(GpuInfo(i, "Fake GPU", f"GPU-{n:08d}-{i}", f"00000000:0{i}:00.0", 2**34)
                     for i in range(2))
        snap = Snapshot(timestamp_s=time.time(), machine=MachineInfo("lab1", "NVML"),
                        status=SourceStatus(SourceState.OK, ""), gpus=gpus)
        return FeedState(snap, time.monotonic(), True, "", lines=n)


def test_fresh_uuids_at_every_reading_keep_the_fleet_bounded() -> None:
    target = parse_target("lab1")
    fleet = RemoteFleet([target])
    feed = ChangingFeed()
    # the machine's feed without its ssh child: what the fleet keeps is the question
    fleet._feeds[target.name] = feed  # type: ignore[assignment]
    fleet._views[target.name] = MachineView(target, 1.0)
    tracemalloc.start()
    try:
        for _ in range(200):  # every cache warm
            fleet.sample()
        before = tracemalloc.take_snapshot()
        uuids: set[str] = set()
        for _ in range(READINGS):
            snap = fleet.sample()
            uuids |= {g.uuid for h in snap.hosts for g in h.gpus}
        after = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    assert len(uuids) == 2 * READINGS  # every reading named new GPUs, and all were shown
    host = snap.hosts[0]
    assert host.up and [g.uuid for g in host.gpus] == [f"GPU-{feed.lines:08d}-{i}"
                                                       for i in range(2)]
    view = fleet._views[target.name]
    assert len(view.gpus) == 2  # only the newest reading's GPUs are kept
    # 3,000 readings of two new GPUs each held nothing more than a few stray objects. Only
    # the fleet's own modules count: other threads of this test process (an xdist worker's
    # fork server reader) allocate meanwhile too, once 66 kB in playground/client/forkserver.py
    grown = sum(s.size_diff for s in after.compare_to(before, "filename")
                if f"gpumon{os.sep}remote{os.sep}" in str(s.traceback))
    assert grown < 64 * 1024, grown
