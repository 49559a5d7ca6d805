"""Facts derived from a Snapshot that several views show (window, --once, exports), so
each is computed in one place: which GPUs give no process list, the time a copied
snapshot shows, and whether a process's CPU % waits for a second reading."""

from __future__ import annotations

import dataclasses

from gpumon.i18n import N_, tr
from gpumon.telemetry.model.types import Snapshot

PROCESS_LIST_UNSUPPORTED = N_("Process list not supported by this GPU/driver")


def unlisted_gpus(snap: Snapshot) -> list[int]:
    """Indices of the GPUs (not lost) whose driver gave no process list on this tick."""
    return [s.index for s in snap.samples if not s.lost and not s.processes_supported]


def process_list_note(snap: Snapshot) -> str:
    """The sentence to show where processes would be, or "" when every list was read.

    gpustat says the same ("Not Supported"): an empty table would claim that nothing runs.
    """
    unlisted = unlisted_gpus(snap)
    if not unlisted:
        return ""
    readable = [s for s in snap.samples if not s.lost]
    if len(unlisted) == len(readable) == 1:
        return tr(PROCESS_LIST_UNSUPPORTED) + "."
    which = ", ".join(str(i) for i in unlisted)
    return tr("{what} (GPU {which}).", what=tr(PROCESS_LIST_UNSUPPORTED), which=which)


def cpu_pending(snap: Snapshot) -> bool:
    """Whether a process's host CPU % waits for a second reading: its host was read (RSS
    known) but CPU % is a rate over time, so the first reading of a process has none."""
    return any(p.cpu_pct is None and p.host_rss_bytes is not None for p in snap.processes)


def as_copied_at(snap: Snapshot, now_s: float) -> Snapshot:
    """The snapshot to print when it is copied at ``now_s``. A source that gives no data
    (no driver) sends one status snapshot when the window opens and none after it, so its
    text showed the window's start time; what it says ("no driver") holds now, so it is
    stamped with the time of the copy. A snapshot with readings keeps their time."""
    if snap.status.usable:
        return snap
    return dataclasses.replace(snap, timestamp_s=now_s)
