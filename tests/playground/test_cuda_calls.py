"""Working on cuda:1 creates no CUDA context on cuda:0: the kernel's action path, spied on.

CPU torch is told it sees two GPUs: the torch.cuda functions the playground calls are
replaced by fakes that record each call, and the factories hand out CPU tensors that say they
live on ``cuda:k`` (which is where a real GPU would get its context). The calls that create a
context on the device they name (``synchronize(i)``, ``mem_get_info(i)``, ``set_device(i)``,
a ``torch.cuda.device(i)`` guard) must only name a device that has one already, and at the end
only cuda:1 has one. On a real GPU, tests/gpu/test_kernel_cuda.py checks NVML's process list.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import pytest
import torch

from gpumon.playground.data import actions as act
from gpumon.playground.data.actions import RunCode
from gpumon.playground.data.errors import REFUSED
from gpumon.playground.kernel.engine import Engine
from gpumon.playground.kernel.torch_devices import list_devices

GiB = 2**30
MiB = 2**20


@dataclass
class FakeCuda:
    """Two GPUs' worth of CUDA state as this process would see it, and the calls made."""

    contexts: set[int] = field(default_factory=set)
    calls: list[tuple[str, int]] = field(default_factory=list)  # context-creating calls
    early: list[tuple[str, int]] = field(default_factory=list)  # ... made without a context
    free: dict[int, int] = field(default_factory=lambda: {0: 70 * GiB, 1: 70 * GiB})

    def creates(self, name: str, index: int | None) -> None:
        i = 0 if index is None else int(index)
        self.calls.append((name, i))
        if i not in self.contexts:
            self.early.append((name, i))
        self.contexts.add(i)


def _index(device: object) -> int:
    d = torch.device(device) if not isinstance(device, int) else torch.device("cuda", device)
    return 0 if d.index is None else d.index


def _on(cuda: FakeCuda, index: int) -> type[torch.Tensor]:
    class OnCuda(torch.Tensor):
        """A CPU tensor that says it lives on cuda:index (its ops keep the class)."""

        @property  # type: ignore[override]
        def device(self) -> torch.device:
            return torch.device("cuda", index)

        def cuda(self, device: object = None, *args: object, **kw: object) -> torch.Tensor:
            target = index if device is None else _index(device)
            return self if target == index else _make(cuda, target, self.as_subclass(torch.Tensor))

        def cpu(self, *args: object, **kw: object) -> torch.Tensor:
            return self.as_subclass(torch.Tensor).clone()

    return OnCuda


def _make(cuda: FakeCuda, index: int, data: torch.Tensor) -> torch.Tensor:
    """A tensor 'allocated on cuda:index': the allocation makes a context there."""
    cuda.contexts.add(index)
    return torch.Tensor._make_subclass(_on(cuda, index), data.clone())


@pytest.fixture
def cuda(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeCuda]:
    state = FakeCuda()
    tc = torch.cuda
    props = {i: SimpleNamespace(name=f"Fake GPU {i}", total_memory=80 * GiB, major=9, minor=0,
                                multi_processor_count=132, uuid=f"{i + 1:08x}-0000-0000-0000-"
                                f"{i + 1:012x}") for i in (0, 1)}

    def props_of(i: object = None) -> SimpleNamespace:
        return props[_index(i if i is not None else 0)]

    monkeypatch.setattr(tc, "is_available", lambda: True)
    monkeypatch.setattr(tc, "device_count", lambda: 2)
    monkeypatch.setattr(tc, "is_initialized", lambda: True)
    monkeypatch.setattr(tc, "current_device", lambda: 0)
    monkeypatch.setattr(tc, "get_device_properties", props_of)
    monkeypatch.setattr(tc, "get_device_name", lambda i=None: props_of(i).name)
    monkeypatch.setattr(tc, "memory_allocated",
                        lambda i=None: 512 if _index(i or 0) in state.contexts else 0)
    monkeypatch.setattr(tc, "memory_reserved",
                        lambda i=None: 2 * 2**20 if _index(i or 0) in state.contexts else 0)
    monkeypatch.setattr(torch._C, "_cuda_hasPrimaryContext", lambda i: i in state.contexts,
                        raising=False)

    def creating(name: str, result: Callable[[int], Any] = lambda i: None) -> Callable[..., Any]:
        def call(device: object = None, *args: object, **kw: object) -> Any:
            i = _index(device) if device is not None else 0
            state.creates(name, i)
            return result(i)
        return call

    monkeypatch.setattr(tc, "synchronize", creating("synchronize"))
    monkeypatch.setattr(tc, "mem_get_info", creating("mem_get_info",
                                                     lambda i: (state.free[i], 80 * GiB)))
    monkeypatch.setattr(tc, "set_device", creating("set_device"))
    monkeypatch.setattr(tc, "_exchange_device", creating("_exchange_device"), raising=False)
    monkeypatch.setattr(tc, "empty_cache", lambda: None)  # frees cached blocks only

    for kind in ("zeros", "ones", "rand", "randn", "empty"):
        real = getattr(torch, kind)

        def factory(*shape: Any, _real: Callable[..., torch.Tensor] = real,
                    device: object = None, **kw: Any) -> torch.Tensor:
            data = _real(*shape, **kw)
            if device is None or torch.device(device).type != "cuda":  # type: ignore[arg-type]
                return data if device is None else _real(*shape, device=device, **kw)
            return _make(state, _index(device), data)

        monkeypatch.setattr(torch, kind, factory)
    yield state


