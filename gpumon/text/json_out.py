"""A Snapshot as one JSON document (``gpumon --once --json``; ``--watch --json`` writes one
per line). Units are in the keys, as in the Snapshot (``mem_used_bytes``, ``power_w``);
``null`` means the GPU or driver does not report the value. The schema is
docs/snapshot.schema.json; ``schema`` names its version, raised when a key changes meaning.
"""

from __future__ import annotations

import dataclasses
import json
import math
from typing import Any

from gpumon.telemetry.history.csv_rows import stamps
from gpumon.telemetry.model.health import CLOCK_REASONS, as_mask
from gpumon.telemetry.model.metrics import ACTIVITY_PCT_KEYS
from gpumon.telemetry.model.topology import UNKNOWN, Topology
from gpumon.telemetry.model.types import GpuInfo, GpuProcess, GpuSample, MigSample, Snapshot

SCHEMA = "gpumon.snapshot/1"
_SAMPLE_SKIP = {"index", "timestamp_s", "lost", "message", "processes_supported", "failed_reads",
                "activity_state", "nvlink_links", "read_every_s", "implausible"}
SAMPLE_KEYS = tuple(f.name for f in dataclasses.fields(GpuSample) if f.name not in _SAMPLE_SKIP)


def _finite(value: object) -> object:
    """JSON has no NaN or infinity: such a reading is null, like an unsupported one."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _gpu(info: GpuInfo | None, sample: GpuSample | None, index: int,
         migs: list[MigSample], simulated: bool) -> dict[str, Any]:
    lost = sample is not None and sample.lost
    gpu: dict[str, Any] = {
        "index": index,
        "name": info.name if info else None,
        "uuid": info.uuid if info else None,
        "pci_bus_id": info.pci_bus_id if info else None,
        "simulated": bool(simulated or (info is not None and info.simulated)),
        "timestamp_epoch_s": sample.timestamp_s if sample is not None else None,
        "lost": lost,
        "lost_message": sample.message if lost and sample is not None else None,
        "processes_supported": sample.processes_supported if sample is not None else None,
    }
    for key in SAMPLE_KEYS:
        gpu[key] = None if sample is None or lost else _finite(getattr(sample, key))
    mask = as_mask(gpu["clocks_event_reasons"])
    gpu["clocks_event_reasons"] = mask
    gpu["clocks_event_reason_names"] = None if mask is None else [
        name for bit, name, _ in CLOCK_REASONS if mask & bit]
    if gpu["energy_mj"] is not None:  # a whole number of mJ, as NVML counts it
        gpu["energy_mj"] = int(gpu["energy_mj"])
    state = sample.activity_state if sample is not None and not lost else None
    gpu["activity_state"] = None if state is None else state.value
    gpu["nvlink_links"] = [] if sample is None or lost else [
        {"link": r.link, "rx_bytes_per_s": _finite(r.rx_bytes_per_s),
         "tx_bytes_per_s": _finite(r.tx_bytes_per_s)} for r in sample.nvlink_links]
    gpu["mig_devices"] = [
        {"gpu_instance_id": m.gpu_instance_id, "compute_instance_id": m.compute_instance_id,
         "uuid": m.uuid, "name": m.name, "mem_total_bytes": m.mem_total_bytes,
         "mem_used_bytes": m.mem_used_bytes,
         **{key: _finite(getattr(m, key)) for key in ACTIVITY_PCT_KEYS},
         "activity_state": None if m.activity_state is None else m.activity_state.value}
        for m in migs]
    return gpu


def topology_dict(t: Topology | None) -> dict[str, Any] | None:
    """The ``nvidia-smi topo -m`` matrix as JSON: each GPU's place and links, the paths and
    the P2P read status between GPUs (rows and columns in ``gpus``' order; null: unknown)."""
    if t is None:
        return None
    return {
        "gpus": [{"index": p.index, "pci_bus_id": p.bus_id, "nvlinks_total": p.links_total,
                  "nvlinks": [{"link": n.link, "remote_pci_bus_id": n.remote_bus_id,
                               "remote": n.remote, "remote_gpu_index": n.remote_gpu}
                              for n in p.nvlinks],
                  "cpu_affinity": p.cpu_affinity, "numa_affinity": p.numa_affinity,
                  "numa_id": p.numa_id} for p in t.places],
        "paths": [[None if c == UNKNOWN else c for c in row] for row in t.paths],
        "p2p_read": [[None if c == UNKNOWN else c for c in row] for row in t.p2p_read],
        "read_epoch_s": t.read_at_s,
    }


def snapshot_dict(snap: Snapshot) -> dict[str, Any]:
    """The Snapshot as plain JSON values: GPUs (MIG devices under their GPU), processes."""
    iso, epoch = stamps(snap.timestamp_s)
    m = snap.machine
    simulated = snap.simulated or m.simulated
    infos = {g.index: g for g in snap.gpus}
    indices = sorted(set(infos) | {s.index for s in snap.samples})
    return {
        "schema": SCHEMA,
        "timestamp_iso": iso,
        "timestamp_epoch_s": float(epoch),
        "simulated": simulated,
        "status": {"state": snap.status.state.value, "message": snap.status.message,
                   "hint": snap.status.hint},
        "machine": {"host_name": m.host_name, "source": m.source_name,
                    "driver_version": m.driver_version,
                    "cuda_driver_version": m.cuda_driver_version,
                    "nvml_version": m.nvml_version},
        "read_duration_s": snap.read_duration_s,
        "gpus": [_gpu(infos.get(i), snap.sample_for(i), i,
                      [g for g in snap.migs if g.gpu_index == i], simulated) for i in indices],
        "processes": [process_dict(p, snap.timestamp_s) for p in snap.processes],
        "topology": topology_dict(snap.topology),
    }


def snapshot_json(snap: Snapshot) -> str:
    """One line of JSON (no NaN: a value that is not finite is null)."""
    return json.dumps(snapshot_dict(snap), ensure_ascii=False, allow_nan=False)


def process_dict(p: GpuProcess, now_s: float) -> dict[str, Any]:
    """One process as ``--json`` writes it (raw text: the encoder escapes, programs read it);
    ``now_s``: the snapshot's time, which its run time is counted to."""
    return {"gpu_index": p.gpu_index, "pid": p.pid, "type": p.type.value,
            "gpu_mem_bytes": p.gpu_mem_bytes, "name": p.name, "user": p.user,
            "command": p.command, "is_self": p.is_self, "container": p.container,
            "sm_util_pct": p.sm_util_pct, "mem_bw_util_pct": p.mem_bw_util_pct,
            "enc_util_pct": p.enc_util_pct, "dec_util_pct": p.dec_util_pct,
            "cpu_pct": _finite(p.cpu_pct), "host_rss_bytes": p.host_rss_bytes,
            "started_epoch_s": p.started_s,
            "run_time_s": None if p.started_s is None else max(0.0, now_s - p.started_s)}
