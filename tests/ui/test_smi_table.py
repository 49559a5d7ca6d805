"""The nvidia-smi-style GPU table."""

from __future__ import annotations

from gpumon.telemetry.sampler import Sampler
from gpumon.telemetry.simulated import SimulatedFaults, SimulatedSource
from gpumon.ui.smi_table import COLUMNS, LOST_TEXT, SmiTableModel


def snapshot(faults: SimulatedFaults | None = None, clock: float = 100.0):  # type: ignore[no-untyped-def]
    times = iter([0.0, clock, clock])
    source = SimulatedSource(3, seed=4, faults=faults, clock=lambda: next(times))
    sampler = Sampler(source)
    sampler.open()
    return sampler.tick()


def test_columns_are_the_ones_people_know():
    names = [c[0] for c in COLUMNS]
    assert names == ["GPU", "Name", "Persistence-M", "Bus-Id", "Fan", "Temp", "Perf",
                     "Pwr:Usage/Cap", "Memory-Usage", "GPU-Util", "Compute M."]


def test_model_rows_and_qtmodeltester(qtbot, qtmodeltester):
    model = SmiTableModel()
    snap = snapshot()
    model.update_snapshot(snap)
    assert model.rowCount() == 3
    mem = model.data(model.index(0, 8))
    assert mem.endswith("MiB") and " / " in mem
    qtmodeltester.check(model, force_py=True)
    with qtbot.assertNotEmitted(model.modelReset):
        model.update_snapshot(snap)


def test_unsupported_is_na_and_lost_is_marked():
    faults = SimulatedFaults(unsupported=frozenset({"fan_pct"}), lost_after_s={1: 10.0})
    model = SmiTableModel()
    model.update_snapshot(snapshot(faults))
    assert model.data(model.index(0, 4)) == "N/A"
    assert model.data(model.index(1, 9)) == LOST_TEXT
    assert model.data(model.index(1, 1))  # the name stays
