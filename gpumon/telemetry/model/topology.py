"""How the GPUs of one machine are joined, as ``nvidia-smi topo -m`` shows it: the path between
each pair (``X``, ``NV#``, ``PIX``, ``PXB``, ``PHB``, ``NODE``, ``SYS``), P2P read support, each
GPU's NVLinks and where they lead, and the CPUs and NUMA nodes nearest each GPU.

Read by the NVML reader at open and then about once a minute (it changes only when a link goes
down or a GPU is reset), carried on every Snapshot as one shared, immutable ``Topology``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from gpumon.i18n import N_
from gpumon.telemetry.model.activity import LinkRate

#: ``nvidia-smi topo -m``'s legend, in its words (N_(): a view may translate them).
PATH_LEGEND: tuple[tuple[str, str], ...] = (
    ("X", N_("Self")),
    ("SYS", N_("Connection traversing PCIe as well as the SMP interconnect between NUMA nodes "
               "(e.g., QPI/UPI)")),
    ("NODE", N_("Connection traversing PCIe as well as the interconnect between PCIe Host "
                "Bridges within a NUMA node")),
    ("PHB", N_("Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)")),
    ("PXB", N_("Connection traversing multiple PCIe bridges (without traversing the PCIe Host "
               "Bridge)")),
    ("PIX", N_("Connection traversing at most a single PCIe bridge")),
    ("NV#", N_("Connection traversing a bonded set of # NVLinks")),
)
#: P2P read status codes (``nvidia-smi topo -p2p r``'s, and DIS for a registry key).
P2P_LEGEND: tuple[tuple[str, str], ...] = (
    ("X", N_("Self")),
    ("OK", N_("Status Ok")),
    ("CNS", N_("Chipset not supported")),
    ("GNS", N_("GPU not supported")),
    ("TNS", N_("Topology not supported")),
    ("DIS", N_("Disabled by a driver registry key")),
    ("NS", N_("Not supported")),
    ("U", N_("Unknown")),
)
UNKNOWN = ""  # a path or status the driver did not give (shown as N/A)


@dataclass(frozen=True, slots=True)
class NvLink:
    """One active NVLink of a GPU and what is at its other end."""

    link: int
    remote_bus_id: str  # the PCI bus id NVML gives for the far end
    remote: str  # "gpu", "switch" (an NVSwitch), "cpu" (an IBM NPU) or "unknown"
    remote_gpu: int | None = None  # the NVML index of that GPU, when it is one of this machine's


@dataclass(frozen=True, slots=True)
class GpuPlace:
    """Where one GPU sits: its links and its nearest CPUs and memory."""

    index: int  # NVML index
    bus_id: str
    nvlinks: tuple[NvLink, ...] = ()  # the active links
    links_total: int | None = None  # NVLinks it has, active or not; None: no NVLink
    cpu_affinity: str | None = None  # CPUs nearest it, "0-47,96-143"; None: unknown
    numa_affinity: str | None = None  # NUMA nodes nearest it, "0"; None: unknown
    numa_id: int | None = None  # its own NUMA node (GPU memory as host memory), else None


@dataclass(frozen=True, slots=True)
class Topology:
    """The matrix of one machine: ``paths[i][j]`` and ``p2p_read[i][j]`` are between the GPUs
    ``places[i]`` and ``places[j]`` (``X`` on the diagonal, ``UNKNOWN`` where not read)."""

    places: tuple[GpuPlace, ...] = ()
    paths: tuple[tuple[str, ...], ...] = ()
    p2p_read: tuple[tuple[str, ...], ...] = ()
    read_at_s: float = 0.0  # time.time() when it was read

    def position(self, index: int) -> int | None:
        """The row of GPU ``index`` (an NVML index), None when not in the matrix."""
        for i, place in enumerate(self.places):
            if place.index == index:
                return i
        return None

    def path(self, a: int, b: int) -> str:
        """The path between GPUs ``a`` and ``b`` (NVML indices): ``NV18``, ``SYS``, ...;
        ``UNKNOWN`` for a GPU not in the matrix."""
        i, j = self.position(a), self.position(b)
        return UNKNOWN if i is None or j is None else self.paths[i][j]

    def nvlinks_between(self, a: int, b: int) -> int:
        """How many NVLinks join GPUs ``a`` and ``b`` (the # of ``NV#``), 0 for none."""
        path = self.path(a, b)
        return int(path[2:]) if path.startswith("NV") and path[2:].isdigit() else 0


def pair_rates(place: GpuPlace, links: Iterable[LinkRate], remote_gpu: int
               ) -> tuple[float | None, float | None] | None:
    """The data rates (rx, tx bytes/s) of the NVLinks that join ``place``'s GPU directly to
    GPU ``remote_gpu``, from its links' rates this tick (``GpuSample.nvlink_links``); None
    where no link joins them directly: links to NVSwitches carry traffic to every GPU, so
    what one pair exchanges is not known. A direction no link of the pair gave is None."""
    direct = {n.link for n in place.nvlinks if n.remote_gpu == remote_gpu}
    if not direct:
        return None
    rates = [r for r in links if r.link in direct]
    rx = [r.rx_bytes_per_s for r in rates if r.rx_bytes_per_s is not None]
    tx = [r.tx_bytes_per_s for r in rates if r.tx_bytes_per_s is not None]
    return (sum(rx) if rx else None, sum(tx) if tx else None)


def nvlink_path(direct: int, switch_a: int, switch_b: int) -> int:
    """NVLinks between two GPUs: their direct links, plus, when both reach NVSwitches, the
    fewer of their switch links (an HGX H100/H200: 18 links each to the switches, ``NV18``
    between every pair, as nvidia-smi counts them)."""
    return direct + (min(switch_a, switch_b) if switch_a and switch_b else 0)


def cpu_list(cpus: Iterable[int]) -> str:
    """CPU (or NUMA node) numbers as nvidia-smi writes them: ``0-47,96-143``; "" for none."""
    runs: list[list[int]] = []
    for c in sorted(set(cpus)):
        if runs and c == runs[-1][1] + 1:
            runs[-1][1] = c
        else:
            runs.append([c, c])
    return ",".join(f"{lo}" if lo == hi else f"{lo}-{hi}" for lo, hi in runs)


def bits_of(words: Sequence[int], width: int = 64) -> list[int]:
    """The numbers of the set bits of a mask given as words of ``width`` bits, lowest first
    (NVML's CPU and NUMA affinity masks)."""
    return [w * width + b for w, word in enumerate(words) for b in range(width)
            if (int(word) >> b) & 1]
