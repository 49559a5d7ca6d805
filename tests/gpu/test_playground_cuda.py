"""The playground's CUDA paths, on a real GPU with a CUDA build of torch; skipped elsewhere."""

from __future__ import annotations

import pytest
import torch

from gpumon.device_ids import normalize_uuid
from gpumon.playground.data import actions as act
from gpumon.playground.data.devices import match_cuda_to_nvml
from gpumon.playground.kernel.engine import Engine
from gpumon.playground.kernel.memory import torch_memory_counters
from gpumon.playground.kernel.torch_devices import list_devices
from gpumon.telemetry.procs.procinfo import self_pids

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU and CUDA torch"),
]


def test_move_to_cuda0_and_back() -> None:
    engine = Engine()
    engine.run(act.CreateTensor("x", "[1, 2, 3]"))
    out = engine.run(act.Move("x", "cuda", index=0))
    assert out.ok and out.device == "cuda:0" and out.copied is True
    assert out.preview == repr(torch.tensor([1, 2, 3], device="cuda:0"))
    assert "cuda:0" in out.devices
    reading = out.reading("cuda:0")
    assert reading is not None and reading.allocated_bytes is not None
    assert reading.reserved_bytes is not None and reading.reserved_bytes >= reading.allocated_bytes
    same = engine.run(act.Move("x", "cuda", index=0, dest="z"))
    assert same.ok and same.copied is False  # z = x.cuda(0); z is x
    y = engine.run(act.Compute("y", "pow", "x"))
    assert y.device == "cuda:0"
    assert 0 in torch_memory_counters()


def _nvml_used_bytes(cuda_index: int) -> tuple[int, str]:
    """NVML's figure for the GPU that torch calls ``cuda_index``: this process's used memory
    when NVML lists it (it does not in a container's PID namespace), else the whole GPU's."""
    pynvml = pytest.importorskip("pynvml")
    want = normalize_uuid(str(torch.cuda.get_device_properties(cuda_index).uuid))
    pynvml.nvmlInit()
    try:
        for i in range(pynvml.nvmlDeviceGetCount()):
            handle = pynvml.nvmlDeviceGetHandleByIndex(i)
            uuid = pynvml.nvmlDeviceGetUUID(handle)
            if normalize_uuid(uuid.decode() if isinstance(uuid, bytes) else uuid) != want:
                continue
            for p in pynvml.nvmlDeviceGetComputeRunningProcesses(handle):
                if p.pid in self_pids() and isinstance(p.usedGpuMemory, int):
                    return p.usedGpuMemory, "this process"
            return int(pynvml.nvmlDeviceGetMemoryInfo(handle).used), "the whole GPU"
    finally:
        pynvml.nvmlShutdown()
    pytest.fail(f"NVML has no GPU with cuda:{cuda_index}'s UUID {want}")


def test_memory_counters_follow_a_tensor_of_known_size() -> None:
    """The counters against figures they are not made of: a tensor's byte size (torch's
    caching allocator hands out blocks in multiples of 512 bytes, so allocated grows by at
    least that, rounded up, and falls back when it is freed) and NVML's used memory, which
    holds torch's reserved memory plus the CUDA context."""
    torch.zeros(1, device="cuda:0")  # CUDA started: the counters are there
    counters = torch_memory_counters()
    assert set(counters) == set(range(torch.cuda.device_count()))
    allocated0, reserved0 = counters[0]
    x = torch.empty(1_000_001, dtype=torch.uint8, device="cuda:0")
    blocks = -(-x.numel() * x.element_size() // 512) * 512  # 1_000_448 bytes
    allocated, reserved = torch_memory_counters()[0]
    assert allocated - allocated0 >= blocks
    assert reserved >= allocated and reserved >= reserved0
    used, whose = _nvml_used_bytes(0)
    assert used >= reserved, (used, whose, reserved)
    del x
    allocated1, reserved1 = torch_memory_counters()[0]
    assert allocated1 == allocated0  # freed: no tensor holds it now
    assert reserved1 == reserved  # but the allocator keeps the block cached


def test_cross_device_error_text() -> None:
    engine = Engine()
    engine.run(act.CreateTensor("x", "[1, 2, 3]", device="cuda:0"))
    engine.run(act.Compute("y", "pow", "x"))
    out = engine.run(act.Compute("z", "add", "y", act.Ref("x", "cpu")))
    assert out.error is not None
    assert "Expected all tensors to be on the same device" in out.error.message
    try:
        torch.tensor([1, 4, 9], device="cuda:0") + torch.tensor([1, 2, 3])
    except RuntimeError as exc:
        assert out.error.message == str(exc)
    else:
        pytest.fail("torch did not raise for cuda + cpu")
    assert [o.device for o in out.operands] == ["cuda:0", "cpu"]
    assert "different devices" in out.error.explanation


def test_model_on_gpu() -> None:
    engine = Engine()
    engine.run(act.CreateModel("net", 3, 1))
    moved = engine.run(act.Move("net", "cuda"))
    assert moved.ok and moved.device == "cuda:0" and moved.copied is True
    params = engine.run(act.ModelParameters("net"))
    assert params.preview == repr([torch.device("cuda", 0)] * 2)
    engine.run(act.CreateFilled("x", "rand", (2, 3), device="cuda:0"))
    y = engine.run(act.CallModel("y", "net", "x"))
    assert y.ok and y.shape == (2, 1) and y.device == "cuda:0" and y.grad_fn is not None
    engine.run(act.CreateFilled("c", "rand", (2, 3)))
    bad = engine.run(act.CallModel("y2", "net", "c"))
    assert bad.error is not None
    assert "Expected all tensors to be on the same device" in bad.error.message


def test_missing_index_is_refused() -> None:
    engine = Engine()
    n = torch.cuda.device_count()
    out = engine.run(act.CreateFilled("x", "zeros", (2,), device=f"cuda:{n}"))
    assert out.error is not None and not out.error.by_torch
    assert f"There is no cuda:{n}" in out.error.message


def test_uuid_matching_against_nvml() -> None:
    pynvml = pytest.importorskip("pynvml")
    pynvml.nvmlInit()
    try:
        nvml = [pynvml.nvmlDeviceGetUUID(pynvml.nvmlDeviceGetHandleByIndex(i))
                for i in range(pynvml.nvmlDeviceGetCount())]
    finally:
        pynvml.nvmlShutdown()
    nvml = [u.decode() if isinstance(u, bytes) else u for u in nvml]
    cuda = [str(torch.cuda.get_device_properties(i).uuid)
            for i in range(torch.cuda.device_count())]
    matches = match_cuda_to_nvml(cuda, nvml)
    assert all(v is not None for v in matches.values()), (cuda, nvml)
    assert len(set(matches.values())) == len(matches)
    options = [o for o in list_devices() if o.name.startswith("cuda:")]
    assert [o.uuid for o in options] == [normalize_uuid(u) for u in cuda]
    assert match_cuda_to_nvml([o.uuid or "" for o in options], nvml) == matches
