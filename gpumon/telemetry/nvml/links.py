"""How the GPUs are joined, read through NVML for every GPU (GPM or not): each GPU's NVLinks
(state, the PCI bus id and kind of the far end), the ``nvidia-smi topo -m`` matrix (the PCIe
path from ``nvmlDeviceGetTopologyCommonAncestor``, ``NV#`` from the NVLink remotes), P2P
read support, the CPUs and NUMA nodes nearest each GPU and its own NUMA id; and per tick, each
active link's data rates from its counters (fields 138/139, KiB, scope = the link).

The topology is read at open and again on a slow tick once ``TOPOLOGY_EVERY_S`` has passed
(it changes when a link goes down or a GPU is reset); a GPU without NVLink costs one field
read there (the link count; an H200 without NVLink said NOT_SUPPORTED) and nothing per tick.
"""

from __future__ import annotations

import ctypes
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import pynvml

from gpumon.telemetry.model.activity import LinkRate
from gpumon.telemetry.model.topology import (
    UNKNOWN,
    GpuPlace,
    NvLink,
    Topology,
    bits_of,
    cpu_list,
    nvlink_path,
)
from gpumon.telemetry.nvml.readers import Guarded
from gpumon.telemetry.nvml.rows import row_format, rows
from gpumon.telemetry.nvml.status import GpuLost
from gpumon.units import KIB

TOPOLOGY_EVERY_S = 60.0
CPU_WORDS = 16  # 64-bit words of a CPU mask: 1,024 CPUs
NODE_WORDS = 4  # 256 NUMA nodes
# pynvml's NVML_P2P_CAPS_INDEX_READ is written "= 0," in the binding: the tuple (0,), which
# ctypes refuses. The index is nvml.h's NVML_P2P_CAPS_INDEX_READ, 0.
P2P_READ = 0
ALL_LINKS = 0xFFFFFFFF  # scopeId for "every link" (nvml.h)
# nvmlGpuTopologyLevel_t -> nvidia-smi's code. INTERNAL: two GPUs on one board (a K80),
# behind its own PCIe switch.
PATH_OF_LEVEL = {pynvml.NVML_TOPOLOGY_INTERNAL: "PIX", pynvml.NVML_TOPOLOGY_SINGLE: "PIX",
                 pynvml.NVML_TOPOLOGY_MULTIPLE: "PXB", pynvml.NVML_TOPOLOGY_HOSTBRIDGE: "PHB",
                 pynvml.NVML_TOPOLOGY_NODE: "NODE", pynvml.NVML_TOPOLOGY_SYSTEM: "SYS"}
P2P_CODES = ("OK", "CNS", "GNS", "TNS", "DIS", "NS", "U")  # by nvmlGpuP2PStatus_t
_RX, _TX = (pynvml.NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX,
            pynvml.NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX)
# One field value: (fieldId, scopeId, nvmlReturn, value as an unsigned long long), read in
# one pass (rows.py): field by field through the binding cost ~0.2 ms for 36 fields.
_FIELD = row_format(pynvml.c_nvmlFieldValue_t, (("fieldId", "u"), ("scopeId", "u"),
                                                ("nvmlReturn", "u"), ("value", "u")))
REMOTE_KINDS = {pynvml.NVML_NVLINK_DEVICE_TYPE_GPU: "gpu",
                pynvml.NVML_NVLINK_DEVICE_TYPE_IBMNPU: "cpu",
                pynvml.NVML_NVLINK_DEVICE_TYPE_SWITCH: "switch"}


def bus_key(bus_id: str) -> str:
    """A PCI bus id compared across NVML's two spellings (``00000000:18:00.0`` and
    ``0000:18:00.0``): the domain as a number, the rest lower case."""
    domain, _, rest = bus_id.strip().lower().partition(":")
    try:
        return f"{int(domain, 16):x}:{rest}"
    except ValueError:
        return bus_id.strip().lower()


def _text(value: Any) -> str:
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)


