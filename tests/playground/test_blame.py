"""gpumon's own bugs are internal errors with a traceback; torch's errors stay torch's."""

from __future__ import annotations

import pytest

from gpumon.playground.data import actions as act
from gpumon.playground.data.actions import RunCode
from gpumon.playground.kernel import ops
from gpumon.playground.kernel.engine import Engine


@pytest.mark.internal_error
def test_a_bug_in_a_handler_is_an_internal_error_never_torch_s(
        engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(values: object, action: object, run: object) -> None:
        return values.no_such_attribute  # type: ignore[attr-defined]

    monkeypatch.setitem(ops.HANDLERS, act.IsAvailable, broken)
    out = engine.run(act.IsAvailable())
    assert not out.ok and out.error is not None
    assert out.error.type_name == "InternalError" and not out.error.by_torch
    assert "Traceback" in out.error.message and "AttributeError" in out.error.message
    assert "bug in gpumon" in out.error.explanation


def test_torch_errors_before_and_inside_the_torch_call_stay_torch_s(engine: Engine) -> None:
    bad_device = engine.run(act.CreateTensor("x", "[1]", device="cuda:x"))  # torch.device()
    assert bad_device.error is not None and bad_device.error.by_torch
    assert bad_device.error.type_name == "RuntimeError"
    engine.run(act.CreateFilled("a", "ones", (2, 3)))
    shapes = engine.run(act.Compute("c", "matmul", "a", "a"))
    assert shapes.error is not None and shapes.error.by_torch


def test_the_code_line_s_errors_are_the_user_s_own(engine: Engine) -> None:
    out = engine.run(RunCode("{}['missing']"))
    assert out.error is not None and out.error.type_name == "KeyError"
