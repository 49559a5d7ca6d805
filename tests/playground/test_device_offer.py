"""The devices the forms offer: torch's, plus the GPUs NVML sees that torch cannot use."""

from __future__ import annotations

from gpumon.playground.data.device_offer import NOT_HERE, is_unavailable, offered
from gpumon.playground.data.devices import DeviceOption

CPU = DeviceOption("cpu", "cpu — main memory")
META = DeviceOption("meta", "meta — shapes only")
CUDA0 = DeviceOption("cuda:0", "cuda:0 — H100", "a" * 32, 80 * 2**30)


def names(options: list[DeviceOption]) -> list[tuple[str, bool]]:
    return [(o.name, is_unavailable(o)) for o in options]


def test_cpu_only_torch_on_a_machine_without_gpus_still_offers_cuda_0() -> None:
    out = offered([CPU, META], 0)
    assert names(out) == [("cpu", False), ("cuda:0", True), ("meta", False)]
    assert NOT_HERE in out[1].label and "PyTorch sees no CUDA device" in out[1].label


def test_every_gpu_nvml_sees_is_offered() -> None:
    assert names(offered([CPU, META], 3)) == [
        ("cpu", False), ("cuda:0", True), ("cuda:1", True), ("cuda:2", True), ("meta", False)]
    assert names(offered([CPU, CUDA0], 2)) == [("cpu", False), ("cuda:0", False),
                                              ("cuda:1", True)]
    assert names(offered([CPU, CUDA0], 1)) == [("cpu", False), ("cuda:0", False)]
