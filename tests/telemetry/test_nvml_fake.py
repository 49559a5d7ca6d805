"""NvmlSource against the fake NVML library in C, through the real nvidia-ml-py binding."""

from __future__ import annotations

import logging
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import psutil
import pynvml
import pytest
from fakenvml import FakeNvml
from testkit import vanished_pid

from gpumon.telemetry.model.types import ProcessType, SourceState
from gpumon.telemetry.nvml.readers import NOT_AVAILABLE
from gpumon.telemetry.nvml.source import NvmlSource

GIB = 1024**3
FAKE_C = Path(__file__).resolve().parent / "fakenvml" / "fakenvml.c"


@pytest.fixture
def source(fake_nvml: FakeNvml) -> Iterator[NvmlSource]:
    src = NvmlSource(recheck_lost_s=3600)
    yield src
    src.close()


def test_open_reads_machine_and_gpu_identity(fake_nvml: FakeNvml, source: NvmlSource) -> None:
    fake_nvml.set_gpu_count(2)
    fake_nvml.set_driver_version("535.104.05", "12.535.104.05")
    fake_nvml.set_cuda_version(12020)
    fake_nvml.set_name(1, "NVIDIA H100 80GB HBM3")
    status = source.open()
    assert status.state is SourceState.OK
    assert "2 GPUs" in status.message and "535.104.05" in status.message
    m = source.machine()
    assert (m.driver_version, m.cuda_driver_version, m.nvml_version) == (
        "535.104.05", "12.2", "12.535.104.05")
    assert m.source_name == "NVML" and m.host_name and not m.simulated
    gpus = source.gpus()
    assert [g.index for g in gpus] == [0, 1]
    assert gpus[1].name == "NVIDIA H100 80GB HBM3"
    assert gpus[0].uuid == "GPU-fa4e0000-0000-4000-8000-000000000000"
    assert gpus[1].pci_bus_id == "00000000:11:00.0"
    assert gpus[0].mem_total_bytes == 16 * GIB


def test_sample_reads_and_converts_every_field(fake_nvml: FakeNvml,
                                               source: NvmlSource) -> None:
    values = dict(mem_total=24 * GIB, mem_used=5 * GIB, mem_reserved=300 * 1024**2,
                  util_gpu=87, util_mem=41, temp=71, power_mw=215_500, limit_mw=350_000,
                  fan=55, sm_clock=1905, mem_clock=9751, pstate=2, pcie_rx_kb=1500,
                  pcie_tx_kb=250, enc=12, dec=34, persistence=0, compute_mode=3)
    for key, value in values.items():
        fake_nvml.set_value(0, key, value)
    source.open()
    snap = source.sample()
    (s,) = snap.samples
    assert not s.lost and s.message == ""
    assert s.mem_total_bytes == 24 * GIB
    assert s.mem_used_bytes == 5 * GIB
    assert s.mem_reserved_bytes == 300 * 1024**2
    assert s.mem_free_bytes == 24 * GIB - 5 * GIB - 300 * 1024**2
    assert (s.gpu_util_pct, s.mem_util_pct) == (87.0, 41.0)
    assert s.temperature_c == 71.0
    assert s.power_w == pytest.approx(215.5)
    assert s.power_limit_w == pytest.approx(350.0)
    assert s.fan_pct == 55.0
    assert (s.sm_clock_mhz, s.mem_clock_mhz) == (1905.0, 9751.0)
    assert s.pstate == "P2"
    assert s.pcie_rx_bytes_per_s == 1500 * 1024
    assert s.pcie_tx_bytes_per_s == 250 * 1024
    assert (s.encoder_util_pct, s.decoder_util_pct) == (12.0, 34.0)
    assert s.persistence_mode is False
    assert s.compute_mode == "Exclusive Process"
    assert snap.status.state is SourceState.OK and snap.read_duration_s >= 0
    assert snap.gpus == tuple(source.gpus()) and not snap.simulated


