"""NvmlSource when NVML fails in ways the fake library in C does not script: nvmlInit raising
the binding's real errors (no compiler needed), the real library missing, a binding whose
Python wrapper fails, a GPU count that cannot be read. Everything the fake covers (unsupported
fields, lost GPUs, missing functions, processes) is in test_nvml_fake.py, through the real
binding.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable, Iterator
from typing import Any

import pynvml
import pytest
from fakenvml import FakeNvml

from gpumon.telemetry.model.types import SourceState
from gpumon.telemetry.nvml.source import NvmlSource

GIB = 1024**3


def raiser(code: int) -> Callable[..., Any]:
    def fn(*args: Any) -> Any:
        raise pynvml.NVMLError(code)
    return fn


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


def test_sample_never_raises_on_a_binding_bug(fake_nvml: FakeNvml, source: NvmlSource,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """The fake library answers; the binding's Python wrapper fails on GPU 1 as a changed
    binding might (a TypeError, not an NVMLError): that GPU is marked, GPU 0 is read."""
    fake_nvml.set_gpu_count(2)
    real = pynvml.nvmlDeviceGetUtilizationRates
    source.open()
    gpu1 = ctypes.cast(pynvml.nvmlDeviceGetHandleByIndex(1), ctypes.c_void_p).value

    def changed(handle: Any) -> Any:
        if ctypes.cast(handle, ctypes.c_void_p).value == gpu1:
            raise TypeError("binding changed")
        return real(handle)

    monkeypatch.setattr(pynvml, "nvmlDeviceGetUtilizationRates", changed)
    fake_nvml.set_value(0, "util_gpu", 42)
    s0, s1 = source.sample().samples
    assert not s0.lost and s0.gpu_util_pct == 42.0
    assert s1.lost and "binding changed" in s1.message


def test_memory_v2_not_supported_falls_back_to_v1_for_good(fake_nvml: FakeNvml,
                                                          source: NvmlSource) -> None:
    fake_nvml.set_gpu_count(2)
    fake_nvml.set_unsupported("nvmlDeviceGetMemoryInfo_v2", gpu=0)
    for gpu in (0, 1):
        fake_nvml.set_value(gpu, "mem_used", 3 * GIB)
        fake_nvml.set_value(gpu, "mem_reserved", GIB // 4)
    source.open()
    source.sample()  # GPU 0 asks v2 once, then v1
    before = [fake_nvml.device_calls(g) for g in (0, 1)]
    for _ in range(3):
        s0, s1 = source.sample().samples
        assert s0.mem_reserved_bytes is None and s0.mem_used_bytes == 3 * GIB + GIB // 4
        assert s1.mem_reserved_bytes == GIB // 4 and s1.mem_used_bytes == 3 * GIB
    per_tick = [fake_nvml.device_calls(g) - b for g, b in zip((0, 1), before, strict=True)]
    assert per_tick[0] == per_tick[1]  # v2 is not asked again on GPU 0: one call each


def test_count_failure_is_an_error_status_and_shuts_down(
        fake_nvml: FakeNvml, source: NvmlSource, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pynvml, "nvmlDeviceGetCount", raiser(pynvml.NVML_ERROR_UNKNOWN))
    status = source.open()
    assert status.state is SourceState.ERROR and "list the GPUs" in status.message
    assert fake_nvml.init_count() == 0  # the library was shut down again
    assert source.sample().samples == ()
