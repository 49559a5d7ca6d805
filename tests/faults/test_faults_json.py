"""--once --json on the real NvmlSource (fake library): faults stay inside the schema."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fakenvml import FakeNvml
from testkit import jsonschema_or_skip

from gpumon.cli.main import main

SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "docs" / "snapshot.schema.json")
                    .read_text(encoding="utf-8"))


def test_json_of_a_faulty_real_machine(fake_nvml: FakeNvml,
                                       capfd: pytest.CaptureFixture[str]) -> None:
    fake_nvml.set_gpu_count(3)
    fake_nvml.set_unsupported("nvmlDeviceGetFanSpeed", gpu=0)
    fake_nvml.set_lost(1)
    fake_nvml.set_mig_mode(2, 1)
    fake_nvml.add_mig(2, 0, 1, 0, "1g.5gb", 5 << 30, 1 << 30)
    fake_nvml.add_process(0, 4242, 1 << 30)
    assert main(["--once", "--json"]) == 0
    doc = json.loads(capfd.readouterr().out)
    jsonschema_or_skip().validate(doc, SCHEMA)
    g0, g1, g2 = doc["gpus"]
    assert doc["simulated"] is False and not any(g["simulated"] for g in doc["gpus"])
    assert g0["fan_pct"] is None and g0["temperature_c"] == 40
    assert g1["lost"] is True and g1["lost_message"] and g1["mem_used_bytes"] is None
    assert [m["gpu_instance_id"] for m in g2["mig_devices"]] == [1]
    assert [(p["gpu_index"], p["pid"]) for p in doc["processes"]] == [(0, 4242)]
