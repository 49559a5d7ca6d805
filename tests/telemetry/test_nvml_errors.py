"""NvmlSource with individual pynvml functions monkeypatched to raise the binding's real errors.

These need no compiler: a few pynvml functions are replaced by plain Python ones that return
healthy values, and each test makes one of them raise ``pynvml.NVMLError(code)``, which the
binding turns into the matching ``NVMLError_*`` subclass.
"""

from __future__ import annotations

import ctypes
import logging
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from types import SimpleNamespace
from typing import Any

import pynvml
import pytest

from gpumon.telemetry.nvml import NOT_AVAILABLE, NvmlSource
from gpumon.telemetry.types import ProcessType, SourceState

GIB = 1024**3


def raiser(code: int) -> Callable[..., Any]:
    def fn(*args: Any) -> Any:
        raise pynvml.NVMLError(code)
    return fn


class PyNvml:
    """Healthy GPUs made of Python values; handles are the GPU indices."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, count: int = 2) -> None:
        self.mp = monkeypatch
        self.util = [10 * (i + 1) for i in range(count)]
        self.procs: dict[int, list[Any]] = {i: [] for i in range(count)}
        self.queries = [0] * count
        patches: dict[str, Callable[..., Any]] = {
            "nvmlInit": lambda: None,
            "nvmlShutdown": lambda: None,
            "nvmlDeviceGetCount": lambda: count,
            "nvmlDeviceGetHandleByIndex": lambda i: i,
            "nvmlSystemGetDriverVersion": lambda: "550.54.15",
            "nvmlSystemGetCudaDriverVersion": lambda: 12040,
            "nvmlSystemGetNVMLVersion": lambda: "12.550.54.15",
            "nvmlDeviceGetName": lambda h: f"Py GPU {h}",
            "nvmlDeviceGetUUID": lambda h: f"GPU-py-{h}",
            "nvmlDeviceGetPciInfo_v3": lambda h: SimpleNamespace(busId=f"00000000:0{h}:00.0"),
            "nvmlDeviceGetMemoryInfo": self.memory,
            "nvmlDeviceGetUtilizationRates": self.utilization,
            "nvmlDeviceGetTemperatureV": lambda h, sensor: 50,
            "nvmlDeviceGetPowerUsage": lambda h: 120_000,
            "nvmlDeviceGetEnforcedPowerLimit": lambda h: 250_000,
            "nvmlDeviceGetFanSpeed": lambda h: 40,
            "nvmlDeviceGetClockInfo": lambda h, kind: 1000,
            "nvmlDeviceGetPerformanceState": lambda h: 0,
            "nvmlDeviceGetPcieThroughput": lambda h, counter: 10,
            "nvmlDeviceGetEncoderUtilization": lambda h: [0, 1000],
            "nvmlDeviceGetDecoderUtilization": lambda h: [0, 1000],
            "nvmlDeviceGetPersistenceMode": lambda h: 1,
            "nvmlDeviceGetComputeMode": lambda h: 0,
            "nvmlDeviceGetComputeRunningProcesses_v3": lambda h: self.procs[h],
            "nvmlDeviceGetGraphicsRunningProcesses_v3": lambda h: [],
        }
        for name, fn in patches.items():
            self.patch(name, fn)

    def patch(self, name: str, fn: Callable[..., Any]) -> None:
        def call(*args: Any) -> Any:
            return fn(*args)
        call.__name__ = name  # as the binding's own functions are named
        self.mp.setattr(pynvml, name, call)

    def memory(self, h: int, version: int | None = None) -> Any:
        self.queries[h] += 1
        return SimpleNamespace(total=8 * GIB, used=GIB, free=7 * GIB, reserved=0)

    def utilization(self, h: int) -> Any:
        return SimpleNamespace(gpu=self.util[h], memory=5)


@pytest.fixture
def py_nvml(monkeypatch: pytest.MonkeyPatch) -> PyNvml:
    return PyNvml(monkeypatch)


@pytest.fixture
def source() -> Iterator[NvmlSource]:
    src = NvmlSource(recheck_lost_s=3600)
    yield src
    src.close()


def real_nvml_present() -> bool:
    try:
        ctypes.CDLL("libnvidia-ml.so.1")
    except OSError:
        return False
    return True


@pytest.mark.skipif(real_nvml_present(), reason="this machine has an NVIDIA driver")
def test_real_library_not_found(source: NvmlSource) -> None:
    status = source.open()
    assert status.state is SourceState.LIBRARY_NOT_FOUND
    assert status.message == ("No NVIDIA driver was found on this computer "
                              "(libnvidia-ml.so.1 could not be loaded).")
    assert "--simulate" in status.hint and "Install the NVIDIA driver" in status.hint
    snap = source.sample()
    assert snap.samples == () and snap.status == status and source.gpus() == []


@pytest.mark.parametrize(("code", "state", "words"), [
    (pynvml.NVML_ERROR_LIBRARY_NOT_FOUND, SourceState.LIBRARY_NOT_FOUND, "No NVIDIA driver"),
    (pynvml.NVML_ERROR_DRIVER_NOT_LOADED, SourceState.DRIVER_NOT_LOADED, "not running"),
    (pynvml.NVML_ERROR_LIB_RM_VERSION_MISMATCH, SourceState.VERSION_MISMATCH, "mismatch"),
    (pynvml.NVML_ERROR_NO_PERMISSION, SourceState.NO_PERMISSION, "not allowed"),
    (pynvml.NVML_ERROR_UNINITIALIZED, SourceState.ERROR, "could not start"),
])
def test_init_errors(monkeypatch: pytest.MonkeyPatch, source: NvmlSource, code: int,
                     state: SourceState, words: str) -> None:
    monkeypatch.setattr(pynvml, "nvmlInit", raiser(code))
    status = source.open()
    assert status.state is state and words in status.message and status.hint
    assert not status.usable


def test_odd_exception_from_init_is_a_status(monkeypatch: pytest.MonkeyPatch,
                                             source: NvmlSource) -> None:
    def broken() -> None:
        raise OSError("wrong ELF class")
    monkeypatch.setattr(pynvml, "nvmlInit", broken)
    status = source.open()
    assert status.state is SourceState.ERROR and "wrong ELF class" in status.message


def test_healthy_baseline(py_nvml: PyNvml, source: NvmlSource) -> None:
    assert source.open().state is SourceState.OK
    s0, s1 = source.sample().samples
    assert (s0.gpu_util_pct, s1.gpu_util_pct, s0.fan_pct, s0.power_w) == (10.0, 20.0, 40.0, 120.0)
    assert source.machine().cuda_driver_version == "12.4"


def test_not_supported_per_field(py_nvml: PyNvml, source: NvmlSource) -> None:
    py_nvml.patch("nvmlDeviceGetFanSpeed", raiser(pynvml.NVML_ERROR_NOT_SUPPORTED))
    py_nvml.patch("nvmlDeviceGetEncoderUtilization", raiser(pynvml.NVML_ERROR_NOT_SUPPORTED))
    source.open()
    for s in source.sample().samples:
        assert s.fan_pct is None and s.encoder_util_pct is None
        assert not s.lost and s.decoder_util_pct == 0.0 and s.temperature_c == 50.0


def test_gpu_lost_mid_run(py_nvml: PyNvml, source: NvmlSource) -> None:
    source.open()
    source.sample()
    real_util = py_nvml.utilization

    def util(h: int) -> Any:
        if h == 0:
            raise pynvml.NVMLError(pynvml.NVML_ERROR_GPU_IS_LOST)
        return real_util(h)
    py_nvml.patch("nvmlDeviceGetUtilizationRates", util)
    py_nvml.util[1] = 93
    s0, s1 = source.sample().samples
    assert s0.lost and "GPU is lost" in s0.message
    assert not s1.lost and s1.gpu_util_pct == 93.0
    before = py_nvml.queries[0]
    py_nvml.util[1] = 94
    s0, s1 = source.sample().samples
    assert s0.lost and s1.gpu_util_pct == 94.0
    assert py_nvml.queries[0] == before  # the lost GPU was left alone


def test_function_not_found_logged_once(py_nvml: PyNvml, source: NvmlSource,
                                        caplog: pytest.LogCaptureFixture) -> None:
    calls = []

    def missing(h: int) -> Any:
        calls.append(h)
        raise pynvml.NVMLError(pynvml.NVML_ERROR_FUNCTION_NOT_FOUND)
    py_nvml.patch("nvmlDeviceGetFanSpeed", missing)
    source.open()
    with caplog.at_level(logging.INFO, logger="gpumon.telemetry.nvml"):
        snaps = [source.sample() for _ in range(4)]
    assert all(s.fan_pct is None and not s.lost for snap in snaps for s in snap.samples)
    assert len([r for r in caplog.records if "nvmlDeviceGetFanSpeed" in r.getMessage()]) == 1
    assert calls == [0]  # never called again, on any GPU


def test_vanished_pid_keeps_its_row(py_nvml: PyNvml, source: NvmlSource) -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    py_nvml.procs[0] = [SimpleNamespace(pid=child.pid, usedGpuMemory=GIB),
                        SimpleNamespace(pid=os.getpid(), usedGpuMemory=None)]
    source.open()
    procs = {p.pid: p for p in source.sample().processes}
    ghost = procs[child.pid]
    assert ghost.gpu_index == 0 and ghost.type is ProcessType.COMPUTE
    assert ghost.gpu_mem_bytes == GIB
    assert (ghost.name, ghost.user, ghost.command, ghost.is_self) == (None, None, None, False)
    me = procs[os.getpid()]
    assert me.is_self and me.gpu_mem_bytes is None and me.name


def test_sample_never_raises_on_a_binding_bug(py_nvml: PyNvml, source: NvmlSource) -> None:
    def broken(h: int) -> Any:
        if h == 1:
            raise TypeError("binding changed")
        return SimpleNamespace(gpu=1, memory=2)
    py_nvml.patch("nvmlDeviceGetUtilizationRates", broken)
    source.open()
    s0, s1 = source.sample().samples
    assert not s0.lost and s1.lost and "binding changed" in s1.message


def test_raw_not_available_sentinel_is_none(py_nvml: PyNvml, source: NvmlSource) -> None:
    py_nvml.procs[1] = [SimpleNamespace(pid=os.getpid(), usedGpuMemory=NOT_AVAILABLE)]
    source.open()
    (proc,) = source.sample().processes
    assert proc.gpu_index == 1 and proc.gpu_mem_bytes is None


def test_memory_v2_not_supported_falls_back_to_v1_for_good(py_nvml: PyNvml,
                                                          source: NvmlSource) -> None:
    versions: list[int | None] = []

    def memory(h: int, version: int | None = None) -> Any:
        versions.append(version)
        if version is not None:
            raise pynvml.NVMLError(pynvml.NVML_ERROR_NOT_SUPPORTED)
        return SimpleNamespace(total=8 * GIB, used=3 * GIB, free=5 * GIB)
    py_nvml.patch("nvmlDeviceGetMemoryInfo", memory)
    source.open()
    versions.clear()
    for _ in range(3):
        s0 = source.sample().samples[0]
        assert s0.mem_used_bytes == 3 * GIB and s0.mem_reserved_bytes is None
    assert versions == [None] * 6  # two GPUs, three ticks, v2 not asked again


def test_count_failure_is_an_error_status_and_shuts_down(py_nvml: PyNvml,
                                                         source: NvmlSource) -> None:
    shutdowns: list[int] = []
    py_nvml.patch("nvmlDeviceGetCount", raiser(pynvml.NVML_ERROR_UNKNOWN))
    py_nvml.patch("nvmlShutdown", lambda: shutdowns.append(1))
    status = source.open()
    assert status.state is SourceState.ERROR and "list the GPUs" in status.message
    assert shutdowns == [1]
    assert source.sample().samples == ()
