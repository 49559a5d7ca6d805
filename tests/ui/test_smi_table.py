"""The nvidia-smi-style GPU table."""

from __future__ import annotations

import pytest
from qt_fixtures import hidden_or_minimised

from gpumon.telemetry.sources.sampler import Sampler
from gpumon.telemetry.sources.simulated import SimulatedFaults, SimulatedSource
from gpumon.ui.monitor.smi_table import COLUMNS, LOST_TEXT, SmiTable, SmiTableModel
from tests.qt_fixtures import back_in_sight, first_of_two_tabs, out_of_sight


def snapshot(faults: SimulatedFaults | None = None, clock: float = 100.0):
    times = iter([0.0, clock, clock])
    source = SimulatedSource(3, seed=4, faults=faults, clock=lambda: next(times))
    sampler = Sampler(source)
    sampler.open()
    return sampler.tick()


def test_columns_are_the_ones_people_know():
    names = [c[0] for c in COLUMNS]
    assert names == ["GPU", "Name", "Persistence-M", "Bus-Id", "Disp.A", "Volatile Uncorr. ECC",
                     "Fan", "Temp", "Perf", "Pwr:Usage/Cap", "Memory-Usage", "GPU-Util",
                     "Compute M.", "MIG M."]


def test_model_rows_and_qtmodeltester(qtbot, qtmodeltester):
    model = SmiTableModel()
    snap = snapshot()
    model.update_snapshot(snap)
    assert model.rowCount() == 3
    mem = model.data(model.index(0, 10))
    assert mem.endswith("MiB") and " / " in mem
    qtmodeltester.check(model, force_py=True)
    with qtbot.assertNotEmitted(model.modelReset):
        model.update_snapshot(snap)


def test_unsupported_is_na_and_lost_is_marked():
    faults = SimulatedFaults(unsupported=frozenset({"fan_pct"}), lost_after_s={1: 10.0})
    model = SmiTableModel()
    model.update_snapshot(snapshot(faults))
    assert model.data(model.index(0, 6)) == "N/A"
    assert model.data(model.index(1, 11)) == LOST_TEXT
    assert model.data(model.index(1, 1))  # the name stays


def test_ecc_disp_and_mig_columns_and_ecc_errors_in_bold_red():
    from dataclasses import replace

    from PySide6.QtCore import Qt

    snap = snapshot()
    model = SmiTableModel()
    model.update_snapshot(snap)
    names = [c[0] for c in COLUMNS]
    ecc, disp, mig = (names.index(n) for n in ("Volatile Uncorr. ECC", "Disp.A", "MIG M."))
    texts = [[model.data(model.index(r, c)) for c in (disp, ecc, mig)] for r in range(3)]
    samples = {s.index: s for s in snap.samples}
    for r, (d, e, m) in enumerate(texts):
        s = samples[snap.gpus[r].index]
        assert d == {True: "On", False: "Off"}[s.display_active]
        assert e == {None: "N/A", False: "Off"}.get(s.ecc_enabled, str(s.ecc_uncorrected_volatile))
        assert m == {None: "N/A", True: "Enabled", False: "Disabled"}[s.mig_mode]
    good = model.index(0, ecc)
    assert model.data(good, Qt.ItemDataRole.ForegroundRole) is None
    # two uncorrected errors on GPU 0: the count, bold and red, and why in the tooltip
    bad = replace(snap, samples=(replace(snap.samples[0], ecc_enabled=True,
                                         ecc_uncorrected_volatile=2), *snap.samples[1:]))
    model.update_snapshot(bad)
    cell = model.index(0, ecc)
    assert model.data(cell) == "2"
    assert model.data(cell, Qt.ItemDataRole.ForegroundRole).name() == "#c62828"
    assert model.data(cell, Qt.ItemDataRole.FontRole).bold()
    assert "2 uncorrected ECC errors" in model.data(cell, Qt.ItemDataRole.ToolTipRole)
    assert model.data(model.index(0, 1), Qt.ItemDataRole.ForegroundRole) is None  # that cell


def test_only_changed_cells_are_signalled_and_widths_follow_the_longest_text(qtbot):
    from dataclasses import replace

    model = SmiTableModel()
    snap = snapshot()
    with qtbot.waitSignal(model.widthsChanged) as widths:
        model.update_snapshot(snap)
    assert widths.args == [list(range(len(COLUMNS)))]  # new rows: every column is measured
    changes: list[tuple[int, int, int, int]] = []
    model.dataChanged.connect(lambda a, b, *_: changes.append(
        (a.row(), a.column(), b.row(), b.column())))
    resized: list[list[int]] = []
    model.widthsChanged.connect(resized.append)
    model.update_snapshot(snap)
    assert changes == [] and resized == []  # the same texts: nothing to repaint or measure
    s1 = snap.samples[1]
    temp = 5.0 if s1.temperature_c is None or s1.temperature_c >= 10 else 55.0
    samples = tuple(replace(s, temperature_c=temp) if s.index == 1 else s for s in snap.samples)
    model.update_snapshot(replace(snap, samples=samples))
    assert changes == [(1, 7, 1, 7)]  # GPU 1's Temp cell only
    assert model.data(model.index(1, 7)) == f"{temp:.0f}C"
    longest = max(len(model.data(model.index(r, 7))) for r in range(model.rowCount()))
    assert resized == ([] if longest == widths_of(snap, 7) else [[7]])


def widths_of(snap, column: int) -> int:
    model = SmiTableModel()
    model.update_snapshot(snap)
    return max(len(model.data(model.index(r, column))) for r in range(model.rowCount()))


@pytest.mark.parametrize("how", ["tab", "minimised"])
def test_an_unseen_table_keeps_the_latest_snapshot_and_shows_it_when_seen(qtbot, how):
    clock = [1_700_000_000.0]
    source = SimulatedSource(3, seed=4, clock=lambda: clock[0])
    sampler = Sampler(source, clock=lambda: clock[0], wall_clock=lambda: clock[0])
    sampler.open()
    table = SmiTable()
    tabs = first_of_two_tabs(qtbot, table)
    model = table.smi_model

    def tick():
        clock[0] += 7.0  # the simulated power and memory move every reading
        snap = sampler.tick()
        table.show_snapshot(snap)
        return snap

    def texts():
        return [[model.data(model.index(r, c)) for c in range(model.columnCount())]
                for r in range(model.rowCount())]

    tick()
    seen = texts()
    assert len(seen) == 3
    out_of_sight(tabs, how)
    qtbot.waitUntil(lambda: hidden_or_minimised(table), timeout=3000)
    with qtbot.assertNotEmitted(model.dataChanged), qtbot.assertNotEmitted(model.modelReset):
        for _ in range(5):
            latest = tick()
    assert texts() == seen  # nothing done while no one sees it

    back_in_sight(tabs, how)
    expected = SmiTableModel()
    expected.update_snapshot(latest)
    qtbot.waitUntil(lambda: texts() != seen, timeout=3000)
    assert texts() == [[expected.data(expected.index(r, c)) for c in range(len(COLUMNS))]
                       for r in range(3)]
    sampler.close()
