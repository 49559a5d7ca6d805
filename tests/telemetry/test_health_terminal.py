"""``gpumon --once -q`` and ``--once --json`` show the health fields as the fake NVML has them,
read through the real nvidia-ml-py; N/A and null where the GPU does not support them."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from fakenvml import FakeNvml
from testkit import jsonschema_or_skip

from gpumon.cli.main import main

SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "docs" / "snapshot.schema.json")
                    .read_text(encoding="utf-8"))


def script(fake: FakeNvml) -> None:
    fake.set_gpu_count(2)
    for key, value in (("clock_events", 0x44), ("ecc_sbe_vol", 7), ("ecc_dbe_vol", 2),
                       ("remap_pending", 1), ("retired_sbe", 4), ("pcie_replay", 9),
                       ("mem_temp", 71)):
        fake.set_value(0, key, value)
    fake.set_energy(0, 12_345_000)
    for func in ("nvmlDeviceGetRemappedRows", "nvmlDeviceGetEccMode",
                 "nvmlDeviceGetCurrentClocksEventReasons",
                 "nvmlDeviceGetCurrentClocksThrottleReasons", "nvmlDeviceRegisterEvents"):
        fake.set_unsupported(func, gpu=1)
    fake.set_error("NVML_FI_DEV_MEMORY_TEMP", 3, gpu=1)


def test_once_json_has_the_health_fields_null_where_unsupported(
        fake_nvml: FakeNvml, capsys: pytest.CaptureFixture[str]) -> None:
    script(fake_nvml)
    assert main(["--once", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    jsonschema_or_skip().validate(doc, SCHEMA)
    g0, g1 = doc["gpus"]
    assert g0["clocks_event_reasons"] == 0x44
    assert g0["clocks_event_reason_names"] == ["SW power cap", "HW thermal slowdown"]
    assert (g0["ecc_enabled"], g0["ecc_corrected_volatile"], g0["ecc_uncorrected_volatile"]) \
        == (True, 7, 2)
    assert (g0["remap_pending"], g0["retired_pages_sbe"], g0["pcie_replay_count"]) \
        == (True, 4, 9)
    assert g0["mem_temperature_c"] == 71
    assert isinstance(g0["energy_mj"], int) and g0["energy_mj"] >= 12_345_000
    assert (g0["xid_count"], g0["xid_last"]) == (0, None)
    for key in ("clocks_event_reasons", "clocks_event_reason_names", "ecc_enabled",
                "ecc_corrected_volatile", "remap_pending", "remapped_rows_correctable",
                "mem_temperature_c", "xid_count"):
        assert g1[key] is None, key
    assert g1["pcie_replay_count"] == 0  # supported there: a real 0


def test_once_q_says_the_reasons_ecc_rows_and_na(fake_nvml: FakeNvml,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    script(fake_nvml)
    assert main(["--once", "-q"]) == 0
    out = capsys.readouterr().out
    gpu0, gpu1 = out.split("\nGPU ")[1:3]
    rows = {line.split(":")[0].strip(): line.split(":", 1)[1].strip()
            for line in gpu0.splitlines() if " : " in line}
    assert rows["SW Power Cap"] == "Active" and rows["HW Thermal Slowdown"] == "Active"
    assert rows["Idle"] == "Not Active"
    assert rows["Pending"] == "Yes" and rows["Single Bit ECC"] == "4"
    assert rows["Replays Since Reset"] == "9" and rows["Memory Current Temp"] == "71 C"
    assert [line.split(": ")[1] for line in gpu0.splitlines()
            if "DRAM Uncorrectable" in line] == ["2", "0"]  # volatile, aggregate
    assert rows["Energy Since Driver Load"].endswith(" J")
    rows1 = {line.split(":")[0].strip(): line.split(":", 1)[1].strip()
             for line in gpu1.splitlines() if " : " in line}
    assert rows1["SW Power Cap"] == "N/A" and rows1["Pending"] == "N/A"
    assert rows1["Current"] == "N/A" and rows1["Memory Current Temp"] == "N/A"
    assert rows1["Since gpumon Started"] == "N/A"


def test_once_q_names_an_xid_with_its_meaning(fake_nvml: FakeNvml,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    fake_nvml.add_xid(0, 79, after_ms=0)  # the reading takes what came since the set was made
    started = time.monotonic()
    assert main(["--once", "-q"]) == 0
    out = capsys.readouterr().out
    assert time.monotonic() - started < 10
    assert "Since gpumon Started          : 1" in out
    assert "79 (GPU has fallen off the bus) at " in out


def test_csv_and_history_keep_the_reasons_and_the_energy(
        fake_nvml: FakeNvml, capsys: pytest.CaptureFixture[str]) -> None:
    import csv
    import io

    from gpumon.telemetry.model.metrics import HISTORY_KEYS

    assert {"clocks_event_reasons", "energy_mj", "mem_temperature_c"} <= set(HISTORY_KEYS)
    script(fake_nvml)
    assert main(["--once", "--csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert rows[0]["clocks_event_reasons"] == str(0x44)
    assert int(rows[0]["energy_mj [mJ]"]) >= 12_345_000
    assert rows[0]["mem_temperature_c [degC]"] == "71"
    assert rows[1]["clocks_event_reasons"] == ""  # not supported: empty, never 0