@pytest.mark.parametrize("count", [1, 8, 16])
def test_many_gpus(fake_nvml: FakeNvml, source: NvmlSource, count: int) -> None:
    fake_nvml.set_gpu_count(count)
    assert source.open().state is SourceState.OK
    snap = source.sample()
    assert [s.index for s in snap.samples] == list(range(count))
    assert len({g.uuid for g in snap.gpus}) == count
    assert [s.mem_used_bytes for s in snap.samples] == [(i + 1) * GIB for i in range(count)]


def test_no_gpus(fake_nvml: FakeNvml, source: NvmlSource) -> None:
    fake_nvml.set_gpu_count(0)
    status = source.open()
    assert status.state is SourceState.NO_GPUS and status.usable and status.hint
    snap = source.sample()
    assert snap.samples == () and snap.gpus == () and snap.status == status


def test_unsupported_field_is_none_on_that_gpu_only(fake_nvml: FakeNvml,
                                                    source: NvmlSource) -> None:
    fake_nvml.set_gpu_count(2)
    fake_nvml.set_unsupported("nvmlDeviceGetFanSpeed", gpu=1)
    fake_nvml.set_unsupported("nvmlDeviceGetPowerUsage")  # every GPU
    source.open()
    s0, s1 = source.sample().samples
    assert s0.fan_pct == 30.0 and s1.fan_pct is None
    assert s0.power_w is None and s1.power_w is None
    assert not s1.lost and s1.temperature_c == 41.0


def test_gpu_lost_mid_run_others_keep_updating(fake_nvml: FakeNvml,
                                               source: NvmlSource) -> None:
    fake_nvml.set_gpu_count(3)
    source.open()
    assert not any(s.lost for s in source.sample().samples)
    fake_nvml.set_lost(1)
    fake_nvml.set_value(0, "util_gpu", 77)
    fake_nvml.set_value(2, "util_gpu", 99)
    s0, s1, s2 = source.sample().samples
    assert s1.lost and "lost" in s1.message and s1.gpu_util_pct is None
    assert (s0.lost, s0.gpu_util_pct, s2.lost, s2.gpu_util_pct) == (False, 77.0, False, 99.0)
    calls = fake_nvml.device_calls(1)
    for _ in range(3):
        assert source.sample().samples[1].lost
    assert fake_nvml.device_calls(1) == calls  # not asked again before the re-check is due


def test_lost_gpu_is_rechecked_and_comes_back(fake_nvml: FakeNvml) -> None:
    fake_nvml.set_gpu_count(2)
    source = NvmlSource(recheck_lost_s=0)
    try:
        source.open()
        fake_nvml.set_lost(0)
        assert source.sample().samples[0].lost
        assert source.sample().samples[0].lost  # re-check fails, still lost
        fake_nvml.set_lost(0, False)
        fake_nvml.set_value(0, "temp", 66)
        s0 = source.sample().samples[0]
        assert not s0.lost and s0.temperature_c == 66.0 and s0.message == ""
    finally:
        source.close()


def test_unknown_error_on_one_field_is_na_not_a_lost_gpu(fake_nvml: FakeNvml,
                                                         source: NvmlSource) -> None:
    """An "unknown error" from one call makes its fields N/A for the tick, and says which."""
    fake_nvml.set_gpu_count(2)
    source.open()
    fake_nvml.set_error("nvmlDeviceGetUtilizationRates", pynvml.NVML_ERROR_UNKNOWN, gpu=0)
    s0, s1 = source.sample().samples
    assert not s0.lost and s0.message == ""
    assert s0.gpu_util_pct is None and s0.mem_util_pct is None
    assert s0.temperature_c is not None and s0.mem_used_bytes is not None
    assert len(s0.failed_reads) == 1
    assert s0.failed_reads[0].startswith("nvmlDeviceGetUtilizationRates: Unknown")
    assert not s1.lost and s1.gpu_util_pct == 11.0 and s1.failed_reads == ()


