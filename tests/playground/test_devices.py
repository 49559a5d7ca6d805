"""cuda:i <-> NVML matching by UUID, device-string validation, the devices offered."""

from __future__ import annotations

import pytest
import torch

from gpumon.device_ids import normalize_uuid
from gpumon.playground.data.devices import cuda_index_problem, match_cuda_to_nvml
from gpumon.playground.data.errors import Refusal
from gpumon.playground.kernel.torch_devices import list_devices, resolve_device

U = [
    "GPU-5f3c1e2a-0b1c-4d2e-8f90-123456789abc",
    "GPU-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee",
    "GPU-01234567-89ab-cdef-0123-456789abcdef",
    "GPU-ffffffff-0000-1111-2222-333333333333",
]


def bare(u: str) -> str:
    return u.removeprefix("GPU-")


def test_normalize_accepts_both_formats() -> None:
    assert normalize_uuid(U[0]) == normalize_uuid(bare(U[0])) == "5f3c1e2a0b1c4d2e8f90123456789abc"
    assert normalize_uuid(" " + U[0].upper() + " ") == normalize_uuid(U[0])
    assert normalize_uuid("{" + bare(U[1]) + "}") == normalize_uuid(U[1])
    assert normalize_uuid("GPU-1234") is None
    assert normalize_uuid("not a uuid at all, not hex!!") is None


def test_same_order() -> None:
    assert match_cuda_to_nvml([bare(u) for u in U], U) == {0: 0, 1: 1, 2: 2, 3: 3}


def test_reordered_fastest_first() -> None:
    cuda = [bare(U[2]), bare(U[0]), bare(U[3]), bare(U[1])]
    assert match_cuda_to_nvml(cuda, U) == {0: 2, 1: 0, 2: 3, 3: 1}


def test_cuda_visible_devices_subset() -> None:
    # CUDA_VISIBLE_DEVICES=3,1: torch sees two GPUs, numbered 0 and 1.
    assert match_cuda_to_nvml([bare(U[3]), bare(U[1])], U) == {0: 3, 1: 1}


def test_unknown_or_unreadable_uuid_matches_nothing() -> None:
    other = "GPU-99999999-9999-9999-9999-999999999999"
    assert match_cuda_to_nvml([other, "", bare(U[0])], U) == {0: None, 1: None, 2: 0}
    assert match_cuda_to_nvml([bare(U[0])], []) == {0: None}
    assert match_cuda_to_nvml([], U) == {}


def test_prefixed_on_both_sides() -> None:
    assert match_cuda_to_nvml([U[1], U[0]], U) == {0: 1, 1: 0}


# A MIG instance has a UUID of its own (``MIG-`` and 32 hex digits unrelated to its parent's,
# as ``nvidia-smi -L`` lists it under the parent GPU); torch on a MIG instance reports those.
MIG = "MIG-1d2c3b4a-5e6f-5a7b-9c8d-0e1f2a3b4c5d"


def test_mig_instance_matches_its_own_uuid_never_its_parent() -> None:
    assert normalize_uuid(MIG) == "1d2c3b4a5e6f5a7b9c8d0e1f2a3b4c5d"
    # NVML's device list has the parent GPUs only: the instance matches none of them.
    assert match_cuda_to_nvml([MIG.removeprefix("MIG-")], U) == {0: None}
    # Where NVML lists the instance itself (its MIG handle), torch's bare digits match it.
    assert match_cuda_to_nvml([MIG.removeprefix("MIG-"), bare(U[2])], [*U, MIG]) == {0: 4, 1: 2}


@pytest.mark.parametrize(("index", "count", "ok"),
                         [(0, 1, True), (1, 1, False), (7, 2, False), (-1, 2, False),
                          (3, 4, True), (0, 0, False)])
def test_cuda_index_problem(index: int, count: int, ok: bool) -> None:
    problem = cuda_index_problem(index, count)
    assert (problem is None) == ok
    if not ok:
        assert problem is not None and f"cuda:{index}" in problem and str(count) in problem


@pytest.mark.parametrize("text", ["gpu", "cuda:-1", "cuda:abc", "CUDA", " cuda", "cuda:0 "])
def test_bad_device_strings_raise_torchs_own_error(text: str) -> None:
    with pytest.raises(RuntimeError) as expected:
        torch.device(text)
    with pytest.raises(RuntimeError) as got:
        resolve_device(text)
    assert str(got.value) == str(expected.value)


def test_resolve_refuses_missing_cuda_index_when_cuda_is_available(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    assert resolve_device("cuda:1") == torch.device("cuda:1")
    with pytest.raises(Refusal, match=r"There is no cuda:7: PyTorch sees 2 CUDA devices"):
        resolve_device("cuda:7")


def test_resolve_passes_cuda_through_without_cuda_so_torch_speaks() -> None:
    if torch.cuda.is_available():
        pytest.skip("this checks a machine without CUDA")
    assert resolve_device("cuda:7") == torch.device("cuda:7")


def test_list_devices_offers_cpu_and_cuda_or_meta() -> None:
    names = [d.name for d in list_devices()]
    assert names[0] == "cpu"
    count = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if count:
        assert names[1:] == [f"cuda:{i}" for i in range(count)]
    else:
        assert names == ["cpu", "meta"]


def test_list_devices_offers_mps_where_torch_has_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """On a Mac the playground offers ``mps`` beside ``cpu`` (there is no NVML there)."""
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: True)
    names = [d.name for d in list_devices()]
    assert names[0] == "cpu" and "mps" in names
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: False)
    assert "mps" not in [d.name for d in list_devices()]
