"""MIG: a GPU in MIG mode lists its MIG devices under it (source, --once, the GPU table)."""

from __future__ import annotations

import pytest
from fakenvml import FakeNvml
from faults_helpers import run_once, smi_row

from gpumon.telemetry.nvml.source import NvmlSource

GIB = 1024**3
MIB = 1024**2


def _mig_machine(fake: FakeNvml) -> None:
    fake.set_gpu_count(2)
    fake.set_name(0, "NVIDIA A100-SXM4-40GB")
    fake.set_mig_mode(0, 1)
    fake.add_mig(0, 0, 1, 0, "3g.20gb", 20 * GIB, 4 * GIB)
    fake.add_mig(0, 1, 2, 0, "2g.10gb", 10 * GIB, 512 * MIB)
    fake.add_mig(0, 3, 5, 0, "1g.5gb", 5 * GIB, 0)  # slot 2 is empty
    fake.set_mig_mode(1, -1)  # GPU 1 does not support MIG


def test_source_lists_mig_devices_under_their_gpu(fake_nvml: FakeNvml) -> None:
    _mig_machine(fake_nvml)
    source = NvmlSource()
    source.open()
    try:
        first, second = source.sample(), source.sample(include_slow=False)
        fake_nvml.add_mig(0, 2, 3, 0, "1g.5gb", 5 * GIB, GIB)  # created while running
        third = source.sample(include_slow=True)
    finally:
        source.close()
    for snap in (first, second):
        assert [(m.gpu_index, m.gpu_instance_id, m.compute_instance_id) for m in snap.migs] \
            == [(0, 1, 0), (0, 2, 0), (0, 5, 0)]
        assert snap.migs[0].name == "NVIDIA A100-SXM4-40GB MIG 3g.20gb"
        assert snap.migs[0].uuid.startswith("MIG-")
        assert (snap.migs[0].mem_used_bytes, snap.migs[0].mem_total_bytes) == (4 * GIB, 20 * GIB)
        assert all(not s.lost for s in snap.samples)
    assert [m.gpu_instance_id for m in third.migs] == [1, 2, 3, 5]


def test_once_prints_the_mig_devices(fake_nvml: FakeNvml,
                                     capfd: pytest.CaptureFixture[str]) -> None:
    _mig_machine(fake_nvml)
    rc, out, _ = run_once(capfd)
    assert rc == 0
    lines = out.splitlines()
    start = lines.index(next(line for line in lines if "MIG devices:" in line))
    rows = [line.split() for line in lines[start + 3:start + 6]]
    assert [r[1:4] for r in rows] == [["0", "1", "0"], ["0", "2", "0"], ["0", "5", "0"]]
    assert "4096MiB / 20480MiB" in lines[start + 3]


def test_gpu_table_marks_the_mig_gpu(qtbot, make_window,
                                     fake_nvml: FakeNvml) -> None:
    _mig_machine(fake_nvml)
    w = make_window(NvmlSource)
    qtbot.waitUntil(lambda: w.smi_table.model().rowCount() == 2, timeout=5000)
    qtbot.waitUntil(lambda: "MIG ×3" in smi_row(w, 0)["Name"], timeout=5000)
    assert "MIG" not in smi_row(w, 1)["Name"]
    tip = w.smi_table.model().index(0, 1).data(0x03)  # ToolTipRole
    assert "MIG GI 1 CI 0: NVIDIA A100-SXM4-40GB MIG 3g.20gb, 4096MiB / 20480MiB" in tip
