"""The bad-input corpus (tests/faults/bad_inputs.py) against the kernel: a real child process
that owns torch, the path the window uses. The probe that typed values would append to is
installed in the kernel itself, so "never evaluated" is checked where evaluation would
happen; and a bug of gpumon's in the kernel fails the corpus (and, through
tests/conftest.py, the test) instead of passing as an answer.
"""

from __future__ import annotations

import pytest

from gpumon.playground.client.kernel_client import KernelClient
from gpumon.playground.data import actions as act
from gpumon.playground.data.actions import RunCode
from gpumon.playground.data.outcome import Outcome
from tests.faults.bad_inputs import BAD, PROBE, SETUP, problems_with
from tests.playground.kernel_helpers import Inbox

WAIT_S = 120.0  # the first request imports torch in the kernel



def _run(client: KernelClient, inbox: Inbox, action: act.Action) -> Outcome:
    reply = inbox.wait("reply", client.request("run", action), timeout=WAIT_S)
    assert isinstance(reply.data, Outcome), reply
    return reply.data


def _names(client: KernelClient, inbox: Inbox) -> list[str]:
    return list(inbox.wait("reply", client.request("names"), timeout=WAIT_S).data)


def test_the_corpus_against_the_kernel(client: KernelClient, inbox: Inbox) -> None:
    probe = _run(client, inbox, RunCode(f"import builtins\nbuiltins.{PROBE} = []"))
    assert probe.ok, probe.error
    for action in SETUP:
        assert _run(client, inbox, action).ok, action
    pid = client.pid
    problems: dict[str, list[str]] = {}
    for label, action in BAD:
        before = _names(client, inbox)
        out = _run(client, inbox, action)
        found = problems_with(out, label)
        if _names(client, inbox) != before:
            found.append("the workspace changed (something half-created)")
        if found:
            problems[label] = found
    assert problems == {}
    assert client.pid == pid and client.starts == 1  # no input cost the kernel its life
    hits = _run(client, inbox, RunCode(f"import builtins\nlen(builtins.{PROBE})"))
    assert hits.ok and hits.preview == "0", "typed values were evaluated in the kernel"
    side_effect = next(a.values for label, a in BAD if label == "values side effect")
    control = _run(client, inbox, RunCode(  # the probe is live: evaluating it would count
        f"import builtins\neval({side_effect!r}, {{'__builtins__': builtins}})\n"
        f"len(builtins.{PROBE})"))
    assert control.ok and control.preview == "1", control.error
    ok = _run(client, inbox, act.Compute("s", "sum", "x"))
    assert ok.ok and ok.preview.startswith("tensor(6.")
    assert client.shutdown() == 0  # and after all of it, the kernel exits cleanly


@pytest.mark.internal_error
def test_a_bug_in_the_kernel_fails_the_corpus(client: KernelClient, inbox: Inbox,
                                              _no_internal_error: list[str]) -> None:
    """Break the Compute handler inside the kernel, as a bug of ours would: the corpus's
    check rejects the answer, and the suite's guard hears of it through the client."""
    sabotage = ("import gpumon.playground.kernel.ops as ops, gpumon.playground.data.actions as a\n"
                "ops.HANDLERS[a.Compute] = lambda values, action, run: values.no_such_thing")
    assert _run(client, inbox, RunCode(sabotage)).ok
    for action in SETUP:
        _run(client, inbox, action)
    label, action = next((label, a) for label, a in BAD if label == "matmul shapes")
    out = _run(client, inbox, action)
    assert out.error is not None and out.error.type_name == "InternalError"
    assert problems_with(out, label) != []
    assert any("AttributeError" in m and "no_such_thing" in m for m in _no_internal_error)
