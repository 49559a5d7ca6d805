"""process_memory_by_uuid: the lesson's memory step prints NVML's figure for its own process
beside torch's two counters; read from NVML (the fake library), matched by UUID and PID."""

from __future__ import annotations

import pynvml
from fakenvml import FakeNvml

from gpumon.telemetry.nvml.process_memory import process_memory_by_uuid
from gpumon.telemetry.nvml.readers import NOT_AVAILABLE

MiB = 2**20
GPU2 = "GPU-fa4e0000-0000-4000-8000-000000000002"


def test_this_process_on_the_gpu_with_that_uuid(fake_nvml: FakeNvml) -> None:
    fake_nvml.set_gpu_count(3)
    fake_nvml.add_process(0, 4242, 100 * MiB)  # the same PID on another GPU: not this one's
    fake_nvml.add_process(2, 4242, 712 * MiB)
    fake_nvml.add_process(2, 777, 5000 * MiB)  # another process on the same GPU
    assert process_memory_by_uuid(GPU2, 4242) == 712 * MiB
    assert process_memory_by_uuid(GPU2[4:], 4242) == 712 * MiB  # torch's spelling
    assert process_memory_by_uuid(GPU2, 777) == 5000 * MiB


def test_in_both_lists_the_larger_figure_counts_once(fake_nvml: FakeNvml) -> None:
    fake_nvml.set_gpu_count(3)
    fake_nvml.add_process(2, 4242, 300 * MiB)
    fake_nvml.add_process(2, 4242, 320 * MiB, graphics=True)
    assert process_memory_by_uuid(GPU2, 4242) == 320 * MiB


def test_older_drivers_answer_through_their_older_entry_points(fake_nvml_old: FakeNvml) -> None:
    fake_nvml_old.set_gpu_count(3)
    fake_nvml_old.add_process(2, 4242, 712 * MiB)
    assert process_memory_by_uuid(GPU2, 4242) == 712 * MiB


def test_not_listed_no_figure_no_gpu_or_no_nvml_is_none(fake_nvml: FakeNvml) -> None:
    fake_nvml.set_gpu_count(3)
    fake_nvml.add_process(2, 4242, NOT_AVAILABLE)
    assert process_memory_by_uuid(GPU2, 4242) is None  # listed without a figure
    assert process_memory_by_uuid(GPU2, 99) is None  # a PID NVML does not list (a container)
    assert process_memory_by_uuid("GPU-00000000-0000-0000-0000-000000000009", 4242) is None
    assert process_memory_by_uuid("not a uuid", 4242) is None
    fake_nvml.set_init_error(pynvml.NVML_ERROR_DRIVER_NOT_LOADED)
    assert process_memory_by_uuid(GPU2, 4242) is None
