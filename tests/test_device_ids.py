"""normalize_uuid and cuda_index: every spelling of a GPU's UUID gives its 32 digits (bytes and
MIG instances included, the old ``MIG-GPU-.../gi/ci`` form none); ``cuda:N`` is read as torch
reads it. Both the monitor (NVML) and the playground (torch) use these."""

from __future__ import annotations

import pytest

from gpumon.device_ids import cuda_index, normalize_uuid
from gpumon.playground.data.devices import match_cuda_to_nvml

GPU = "GPU-5f3c1e2a-0b1c-4d2e-8f90-123456789abc"
DIGITS = "5f3c1e2a0b1c4d2e8f90123456789abc"
MIG = "MIG-1d2c3b4a-5e6f-5a7b-9c8d-0e1f2a3b4c5d"


@pytest.mark.parametrize("text", [
    GPU, GPU.removeprefix("GPU-"), GPU.upper(), f" {GPU} ", "{" + GPU[4:] + "}", DIGITS,
    GPU.encode(), GPU[4:].encode(),  # older pynvml returns bytes
])
def test_every_spelling_of_a_gpu_uuid_gives_its_digits(text: str | bytes) -> None:
    assert normalize_uuid(text) == DIGITS


def test_a_mig_instance_uuid_gives_its_own_digits_never_its_parents() -> None:
    assert normalize_uuid(MIG) == normalize_uuid(MIG.encode()) == normalize_uuid(MIG[4:])
    assert normalize_uuid(MIG) == "1d2c3b4a5e6f5a7b9c8d0e1f2a3b4c5d" != normalize_uuid(GPU)


@pytest.mark.parametrize("text", [
    f"MIG-{GPU}/1/0", f"MIG-{GPU}".encode(),  # the pre-R470 form, named by the parent's UUID
    None, "", b"", "GPU-1234", DIGITS + "0", DIGITS[:-1], "GPU-" + "g" * 32,
    "not a uuid at all", "GPU-" + DIGITS[:-1] + "é",
    b"GPU-\xff" + DIGITS[1:].encode(),  # bytes that are not ASCII
])
def test_anything_else_is_none(text: str | bytes | None) -> None:
    assert normalize_uuid(text) is None


def test_the_old_mig_form_matches_nothing_not_its_parent() -> None:
    assert match_cuda_to_nvml([f"MIG-{GPU}/1/0"], [GPU]) == {0: None}


@pytest.mark.parametrize(("device", "index"), [
    ("cuda:0", 0), ("cuda:3", 3), ("cuda:10", 10), ("cuda:123456", 123456),
])
def test_cuda_n_gives_n(device: str, index: int) -> None:
    assert cuda_index(device) == index


@pytest.mark.parametrize("device", [
    None, "", "cuda", "cuda:", "cpu", "meta", "mps:0", "cuda:-1", "cuda:+1", "cuda:01",
    "cuda:x", "cuda: 1", "cuda:1 ", " cuda:1", "CUDA:1", "cuda:1.0", "cuda:３", "cuda:²",
    "cuda:0:1",
])
def test_anything_else_is_no_cuda_index(device: str | None) -> None:
    assert cuda_index(device) is None


def test_cuda_index_takes_what_torch_takes() -> None:
    torch = pytest.importorskip("torch")
    for device in ("cuda:0", "cuda:7", "cuda:01", "cuda:-1", "cuda:３", "cuda: 1", "cuda:1 "):
        try:
            parsed = torch.device(device).index
        except RuntimeError:
            parsed = None
        assert cuda_index(device) == parsed, device