def test_unknown_error_on_every_call_marks_the_gpu_lost(fake_nvml: FakeNvml,
                                                        source: NvmlSource) -> None:
    """When every read of a GPU fails, it is lost (with the error in its message)."""
    fake_nvml.set_gpu_count(2)
    source.open()
    for func in sorted(set(re.findall(r"\b(nvmlDevice\w+)[(,]", FAKE_C.read_text()))):
        if func not in ("nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetCount_v2"):
            fake_nvml.set_error(func, pynvml.NVML_ERROR_UNKNOWN, gpu=0)
    s0, s1 = source.sample().samples
    assert s0.lost and "every NVML read" in s0.message and "Unknown" in s0.message
    assert not s1.lost and s1.gpu_util_pct == 11.0


def test_gpu_lost_at_open(fake_nvml: FakeNvml, source: NvmlSource) -> None:
    fake_nvml.set_gpu_count(2)
    fake_nvml.set_lost(0)
    assert source.open().state is SourceState.OK
    g0, g1 = source.gpus()
    assert g0.name == "Unknown GPU" and g1.name == "Fake NVIDIA GPU 1"
    s0, s1 = source.sample().samples
    assert s0.lost and not s1.lost


def test_other_device_error_is_none_and_logged_once(fake_nvml: FakeNvml, source: NvmlSource,
                                                   caplog: pytest.LogCaptureFixture) -> None:
    fake_nvml.set_error("nvmlDeviceGetEnforcedPowerLimit", pynvml.NVML_ERROR_NO_PERMISSION)
    source.open()
    with caplog.at_level(logging.WARNING, logger="gpumon.telemetry.nvml.source"):
        samples = [source.sample().samples[0] for _ in range(3)]
    assert all(s.power_limit_w is None and not s.lost and s.power_w == 100.0 for s in samples)
    assert len([r for r in caplog.records if "EnforcedPowerLimit" in r.getMessage()]) == 1


def test_no_permission_for_every_gpu(fake_nvml: FakeNvml, source: NvmlSource) -> None:
    fake_nvml.set_gpu_count(2)
    fake_nvml.set_error("nvmlDeviceGetHandleByIndex_v2", pynvml.NVML_ERROR_NO_PERMISSION)
    status = source.open()
    assert status.state is SourceState.NO_PERMISSION and status.hint
    assert all(s.lost and "not allowed" in s.message for s in source.sample().samples)


def test_old_driver_falls_back_and_logs_each_missing_function_once(
        fake_nvml_old: FakeNvml, caplog: pytest.LogCaptureFixture) -> None:
    fake_nvml_old.add_process(0, os.getpid(), GIB)
    fake_nvml_old.set_value(0, "temp", 63)
    source = NvmlSource()
    try:
        with caplog.at_level(logging.INFO, logger="gpumon.telemetry.nvml.source"):
            assert source.open().state is SourceState.OK
            snaps = [source.sample() for _ in range(3)]
    finally:
        source.close()
    s = snaps[-1].samples[0]
    assert s.mem_reserved_bytes is None  # v1 has no reserved field
    assert s.mem_used_bytes == GIB + 256 * 1024**2  # v1 counts reserved as used
    assert s.temperature_c == 63.0
    assert [p.pid for p in snaps[-1].processes] == [os.getpid()]
    for name in ("nvmlDeviceGetMemoryInfo_v2", "nvmlDeviceGetTemperatureV",
                 "nvmlDeviceGetComputeRunningProcesses_v3"):
        assert len([r for r in caplog.records if name in r.getMessage()]) == 1, name


def test_processes(fake_nvml: FakeNvml, source: NvmlSource) -> None:
    gone = vanished_pid()
    me = os.getpid()
    fake_nvml.set_gpu_count(2)
    fake_nvml.add_process(0, me, 2 * GIB)
    fake_nvml.add_process(0, me, 2 * GIB, graphics=True)
    fake_nvml.add_process(1, gone, NOT_AVAILABLE)
    fake_nvml.add_process(1, me, 512 * 1024**2, graphics=True)
    source.open()
    procs = {(p.gpu_index, p.pid): p for p in source.sample().processes}
    assert set(procs) == {(0, me), (1, gone), (1, me)}
    mine = procs[(0, me)]
    assert mine.type is ProcessType.COMPUTE_GRAPHICS and mine.gpu_mem_bytes == 2 * GIB
    assert mine.is_self and mine.name and mine.user and mine.command
    assert procs[(1, me)].type is ProcessType.GRAPHICS
    ghost = procs[(1, gone)]
    assert ghost.type is ProcessType.COMPUTE and ghost.gpu_mem_bytes is None
    assert (ghost.name, ghost.user, ghost.command, ghost.is_self) == (None, None, None, False)