@dataclass
class _Counter:
    at: float
    rx_kib: dict[int, int]
    tx_kib: dict[int, int]


class LinkReader:
    """The topology of a source's GPUs and their NVLink rates; see the module docstring."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self.topology: Topology | None = None
        self._read_at: float | None = None
        self._active: dict[int, tuple[int, ...]] = {}  # GPU -> its active links
        self._counters: dict[int, _Counter] = {}

    def due(self) -> bool:
        """Whether the topology should be read again (a slow tick may)."""
        return self._read_at is None or self._clock() - self._read_at >= TOPOLOGY_EVERY_S

    def read_topology(self, source: Guarded, gpus: Sequence[tuple[int, Any, str]]) -> Topology:
        """Read the matrix of ``gpus`` ((NVML index, handle, PCI bus id); a lost GPU's
        handle is None and its row is unknown)."""
        self._read_at = self._clock()
        by_bus = {bus_key(bus): index for index, _, bus in gpus if bus}
        places = [self._place(source, index, handle, bus, by_bus) for index, handle, bus in gpus]
        self._active = {p.index: tuple(link.link for link in p.nvlinks) for p in places}
        paths = [[self._path(source, a, b, pa, pb) for b, pb in zip(gpus, places, strict=True)]
                 for a, pa in zip(gpus, places, strict=True)]
        p2p = [[self._p2p(source, a[1], b[1]) if a is not b else "X" for b in gpus]
               for a in gpus]
        self.topology = Topology(tuple(places), tuple(map(tuple, paths)),
                                 tuple(map(tuple, p2p)), time.time())
        return self.topology

    def _place(self, source: Guarded, index: int, handle: Any, bus: str,
               by_bus: dict[str, int]) -> GpuPlace:
        if handle is None:
            return GpuPlace(index, bus)
        try:
            total = self._link_count(source, handle)
            links = tuple(link for k in range(total or 0)
                          if (link := self._link(source, handle, k, by_bus)) is not None)
            cpus = source.call(pynvml.nvmlDeviceGetCpuAffinity, handle, CPU_WORDS)
            nodes = source.call(pynvml.nvmlDeviceGetMemoryAffinity, handle, NODE_WORDS,
                                pynvml.NVML_AFFINITY_SCOPE_NODE)
            numa = source.call(pynvml.nvmlDeviceGetNumaNodeId, handle)
        except GpuLost:  # its own tick marks it lost
            return GpuPlace(index, bus)
        return GpuPlace(index, bus, links, total,
                        None if cpus is None else cpu_list(bits_of(list(cpus))) or None,
                        None if nodes is None else cpu_list(bits_of(list(nodes))) or None,
                        None if numa is None else int(numa))

    @staticmethod
    def _link_count(source: Guarded, handle: Any) -> int | None:
        """NVLinks the GPU has (field 91), else as many as answer NvLinkState; None: none."""
        got = source.call(pynvml.nvmlDeviceGetFieldValues, handle,
                          [pynvml.NVML_FI_DEV_NVLINK_LINK_COUNT])
        if got and got[0].nvmlReturn == pynvml.NVML_SUCCESS:
            return int(got[0].value.uiVal) or None
        if source.call(pynvml.nvmlDeviceGetNvLinkState, handle, 0) is None:
            return None  # an H200 without NVLink: NOT_SUPPORTED here and for field 91
        count = 1
        while (count < pynvml.NVML_NVLINK_MAX_LINKS
               and source.call(pynvml.nvmlDeviceGetNvLinkState, handle, count) is not None):
            count += 1
        return count

    @staticmethod
    def _link(source: Guarded, handle: Any, link: int, by_bus: dict[str, int]) -> NvLink | None:
        state = source.call(pynvml.nvmlDeviceGetNvLinkState, handle, link)
        if state != pynvml.NVML_FEATURE_ENABLED:
            return None
        pci = source.call(pynvml.nvmlDeviceGetNvLinkRemotePciInfo, handle, link,
                          name="nvmlDeviceGetNvLinkRemotePciInfo_v2")
        bus = _text(pci.busId) if pci is not None else ""
        kind = source.call(pynvml.nvmlDeviceGetNvLinkRemoteDeviceType, handle, link)
        remote_gpu = by_bus.get(bus_key(bus)) if bus else None
        remote = REMOTE_KINDS.get(kind, "unknown") if kind is not None else (
            "gpu" if remote_gpu is not None else "unknown")
        return NvLink(link, bus, remote, remote_gpu if remote == "gpu" else None)

    @staticmethod
    def _path(source: Guarded, a: tuple[int, Any, str], b: tuple[int, Any, str],
              pa: GpuPlace, pb: GpuPlace) -> str:
        if a is b:
            return "X"
        direct = sum(1 for link in pa.nvlinks if link.remote_gpu == b[0])
        nv = nvlink_path(direct, sum(1 for link in pa.nvlinks if link.remote == "switch"),
                         sum(1 for link in pb.nvlinks if link.remote == "switch"))
        if nv:
            return f"NV{nv}"
        if a[1] is None or b[1] is None:
            return UNKNOWN
        try:
            level = source.call(pynvml.nvmlDeviceGetTopologyCommonAncestor, a[1], b[1])
        except GpuLost:
            return UNKNOWN
        return UNKNOWN if level is None else PATH_OF_LEVEL.get(level, UNKNOWN)

    @staticmethod
    def _p2p(source: Guarded, a: Any, b: Any) -> str:
        if a is None or b is None:
            return UNKNOWN
        try:
            status = source.call(pynvml.nvmlDeviceGetP2PStatus, a, b, P2P_READ)
        except GpuLost:
            return UNKNOWN
        return UNKNOWN if status is None else P2P_CODES[min(int(status), len(P2P_CODES) - 1)]

    def rates(self, source: Guarded, index: int, handle: Any) -> tuple[LinkRate, ...]:
        """This tick's data rates of GPU ``index``'s active links, from one field-value call
        (none for a GPU without active NVLinks); rates are None on the first reading, after
        a counter went backwards, and for a link whose fields failed."""
        active = self._active.get(index, ())
        if not active:
            return ()
        ids = [(f, link) for link in active for f in (_RX, _TX)]
        got = source.call(pynvml.nvmlDeviceGetFieldValues, handle, ids)
        now = self._clock()
        rx: dict[int, int] = {}
        tx: dict[int, int] = {}
        for field, link, ret, value in (rows(_FIELD, ctypes.addressof(got), len(ids))
                                        if got is not None else ()):
            if ret == pynvml.NVML_SUCCESS:
                (rx if field == _RX else tx)[link] = value
        before = self._counters.get(index)
        self._counters[index] = _Counter(now, rx, tx)
        dt = None if before is None else now - before.at
        return tuple(LinkRate(link, _rate(before.rx_kib if before else {}, rx, link, dt),
                              _rate(before.tx_kib if before else {}, tx, link, dt))
                     for link in active)

    def restart(self, index: int) -> None:
        """Forget GPU ``index``'s counters (it was lost)."""
        self._counters.pop(index, None)


def _rate(before: dict[int, int], now: dict[int, int], link: int, dt: float | None
          ) -> float | None:
    """Bytes/s of one counter (KiB) between two readings."""
    if dt is None or dt <= 0 or link not in before or link not in now or now[link] < before[link]:
        return None
    return (now[link] - before[link]) * KIB / dt


def totals(rates: Sequence[LinkRate]) -> tuple[float | None, float | None]:
    """(rx, tx) bytes/s of all links; None unless every link's rate is known."""
    if not rates:
        return None, None
    rx = [r.rx_bytes_per_s for r in rates]
    tx = [r.tx_bytes_per_s for r in rates]
    return (None if None in rx else sum(v for v in rx if v is not None),
            None if None in tx else sum(v for v in tx if v is not None))
