"""The GPU check's comparison logic, without a GPU: nvidia-smi's CSV, the tolerances, and
gpumon's three outputs (``--json``, the ``--once`` table, the exporter) read back into the
same keys. Simulated snapshots stand in for readings; every output is gpumon's real code."""

from __future__ import annotations

import pytest
from testkit import ExporterReading

from gpumon.telemetry.model.types import Snapshot
from gpumon.telemetry.sources.sampler import Sampler
from gpumon.telemetry.sources.simulated import SimulatedSource
from gpumon.text.json_out import snapshot_json
from gpumon.text.smi_text import render
from tests.gpu.gpucheck import compare as cmp
from tests.gpu.gpucheck import readings

FIELDS = {f.smi: f for f in cmp.GPU_FIELDS}


def _snapshot(n: int = 2) -> Snapshot:
    sampler = Sampler(SimulatedSource(n_gpus=n, seed=3))
    try:
        return sampler.tick()
    finally:
        sampler.close()


def test_csv_cells_that_nvidia_smi_leaves_empty_are_none() -> None:
    text = "0, 45, [N/A], Enabled\n1, 50, [Not Supported], Disabled\n"
    rows = cmp.parse_csv(text, ["index", "temperature.gpu", "fan.speed", "persistence_mode"])
    assert rows == [
        {"index": "0", "temperature.gpu": "45", "fan.speed": None, "persistence_mode": "Enabled"},
        {"index": "1", "temperature.gpu": "50", "fan.speed": None,
         "persistence_mode": "Disabled"}]
    with pytest.raises(ValueError, match="2 cells for 3 columns"):
        cmp.parse_csv("0, 45\n", ["index", "a", "b"])


def test_a_field_an_older_nvidia_smi_refuses_is_named() -> None:
    refusal = 'Field "memory.reserved" is not a valid field to query.\n'
    assert cmp.invalid_field(refusal) == "memory.reserved"
    assert cmp.invalid_field("NVIDIA-SMI has failed") is None


def test_units_and_spellings_are_made_comparable() -> None:
    assert cmp.smi_value(FIELDS["memory.used"], "1024") == 1024.0
    assert cmp.gpumon_value(FIELDS["memory.used"], 1024 * cmp.MIB) == 1024.0
    assert cmp.smi_value(FIELDS["compute_mode"], "Exclusive_Process") == \
        cmp.gpumon_value(FIELDS["compute_mode"], "Exclusive Process")
    assert cmp.smi_value(FIELDS["pci.bus_id"], "00000000:17:00.0") == \
        cmp.gpumon_value(FIELDS["pci.bus_id"], "0000:17:00.0")
    assert cmp.smi_value(FIELDS["persistence_mode"], "Enabled") is True
    with pytest.raises(ValueError, match="Enabled or Disabled"):
        cmp.smi_value(FIELDS["persistence_mode"], "On")


@pytest.mark.parametrize(("field", "before", "after", "got", "outcome"), [
    ("temperature.gpu", 40.0, 40.0, 42.0, cmp.PASS),  # ±2 °C
    ("temperature.gpu", 40.0, 40.0, 42.5, cmp.FAIL),
    ("utilization.gpu", 0.0, 60.0, 35.0, cmp.PASS),  # between the two readings
    ("utilization.gpu", 0.0, 10.0, 31.0, cmp.FAIL),  # beyond 10 + 20
    ("power.draw", 400.0, 400.0, 419.0, cmp.PASS),  # 5 % of 400 W is 20 W
    ("power.draw", 80.0, 80.0, 86.0, cmp.FAIL),  # 5 W at 80 W
    ("memory.total", 81559.0, 81559.0, 81560.0, cmp.PASS),
    ("memory.total", 81559.0, 81559.0, 81561.0, cmp.FAIL),
    ("fan.speed", None, None, None, cmp.PASS),  # both N/A
    ("fan.speed", None, None, 30.0, cmp.FAIL),
    ("fan.speed", 30.0, None, None, cmp.FAIL),
    ("pstate", "P0", "P8", "P8", cmp.PASS),
    ("pstate", "P0", "P0", "P2", cmp.FAIL),
])
def test_judge_brackets_a_moving_value_and_widens_by_the_tolerance(
        field: str, before: cmp.Value, after: cmp.Value, got: cmp.Value, outcome: str) -> None:
    assert cmp.judge(FIELDS[field], before, after, got)[0] == outcome