def test_known_processes_are_verified_only_on_slow_ticks(
        fake_nvml: FakeNvml, source: NvmlSource, monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[int | None] = []  # PIDs psutil.Process was built for: each reads /proc/<pid>/stat

    class CountingProcess(psutil.Process):
        def __init__(self, pid: int | None = None) -> None:
            made.append(pid)
            super().__init__(pid)

    monkeypatch.setattr("gpumon.telemetry.procs.procinfo.psutil.Process", CountingProcess)
    me = os.getpid()
    fake_nvml.set_gpu_count(2)
    fake_nvml.add_process(0, me, GIB)
    fake_nvml.add_process(1, me, GIB, graphics=True)
    source.open()
    first = source.sample()
    assert made == [me]  # one PID on two GPUs: read once
    for _ in range(4):  # ticks without slow fields: no /proc access for a known PID
        assert source.sample(include_slow=False).processes == first.processes
    assert made == [me]
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        fake_nvml.add_process(0, child.pid, GIB)
        quick = source.sample(include_slow=False)
        assert made == [me, child.pid]  # a new PID is read even between slow ticks
        assert {p.pid: p.is_self for p in quick.processes} == {me: True, child.pid: False}
        assert all(p.name and p.command for p in quick.processes)
        source.sample(include_slow=True)
        assert sorted(made[2:]) == sorted([me, child.pid])  # slow tick: every PID verified
    finally:
        child.kill()
        child.wait()


def test_slow_fields_reused_without_include_slow(fake_nvml: FakeNvml,
                                                 source: NvmlSource) -> None:
    source.open()
    first = source.sample().samples[0]
    for key, value in dict(persistence=0, compute_mode=2, limit_mw=123_000, pstate=8,
                           util_gpu=64).items():
        fake_nvml.set_value(0, key, value)
    quick = source.sample(include_slow=False).samples[0]
    assert quick.gpu_util_pct == 64.0
    assert (quick.persistence_mode, quick.compute_mode, quick.power_limit_w, quick.pstate) == (
        first.persistence_mode, first.compute_mode, first.power_limit_w, first.pstate)
    full = source.sample().samples[0]
    assert (full.persistence_mode, full.compute_mode, full.power_limit_w, full.pstate) == (
        False, "Prohibited", 123.0, "P8")


def test_close_shuts_down_and_open_again(fake_nvml: FakeNvml, source: NvmlSource) -> None:
    source.open()
    source.open()  # a second open does not leak an nvmlInit
    assert fake_nvml.init_count() == 1
    source.close()
    assert fake_nvml.init_count() == 0
    snap = source.sample()
    assert snap.status.state is SourceState.CLOSED and snap.samples == ()
    source.close()  # twice is harmless
    assert source.open().state is SourceState.OK and len(source.sample().samples) == 1


@pytest.mark.parametrize(("code", "state"), [
    (pynvml.NVML_ERROR_DRIVER_NOT_LOADED, SourceState.DRIVER_NOT_LOADED),
    (pynvml.NVML_ERROR_LIB_RM_VERSION_MISMATCH, SourceState.VERSION_MISMATCH),
    (pynvml.NVML_ERROR_NO_PERMISSION, SourceState.NO_PERMISSION),
    (pynvml.NVML_ERROR_UNKNOWN, SourceState.ERROR),
])
def test_init_errors_from_the_library(fake_nvml: FakeNvml, source: NvmlSource, code: int,
                                      state: SourceState) -> None:
    fake_nvml.set_init_error(code)
    status = source.open()
    assert status.state is state and not status.usable
    assert status.message.endswith(".") and status.hint
    assert source.sample().samples == ()
