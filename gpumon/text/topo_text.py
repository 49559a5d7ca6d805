"""``gpumon topo``: the machine's GPU topology as ``nvidia-smi topo -m`` prints it (the path
between each pair of GPUs, each GPU's CPU and NUMA affinity and its own NUMA id, then the
legend), or the P2P read matrix as ``nvidia-smi topo -p2p r`` does. Columns are padded with
spaces, not tabs, so they line up whatever the widths. The codes and legends stay in English,
as nvidia-smi writes them (a script may read them); the SIMULATED note is translated.
"""

from __future__ import annotations

from collections.abc import Sequence

from gpumon.i18n import tr
from gpumon.telemetry.model.topology import P2P_LEGEND, PATH_LEGEND, UNKNOWN, Topology
from gpumon.units import NA

_CELL = 8  # nvidia-smi's tab stops


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """Rows of cells, each column as wide as its widest cell plus two spaces (the matrix
    columns at least a tab stop wide), without trailing spaces."""
    widths = [max(len(r[k]) for r in [header, *rows]) + 2 for k in range(len(header))]
    widths = [max(w, _CELL) for w in widths]
    return ["".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
            for r in [header, *rows]]


def _cell(code: str) -> str:
    if code == "X":
        return " X"  # nvidia-smi's " X " on the diagonal
    return NA if code == UNKNOWN else code


def render_matrix(topology: Topology, simulated: bool = False) -> str:
    """The ``nvidia-smi topo -m`` matrix and legend (no NIC columns: NVML gives GPUs only)."""
    names = [f"GPU{p.index}" for p in topology.places]
    header = ["", *names, "CPU Affinity", "NUMA Affinity", "GPU NUMA ID"]
    rows = [[name, *(_cell(c) for c in row), p.cpu_affinity or NA, p.numa_affinity or NA,
             NA if p.numa_id is None else str(p.numa_id)]
            for name, row, p in zip(names, topology.paths, topology.places, strict=True)]
    return _with_legend(_table(header, rows), PATH_LEGEND, simulated)


def render_p2p(topology: Topology, simulated: bool = False) -> str:
    """The P2P read matrix (``nvidia-smi topo -p2p r``) and its legend."""
    names = [f"GPU{p.index}" for p in topology.places]
    rows = [[name, *(_cell(c) for c in row)] for name, row in zip(names, topology.p2p_read,
                                                                      strict=True)]
    return _with_legend(_table(["", *names], rows), P2P_LEGEND, simulated)


def _with_legend(table: list[str], legend: Sequence[tuple[str, str]], simulated: bool) -> str:
    lines = [*table, "", "Legend:", ""]
    lines += [f"  {code:<4} = {text}" for code, text in legend]
    if simulated:
        lines += ["", tr("SIMULATED: these GPUs are simulated; no real GPU was read.")]
    return "\n".join(lines) + "\n"