def test_listing_two_gpus_creates_no_context(cuda: FakeCuda) -> None:
    names = [d.name for d in list_devices()]
    assert names[:3] == ["cpu", "cuda:0", "cuda:1"]
    assert cuda.calls == [] and cuda.contexts == set()


def test_working_on_cuda1_touches_cuda0_never(cuda: FakeCuda) -> None:
    engine = Engine()
    engine.devices()
    steps: list[act.Action] = [
        act.DeviceName(0), act.DeviceProperties(0), act.DeviceName(1),
        act.CreateFilled("x", "ones", (256, 256), device="cuda:1"),
        act.Compute("y", "pow", "x"), act.Compute("z", "add", "x", "y"),
        act.Compute("m", "matmul", "x", "x"), act.Move("x", "cuda", index=1, dest="x2"),
        act.TensorDevice("x"), act.Move("z", "cpu", dest="h"), act.Delete("y"),
        act.EmptyCache(), RunCode("w = x * 2\nw.sum()"), act.CurrentDevice(),
    ]
    for step in steps:
        out = engine.run(step)
        assert out.ok, (step, out.error)
    assert engine.workspace()[0].device == "cuda:1"
    assert cuda.early == [], "a context-creating call named a GPU with no context yet"
    assert cuda.contexts == {1}
    assert {i for _, i in cuda.calls} == {1}
    assert ("synchronize", 1) in cuda.calls  # the results were waited for, on cuda:1
    # the queries of cuda:0 put their marker on its graph, without synchronising it
    assert "cuda:0" in engine.run(act.DeviceName(0)).devices


def test_the_fit_check_on_a_fresh_gpu_reads_no_cuda_figures(
        cuda: FakeCuda, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before cuda:1 has a context, mem_get_info(1) would create one: the guard asks NVML by
    UUID (or, without NVML, counts the GPU's total), and refuses what cannot fit."""
    import gpumon.telemetry.nvml.free as nvml_free

    asked: list[str] = []

    def free_by_uuid(uuid: str) -> int:
        asked.append(uuid)
        return 3 * MiB

    monkeypatch.setattr(nvml_free, "free_memory_by_uuid", free_by_uuid)
    engine = Engine()
    big = engine.run(act.CreateFilled("x", "zeros", (4 * MiB,), dtype="uint8", device="cuda:1"))
    assert big.error is not None and big.error.type_name == REFUSED
    assert "3.00 MiB free on cuda:1" in big.error.message, big.error.message
    assert asked == ["00000002-0000-0000-0000-000000000002"]
    assert cuda.calls == [] and cuda.contexts == set()
    assert engine.run(act.CreateFilled("x", "zeros", (MiB,), dtype="uint8",
                                       device="cuda:1")).ok
    asked.clear()
    assert engine.run(act.CreateFilled("v", "zeros", (MiB,), dtype="uint8",
                                       device="cuda:1")).ok
    assert asked == [] and ("mem_get_info", 1) in cuda.calls  # a context now: CUDA's figure
    assert cuda.early == [] and cuda.contexts == {1}
