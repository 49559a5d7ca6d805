"""free_memory_by_uuid: the playground kernel's free-memory figure for a GPU where it has no
CUDA context yet, read from NVML (the fake library) and matched by UUID, not by index."""

from __future__ import annotations

import pynvml
from fakenvml import FakeNvml

from gpumon.telemetry.nvml.free import free_memory_by_uuid

GiB = 2**30


def test_the_gpu_with_that_uuid_answers_in_any_spelling(fake_nvml: FakeNvml) -> None:
    fake_nvml.set_gpu_count(3)
    fake_nvml.set_value(2, "mem_total", 80 * GiB)
    fake_nvml.set_value(2, "mem_used", 30 * GiB)
    fake_nvml.set_value(2, "mem_reserved", 0)
    nvml = "GPU-fa4e0000-0000-4000-8000-000000000002"
    assert free_memory_by_uuid(nvml) == 50 * GiB
    assert free_memory_by_uuid(nvml[4:]) == 50 * GiB  # torch prints it without "GPU-"
    assert free_memory_by_uuid(nvml[4:].replace("-", "").upper()) == 50 * GiB


def test_an_unknown_uuid_or_no_nvml_is_none(fake_nvml: FakeNvml) -> None:
    assert free_memory_by_uuid("GPU-00000000-0000-0000-0000-000000000009") is None
    assert free_memory_by_uuid("not a uuid") is None
    fake_nvml.set_init_error(pynvml.NVML_ERROR_DRIVER_NOT_LOADED)
    assert free_memory_by_uuid("GPU-fa4e0000-0000-4000-8000-000000000000") is None
