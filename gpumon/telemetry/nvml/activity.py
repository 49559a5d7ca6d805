"""What NvmlSource adds to each GPU's reading beyond its per-metric readers: GPM's activity
(gpm.py), the NVLink rates and the topology (links.py), as GpuSample and MigSample fields.

The source calls these hooks: ``open`` once the GPUs are known, ``tick`` before each reading
(the topology, on slow ticks once a minute), ``read`` per GPU, ``instances`` for the MIG devices
of a GPU in MIG mode, ``restart`` when a GPU is lost, ``close`` before nvmlShutdown.
``read`` gives GPM's PCIe rates too where GPM has them: they cost no wait, and the source
takes them instead of ``nvmlDeviceGetPcieThroughput``'s (pcie.py).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from typing import Any

from gpumon.telemetry.model.activity import ActivityState
from gpumon.telemetry.model.metrics import ACTIVITY_KEYS, ACTIVITY_PCT_KEYS
from gpumon.telemetry.model.topology import Topology
from gpumon.telemetry.model.types import MigSample
from gpumon.telemetry.nvml.gpm import PCIE_KEYS, GpmReader
from gpumon.telemetry.nvml.links import LinkReader, totals
from gpumon.telemetry.nvml.readers import Guarded
from gpumon.telemetry.nvml.status import GpuLost

Place = tuple[int, Any, str]  # (NVML index, handle or None when lost, PCI bus id)
# The fields of a GPU without GPM reading and without NVLink, per state (read-only: shared).
_EMPTY: dict[ActivityState, dict[str, Any]] = {
    state: {**dict.fromkeys(ACTIVITY_KEYS), "nvlink_links": (), "activity_state": state}
    for state in ActivityState}


class GpuActivity:
    """GPM and NVLink readers of one source (not thread-safe: the source holds its lock)."""

    def __init__(self, gpm: bool = True, clock: Callable[[], float] = time.monotonic) -> None:
        self.gpm = GpmReader(enabled=gpm, clock=clock)  # GPM's two samples, by this clock
        self.links = LinkReader()

    @property
    def topology(self) -> Topology | None:
        return self.links.topology

    def open(self, source: Guarded, gpus: Sequence[tuple[int, Any, str, bool]]) -> None:
        """GPM support of each GPU ((index, handle, bus id, in MIG mode)) and the topology."""
        for index, handle, _, mig in gpus:
            try:
                if handle is not None:
                    self.gpm.open_gpu(source, index, handle, mig)
            except GpuLost:  # its first reading marks it lost; its GPM stays unknown
                pass
        self.links.read_topology(source, [(i, h, bus) for i, h, bus, _ in gpus])

    def tick(self, source: Guarded, gpus: Sequence[Place], include_slow: bool) -> None:
        """Read the topology again when a slow tick finds it due."""
        if include_slow and gpus and self.links.due():
            self.links.read_topology(source, gpus)

    def read(self, source: Guarded, index: int, handle: Any) -> dict[str, Any]:
        """GPU ``index``'s activity fields for this tick, the NVLink rates, and GPM's PCIe
        rates (``pcie_*_bytes_per_s``, present only when GPM gave both)."""
        got = self.gpm.read(source, index, handle)
        links = self.links.rates(source, index, handle)
        if got.state is not ActivityState.READING and not links:
            return _EMPTY[got.state]  # most GPUs: no GPM, no NVLink (~1 us, not ~6)
        values: dict[str, Any] = {key: got.values[key] for key in ACTIVITY_PCT_KEYS}
        rx, tx = got.values["nvlink_rx_bytes_per_s"], got.values["nvlink_tx_bytes_per_s"]
        if rx is None and tx is None:
            rx, tx = totals(links)
        values.update(nvlink_rx_bytes_per_s=rx, nvlink_tx_bytes_per_s=tx, nvlink_links=links,
                      activity_state=got.state)
        if all(got.values[key] is not None for key in PCIE_KEYS):
            values.update((key, got.values[key]) for key in PCIE_KEYS)
        return values

    def instances(self, source: Guarded, index: int, handle: Any, migs: list[MigSample],
                  listed: bool) -> list[MigSample]:
        """The MIG devices of GPU ``index`` with their GPU instance's activity (read once per
        instance); ``listed``: the devices were listed again (free the instances gone)."""
        if listed:
            self.gpm.keep_instances(source, index, (m.gpu_instance_id for m in migs
                                                    if m.gpu_instance_id is not None))
        done: dict[int, dict[str, Any]] = {}
        out = []
        for m in migs:
            gi = m.gpu_instance_id
            if gi is None:
                out.append(dataclasses.replace(m, activity_state=self.gpm.state(index)))
                continue
            if gi not in done:
                got = self.gpm.read_instance(source, index, handle, gi)
                done[gi] = {key: got.values[key] for key in ACTIVITY_PCT_KEYS}
                done[gi]["activity_state"] = got.state
            out.append(dataclasses.replace(m, **done[gi]))
        return out

    def restart(self, index: int) -> None:
        """GPU ``index`` was lost: its next reading starts GPM and the counters over."""
        self.gpm.restart(index)
        self.links.restart(index)

    def close(self, source: Guarded) -> None:
        self.gpm.close(source)
        self.links = LinkReader()


__all__ = ["ActivityState", "GpuActivity"]