def test_a_gpu_missing_on_one_side_fails() -> None:
    fields = [FIELDS["temperature.gpu"]]
    smi = {0: {"temperature.gpu": 40.0}, 1: {"temperature.gpu": 41.0}}
    rows = cmp.compare_gpus("--json", fields, smi, smi, {0: {"temperature_c": 40}})
    assert [(r.gpu, r.outcome) for r in rows] == [("0", cmp.PASS), ("1", cmp.FAIL)]
    assert "gpumon does not list this GPU" in rows[1].note


def test_processes_steady_in_nvidia_smi_must_be_in_gpumon_and_no_others() -> None:
    before = [{"gpu_uuid": "GPU-a", "pid": "10", "used_memory": "300", "process_name": None},
              {"gpu_uuid": "GPU-a", "pid": "11", "used_memory": "5", "process_name": None}]
    after = [before[0], {"gpu_uuid": "GPU-a", "pid": "12", "used_memory": "7",
                         "process_name": None}]
    rows = cmp.compare_apps("--json", before, after,
                            {("GPU-a", 10): 300 * cmp.MIB, ("GPU-a", 99): 1})
    verdicts = {r.gpu: r.outcome for r in rows}
    assert verdicts == {"pid 10 on GPU-a": cmp.PASS,  # same memory
                        "pid 11 on GPU-a": cmp.PASS,  # ended between the readings
                        "pid 12 on GPU-a": cmp.PASS,  # started between the readings
                        "pid 99 on GPU-a": cmp.FAIL}  # nvidia-smi never listed it
    rows = cmp.compare_apps("--json", before, before, {("GPU-a", 10): 300 * cmp.MIB})
    assert [r.note for r in rows if r.outcome == cmp.FAIL] == ["missing from gpumon"]


def test_the_once_table_reads_back_as_the_json_says() -> None:
    snap = _snapshot()
    json_readings, doc = readings.from_json(snapshot_json(snap))
    text_readings = readings.from_text(render(snap))
    assert set(text_readings) == set(json_readings) == {0, 1}
    reference = cmp.gpumon_reference(json_readings, cmp.GPU_FIELDS)
    rows = cmp.compare_gpus("--once", cmp.GPU_FIELDS, reference, reference, text_readings)
    assert {r.field for r in rows} >= {"temperature.gpu", "power.draw", "memory.used",
                                        "compute_mode", "persistence_mode", "pstate"}
    assert [r for r in rows if r.outcome != cmp.PASS] == []
    assert readings.json_apps(doc)  # the simulated GPUs run compute processes


def test_a_table_row_without_its_values_row_is_an_error() -> None:
    first = render(_snapshot(1)).splitlines()
    cut = [line for line in first if "MiB /" not in line]
    with pytest.raises(ValueError, match="without its values row"):
        readings.from_text("\n".join(cut))


def test_the_exporter_page_reads_back_as_the_json_says() -> None:
    source = SimulatedSource(n_gpus=2, seed=3)
    with ExporterReading(lambda: source) as exporter:
        first = exporter.first()
    snap = first.view.snapshot  # the reading the page came from
    assert snap is not None
    got, apps = readings.from_exposition(first.body().data.decode())
    json_readings, doc = readings.from_json(snapshot_json(snap))
    reference = cmp.gpumon_reference(json_readings, cmp.GPU_FIELDS)
    rows = cmp.compare_gpus("exporter", cmp.GPU_FIELDS, reference, reference, got)
    assert {r.field for r in rows} >= {"memory.used", "memory.free", "clocks.sm", "uuid"}
    assert [r for r in rows if r.outcome != cmp.PASS] == []
    everything = readings.json_apps(doc, ("C", "G", "C+G"))
    assert apps == {k: v for k, v in everything.items() if v is not None}


def test_an_exporter_in_the_wrong_unit_is_caught() -> None:
    """FB_USED in MB instead of MiB would be 4.9 % off: more than the 16 MiB tolerance."""
    page = ('# TYPE DCGM_FI_DEV_FB_USED gauge\n'
            'DCGM_FI_DEV_FB_USED{gpu="0",UUID="GPU-a"} 42949.67296\n')
    got, _ = readings.from_exposition(page)
    reference = {0: {"memory.used": 40960.0}}
    rows = cmp.compare_gpus("exporter", [FIELDS["memory.used"]], reference, reference, got)
    assert [r.outcome for r in rows] == [cmp.FAIL]
