"""torch's CPU threads: one core is left to the window unless the person chose a number."""

from __future__ import annotations

import pytest
import torch

from gpumon.playground.kernel.engine import Engine
from gpumon.playground.kernel.threads import (
    ThreadPlan,
    explicit_env,
    limit_torch_threads,
    plan_threads,
)


@pytest.mark.parametrize(("current", "cores", "expected", "reason"), [
    (2, 2, 1, "lowered"),  # the 2-core VM: torch took both cores
    (16, 16, 15, "lowered"),
    (8, 16, 8, "kept"),  # torch's default is the physical cores: already one left
    (1, 1, 1, "kept"),  # one core: nothing to leave, never 0
    (1, 4, 1, "kept"),  # someone set fewer: never raised
])
def test_plan_leaves_a_core_and_never_raises(current: int, cores: int, expected: int,
                                             reason: str) -> None:
    plan = plan_threads(current, cores, {})
    assert (plan.torch_threads, plan.cores, plan.reason) == (expected, cores, reason)


@pytest.mark.parametrize("env", [{"OMP_NUM_THREADS": "2"}, {"MKL_NUM_THREADS": " 2 "}])
def test_an_explicit_variable_is_respected(env: dict[str, str]) -> None:
    plan = plan_threads(2, 2, env)
    assert (plan.torch_threads, plan.reason) == (2, "env")
    assert plan.env.endswith("=2") and plan.env in plan.text()


@pytest.mark.parametrize("value", ["", "0", "abc", "-1"])
def test_a_meaningless_variable_is_not_a_choice(value: str) -> None:
    assert explicit_env({"OMP_NUM_THREADS": value}) == ""
    assert plan_threads(2, 2, {"OMP_NUM_THREADS": value}).reason == "lowered"


def test_texts() -> None:
    assert ThreadPlan(2, 1, "lowered").text() == (
        "1 of 2 cores for torch, so the window stays responsive")
    assert ThreadPlan(1, 1, "kept").text() == (
        "1 of 1 core for torch: long actions may slow the window")
    assert ThreadPlan(2, 2, "env", "OMP_NUM_THREADS=2").text() == (
        "2 of 2 cores for torch (OMP_NUM_THREADS=2)")


class FakeTorch:
    def __init__(self, threads: int) -> None:
        self.threads = threads
        self.calls: list[int] = []

    def get_num_threads(self) -> int:
        return self.threads

    def set_num_threads(self, n: int) -> None:
        self.calls.append(n)
        self.threads = n


def test_limit_applies_the_plan_only_when_lowering() -> None:
    fake = FakeTorch(4)
    assert limit_torch_threads(fake, {}, cores=4).torch_threads == 3 and fake.calls == [3]
    fake = FakeTorch(4)
    plan = limit_torch_threads(fake, {"OMP_NUM_THREADS": "4"}, cores=4)
    assert plan.torch_threads == 4 and fake.calls == []


def test_engine_reports_the_threads_it_left_torch() -> None:
    status = Engine().ensure_loaded()
    assert status.ok and status.torch_threads == torch.get_num_threads()
    assert status.cores is not None and status.torch_threads <= status.cores
    assert f"{status.torch_threads} of {status.cores} core" in status.threads_note
    assert status.status_text() == f"{status.message} · {status.threads_note}"
    assert status.message.startswith(f"PyTorch {torch.__version__} · ")
