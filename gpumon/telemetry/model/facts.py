"""Facts derived from a Snapshot that several views show (window, --once, exports), so
each is computed in one place: which GPUs give no process list, the time a copied
snapshot shows, and whether a process's CPU % waits for a second reading."""

from __future__ import annotations

import dataclasses

from gpumon.i18n import N_, tr
from gpumon.telemetry.model.types import GpuProcess, Snapshot
from gpumon.units import MIB

PROCESS_LIST_UNSUPPORTED = N_("Process list not supported by this GPU/driver")
# Used memory no process accounts for that is more than a driver keeps for itself on an idle
# GPU (a few MiB on Hopper with driver 580; the reserved memory is counted apart from it).
HIDDEN_GAP_BYTES = 256 * MIB


def unlisted_gpus(snap: Snapshot) -> list[int]:
    """Indices of the GPUs (not lost) whose driver gave no process list on this tick."""
    return [s.index for s in snap.samples if not s.lost and not s.processes_supported]


def process_list_note(snap: Snapshot) -> str:
    """The sentences to show where processes would be, or "" when every list was read and
    every process on it is seen: which GPUs give no list, and the memory of processes this
    machine cannot see (``hidden_memory``).

    gpustat says the first ("Not Supported"): an empty table would claim that nothing runs.
    """
    notes = []
    unlisted = unlisted_gpus(snap)
    readable = [s for s in snap.samples if not s.lost]
    if len(unlisted) == len(readable) == 1:
        notes.append(tr(PROCESS_LIST_UNSUPPORTED) + ".")
    elif unlisted:
        notes.append(tr("{what} (GPU {which}).", what=tr(PROCESS_LIST_UNSUPPORTED),
                        which=", ".join(str(i) for i in unlisted)))
    hidden = hidden_memory(snap)
    if hidden >= MIB:
        notes.append(tr("{mib} MiB are used by processes this container cannot see; run it "
                        "with the host's PID namespace (--pid=host) to list them.",
                        mib=f"{hidden // MIB:,}"))
    return " ".join(notes)


def hidden_memory(snap: Snapshot) -> int:
    """Bytes of GPU memory held by processes this machine cannot see: those the driver lists
    with PIDs that /proc does not know (the host's PIDs, in a container); and, where gpumon
    runs in a PID namespace of its own, the used memory no listed process accounts for, when
    it is at least ``HIDDEN_GAP_BYTES`` (the driver lists nothing there, or only this
    container's processes). A GPU without a process list counts none of the second kind."""
    hidden = sum(p.gpu_mem_bytes or 0 for p in snap.processes if not p.seen)
    if not snap.machine.own_pid_namespace:
        return hidden
    listed: dict[int, int] = {}
    for p in snap.processes:
        listed[p.gpu_index] = listed.get(p.gpu_index, 0) + (p.gpu_mem_bytes or 0)
    for s in snap.samples:
        if s.lost or not s.processes_supported or s.mem_used_bytes is None:
            continue
        gap = s.mem_used_bytes - listed.get(s.index, 0)
        if gap >= HIDDEN_GAP_BYTES:
            hidden += gap
    return hidden


def cpu_pending(snap: Snapshot) -> bool:
    """Whether a process's host CPU % waits for a second reading: its host was read (RSS
    known) but CPU % is a rate over time, so the first reading of a process has none."""
    return any(p.cpu_pct is None and p.host_rss_bytes is not None for p in snap.processes)


GPU_RATE_KEYS = ("sm_util_pct", "mem_bw_util_pct", "enc_util_pct", "dec_util_pct")


def with_gpu_rates_of(first: Snapshot, second: Snapshot) -> Snapshot:
    """``second`` with each process's GPU utilization from ``first`` where ``second`` has
    none. A reading taken again for a rate (GPM's activity, CPU %: ``--once``) sees only the
    driver's samples of the half second between the two readings, and the first took every
    sample the driver held: a process that ran in the seconds before would show N/A."""
    earlier = {(p.gpu_index, p.pid): p for p in first.processes}

    def kept(p: GpuProcess) -> GpuProcess:
        old = earlier.get((p.gpu_index, p.pid))
        if old is None or any(getattr(p, k) is not None for k in GPU_RATE_KEYS):
            return p
        return dataclasses.replace(p, **{k: getattr(old, k) for k in GPU_RATE_KEYS})

    return dataclasses.replace(second, processes=tuple(kept(p) for p in second.processes))


def as_copied_at(snap: Snapshot, now_s: float) -> Snapshot:
    """The snapshot to print when it is copied at ``now_s``. A source that gives no data
    (no driver) sends one status snapshot when the window opens and none after it, so its
    text showed the window's start time; what it says ("no driver") holds now, so it is
    stamped with the time of the copy. A snapshot with readings keeps their time."""
    if snap.status.usable:
        return snap
    return dataclasses.replace(snap, timestamp_s=now_s)
