"""Each GpuSample metric field unsupported in turn: N/A where it is shown, the rest updates.

One GPU (index 1) lacks the field; GPU 0 has it, so every assertion has a control. The
window is checked where the field appears (panel labels, the nvidia-smi table); fields the
window does not display must still arrive as None, never as a made-up 0. ``--once`` is
checked cell by cell in the nvidia-smi layout.
"""

from __future__ import annotations

import math
import re

import pytest
from faults_helpers import once_gpu_block, panel_text, run_once, smi_row

import gpumon.cli.main
from gpumon.telemetry.history.store import HISTORY_KEYS
from gpumon.telemetry.sources.simulated import FAULTABLE_FIELDS, SimulatedFaults, SimulatedSource

SEED = 9  # two desktop cards: both have fans, so fan_pct has a control too
WAIT_MS = 5000

# field -> regex on the panel text that matches only when the field reads N/A
PANEL = {
    "mem_used_bytes": r"Memory N/A /",
    "mem_total_bytes": r"Memory [\d.]+ / N/A",
    "gpu_util_pct": r"GPU N/A Mem ctrl",
    "mem_util_pct": r"Mem ctrl N/A",
    "temperature_c": r"Temp N/A",
    "power_w": r"Power N/A /",
    "power_limit_w": r"/ N/A · Fan",
    "fan_pct": r"Fan N/A",
    "sm_clock_mhz": r"SM N/A",
    "mem_clock_mhz": r"Mem N/A · Perf",
    "pstate": r"Perf N/A",
}
# field -> (GPU-table column, regex on its cell)
TABLE = {
    "mem_used_bytes": ("Memory-Usage", r"^N/A /"),
    "gpu_util_pct": ("GPU-Util", r"^N/A$"),
    "temperature_c": ("Temp", r"^N/A$"),
    "power_w": ("Pwr:Usage/Cap", r"^N/A /"),
    "power_limit_w": ("Pwr:Usage/Cap", r"/ N/A$"),
    "fan_pct": ("Fan", r"^N/A$"),
    "pstate": ("Perf", r"^N/A$"),
    "persistence_mode": ("Persistence-M", r"^N/A$"),
    "compute_mode": ("Compute M.", r"^N/A$"),
}
# field -> (line of the GPU block, cell, token) in --once output
ONCE = {
    "persistence_mode": (0, 0, -1),
    "fan_pct": (1, 0, 0), "temperature_c": (1, 0, 1), "pstate": (1, 0, 2),
    "power_w": (1, 0, 3), "power_limit_w": (1, 0, 5),
    "mem_used_bytes": (1, 1, 0), "mem_total_bytes": (1, 1, 2),
    "gpu_util_pct": (1, 2, 0), "compute_mode": (1, 2, 1),
}
NOT_IN_WINDOW = FAULTABLE_FIELDS - set(PANEL) - {f for f in TABLE}


def _once_token(block: str, field: str) -> str:
    line, cell, token = ONCE[field]
    cells = block.splitlines()[line].strip("|").split("|")
    words = cells[cell].split(maxsplit=1) if (line, cell) == (1, 2) else cells[cell].split()
    return words[token].strip()


XIDS = {0: ((0.0, 13),), 1: ((0.0, 13),)}  # an XID at the start: the XID fields have values


def _seed_for(field: str) -> int:
    """SEED, or the first seed whose two GPUs both report ``field`` (ECC, memory repair and
    memory temperature depend on the model: desktop cards have none)."""
    for seed in (SEED, *range(500)):
        src = SimulatedSource(2, seed=seed, faults=SimulatedFaults(xids=XIDS))
        src.open()
        if all(getattr(s, field) is not None for s in src.sample().samples):
            return seed
    raise AssertionError(f"no simulated machine reports {field}")


def _source(field: str) -> SimulatedSource:
    return SimulatedSource(2, seed=_seed_for(field), faults=SimulatedFaults(
        unsupported_by_gpu={1: {field}}, xids=XIDS))


def test_the_tables_cover_every_field() -> None:
    assert set(PANEL) | set(TABLE) | NOT_IN_WINDOW == FAULTABLE_FIELDS
    assert set(ONCE) <= FAULTABLE_FIELDS


@pytest.mark.slow
@pytest.mark.parametrize("field", sorted(FAULTABLE_FIELDS))
def test_field_unsupported_in_the_window(qtbot, make_window, field: str) -> None:
    w = make_window(lambda: _source(field))
    qtbot.waitUntil(lambda: w.history.count(1) >= 2, timeout=WAIT_MS)
    snap = w.latest_snapshot
    assert snap is not None
    assert getattr(snap.sample_for(1), field) is None
    assert getattr(snap.sample_for(0), field) is not None
    if field in PANEL:
        assert re.search(PANEL[field], panel_text(w, 1)), panel_text(w, 1)
        assert not re.search(PANEL[field], panel_text(w, 0)), panel_text(w, 0)
    if field in TABLE:
        column, pattern = TABLE[field]
        assert re.search(pattern, smi_row(w, 1)[column]), smi_row(w, 1)
        assert not re.search(pattern, smi_row(w, 0)[column]), smi_row(w, 0)
    if field in HISTORY_KEYS:  # plotted as a gap, not as zero
        assert all(math.isnan(v) for v in w.history.series(1, field)[1])
        assert all(math.isfinite(v) for v in w.history.series(0, field)[1])
    # GPU 1 keeps updating its other fields.
    other = "power_w" if field == "temperature_c" else "temperature_c"
    assert not re.search(PANEL[other], panel_text(w, 1))
    before = w.history.count(1)
    qtbot.waitUntil(lambda: w.history.count(1) >= before + 3, timeout=WAIT_MS)
    assert not w.gpu_panel(1).lost and not w.stale


@pytest.mark.parametrize("field", sorted(ONCE))
def test_field_unsupported_in_once(monkeypatch: pytest.MonkeyPatch, field: str,
                                   capfd: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(gpumon.cli.main, "make_source",
                        lambda simulate, seed=0, gpm=True: _source(field))
    rc, out, err = run_once(capfd, "--simulate", "2")
    assert rc == 0 and err == ""
    assert _once_token(once_gpu_block(out, 1), field) == "N/A"
    assert _once_token(once_gpu_block(out, 0), field) != "N/A"
