"""A result whose own ``__repr__`` fails is the user's error, shown as such: the exception's
type and message as Python wrote them, attributed to the user's object. It was reported as
"InternalError ... gpumon failed to describe this result; please report it" (and the test
suite's internal-error guard fails any test in which that happens)."""

from __future__ import annotations

import pytest

from gpumon.playground.client.kernel_client import KernelClient
from gpumon.playground.data.actions import RunCode
from gpumon.playground.kernel.engine import Engine
from tests.playground.kernel_helpers import Inbox

EXPLAINED = ("The __repr__ of your {type} object raised this error, so its value cannot be "
             "shown; the error is in that __repr__, not in gpumon or torch. The code ran, and "
             "what it assigned is kept.")


@pytest.mark.parametrize(("code", "type_name", "message", "owner"), [
    ("type('R', (), {'__repr__': lambda s: 1/0})()", "ZeroDivisionError", "division by zero",
     "R"),
    ("r = type('R', (), {'__repr__': lambda s: 1/0})()", "ZeroDivisionError",
     "division by zero", "R"),
    ("type('S', (), {'__repr__': lambda s: 5})()", "TypeError",
     "__repr__ returned non-string (type int)", "S"),
    ("type('B', (), {'__repr__': lambda s: exit(3)})()", "SystemExit", "3", "B"),
    ("class M(nn.Module):\n    def extra_repr(self):\n        raise KeyError('boom')\nM()",
     "KeyError", "'boom'", "M"),
    ("torch.ones(2).as_subclass(type('T', (torch.Tensor,), "
     "{'__repr__': lambda s, **k: 1/0}))", "ZeroDivisionError", "division by zero", "T"),
])
def test_a_failing_repr_is_the_user_s_error(code: str, type_name: str, message: str,
                                            owner: str) -> None:
    out = Engine().run(RunCode(code))
    assert not out.ok and out.error is not None
    assert (out.error.type_name, out.error.message) == (type_name, message)
    assert out.error.explanation == EXPLAINED.format(type=owner)
    assert not out.error.by_torch  # never shown as torch's


def test_what_the_code_assigned_is_kept_and_the_kernel_goes_on() -> None:
    engine = Engine()
    assert not engine.run(RunCode("r = type('R', (), {'__repr__': lambda s: 1/0})()")).ok
    out = engine.run(RunCode("type(r).__name__"))
    assert out.ok and out.preview == "'R'"


@pytest.mark.slow  # a real kernel process
def test_through_the_real_kernel() -> None:
    inbox = Inbox()
    client = KernelClient(inbox)
    try:
        rid = client.request("run", RunCode("type('R', (), {'__repr__': lambda s: 1/0})()"))
        outcome = inbox.wait("reply", rid, timeout=120).data
        assert (outcome.error.type_name, outcome.error.message) == (
            "ZeroDivisionError", "division by zero")
        assert outcome.error.explanation == EXPLAINED.format(type="R")
        rid = client.request("run", RunCode("1 + 1"))
        assert inbox.wait("reply", rid, timeout=60).data.preview == "2"
    finally:
        client.shutdown(timeout_s=1.0)
