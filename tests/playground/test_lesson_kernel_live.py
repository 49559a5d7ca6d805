"""A lesson step, live: the kernel sends each of its outcomes as it happens (before the
step's reply, none for a quiet replay), and an action that creates a CUDA context says so."""

from __future__ import annotations

import io

import pytest
import torch

from gpumon.playground.data.actions import RunCode
from gpumon.playground.data.wire import Message, Request, encode_frame, read_frame
from gpumon.playground.kernel import memory
from gpumon.playground.kernel.engine import Engine
from gpumon.playground.kernel.main import Kernel
from gpumon.playground.lesson.results import StepResult
from gpumon.playground.lesson.steps import LESSON

NUMBER = {step.id: i for i, step in enumerate(LESSON, start=1)}


def _served(*requests: Request) -> list[Message]:
    inp, out = io.BytesIO(), io.BytesIO()
    for r in (*requests, Request(0, "shutdown")):
        inp.write(encode_frame(r))
    inp.seek(0)
    Kernel(out).serve(inp)
    out.seek(0)
    found = []
    while True:
        try:
            found.append(read_frame(out))  # as the window reads them: gpumon's values only
        except EOFError:
            return found


def test_a_lesson_step_sends_each_outcome_before_its_reply() -> None:
    steps = tuple(LESSON)
    number = NUMBER["create-on-device"]  # not the next step: steps 1..5 are replayed quietly
    messages = _served(Request(7, "lesson", (1, steps, number, None)))
    kinds = [m.kind for m in messages if m.id == 7]
    reply = next(m for m in messages if m.kind == "reply")
    result = reply.data
    assert isinstance(result, StepResult) and result.number == number
    sent = [m.data for m in messages if m.kind == "outcome"]
    assert sent == [*result.outcomes, *result.meta_outcomes]  # this step's only, in order
    # "started" first: from then on a Stop interrupts the step (kernel_client)
    assert kinds == ["started"] + ["outcome"] * len(sent) + ["reply"]
    assert all(o.memory_after for o in sent)  # the readings the memory lines are fed with


def test_every_step_s_outcomes_cross_to_the_window_as_plain_values() -> None:
    """The window refuses a frame naming a torch class: no outcome of any step may hold one
    (the versions query once sent torch's own str subclass)."""
    steps = tuple(LESSON)
    messages = _served(*(Request(n, "lesson", (1, steps, n, None))
                         for n in range(1, len(steps) + 1)))
    replies = [m for m in messages if m.kind == "reply"]
    assert [m.id for m in replies] == list(range(1, len(steps) + 1))
    assert not [m for m in messages if m.kind == "internal_error"]
    assert sum(m.kind == "outcome" for m in messages) == sum(
        len(r.data.outcomes) + len(r.data.meta_outcomes) for r in replies)


def test_outcomes_are_sent_with_the_id_of_their_own_request() -> None:
    steps = tuple(LESSON)
    messages = _served(Request(1, "lesson", (1, steps, NUMBER["tensor-on-cpu"], None)),
                       Request(2, "run", RunCode("q = 1")),
                       Request(3, "lesson", (1, None, NUMBER["tensor-on-cpu"] + 1, None)))
    assert {m.id for m in messages if m.kind == "outcome"} == {1, 3}
    assert not any(m.kind == "outcome" and m.id == 2 for m in messages)  # a Playground run


class _FakeContexts:
    """torch's CUDA state as a CPU-only build cannot have it: which devices hold a context.
    Only the bookkeeping is faked; the CUDA path itself is tests/gpu."""

    def __init__(self) -> None:
        self.held: set[int] = set()

    def has(self, index: int) -> bool:
        return index in self.held


def test_the_action_that_creates_a_context_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = _FakeContexts()
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    monkeypatch.setattr(torch._C, "_cuda_hasPrimaryContext", fake.has, raising=False)
    engine = Engine()
    engine.ensure_loaded()
    monkeypatch.setitem(engine._values, "fake", fake)  # the code line can reach it
    first = engine.run(RunCode("fake.held.add(1)"))
    again = engine.run(RunCode("fake.held.add(1)"))
    other = engine.run(RunCode("fake.held.add(0)"))
    assert first.contexts_created == ("cuda:1",) and "cuda:1" in first.devices
    assert again.contexts_created == ()
    assert other.contexts_created == ("cuda:0",)
    assert memory.cuda_contexts() == frozenset({0, 1})


def test_no_context_is_reported_before_cuda_starts() -> None:
    if torch.cuda.is_initialized():
        pytest.skip("CUDA is already initialised in this process")
    assert memory.cuda_contexts() == frozenset()
    assert Engine().run(RunCode("torch.ones(2)")).contexts_created == ()


def test_a_device_without_a_context_is_not_synchronised(monkeypatch: pytest.MonkeyPatch) -> None:
    """Synchronising would create the context (in a query such as get_device_name); the
    device that has one is still waited for. torch's CUDA state is faked, as above."""
    from gpumon.playground.kernel.action_run import synchronize

    fake = _FakeContexts()
    fake.held.add(1)
    waited: list[int] = []
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: True)
    monkeypatch.setattr(torch.cuda, "synchronize", waited.append)
    monkeypatch.setattr(torch._C, "_cuda_hasPrimaryContext", fake.has, raising=False)
    synchronize(["cpu", "cuda:0", "cuda:1"])
    assert waited == [1]
