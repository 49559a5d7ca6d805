"""One cause, one explanation: every "no CUDA here" error names the real cause (a CPU-only
build, no driver, no GPU), found once from torch's build info."""

from __future__ import annotations

import pytest
import torch
from testkit import cpu_only_build

from gpumon.playground.data import actions as act
from gpumon.playground.kernel.cuda_cause import CudaFacts, explain_unavailable, sentence
from gpumon.playground.kernel.engine import Engine


def facts(**kw: object) -> CudaFacts:
    base: dict[str, object] = dict(torch_version="2.13.0", cuda_build="12.8", hip_build=None,
                                   available=False, device_count=0, driver_loads=True,
                                   visible_devices=None)
    base.update(kw)
    return CudaFacts(**base)  # type: ignore[arg-type]


def test_each_cause_has_its_sentence() -> None:
    cpu = sentence(facts(cuda_build=None))
    assert cpu is not None and "CPU-only build" in cpu and "torch.version.cuda is None" in cpu
    driver = sentence(facts(driver_loads=False))
    assert driver is not None and "no NVIDIA driver" in driver and "CUDA 12.8" in driver
    hidden = sentence(facts(visible_devices=""))
    assert hidden is not None and "CUDA_VISIBLE_DEVICES=''" in hidden
    none = sentence(facts())
    assert none is not None and "finds no GPU" in none
    assert sentence(facts(available=True, device_count=2)) is None  # CUDA works: no cause


def test_only_unavailable_messages_are_explained_by_the_cause() -> None:
    assert explain_unavailable("Expected all tensors to be on the same device") is None


@cpu_only_build
@pytest.mark.parametrize("move", [
    act.Move("x", "cuda", index=0), act.Move("x", "to", device="cuda"), act.Move("x", "cuda"),
    act.Move("x", "to", device="cuda:0")], ids=lambda m: m.code())
def test_cpu_only_build_every_cuda_move_names_the_build(move: act.Move) -> None:
    engine = Engine()
    engine.run(act.CreateTensor("x", "[1, 2, 3]"))
    out = engine.run(move)
    assert out.error is not None and out.error.by_torch
    expected = sentence(facts(torch_version=torch.__version__, cuda_build=None))
    assert out.error.explanation == expected  # x.cuda(0) said "PyTorch sees no GPU"
