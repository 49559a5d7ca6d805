"""The bad-input corpus through the Qt-free Engine, the KernelLink, and the playground page.

Every bad input must come back as ok=False with a message and an explanation and no
Python traceback text, typed values must never be evaluated, and the engine must keep
working: a normal action succeeds after the whole corpus.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from bad_inputs import (
    BAD,
    REFUSED_WITH_CUDA,
    SETUP,
    TORCH_ANSWERS,
    install_probe,
    problems_with,
    remove_probe,
)

from gpumon.playground.data import actions as act
from gpumon.playground.data.errors import ErrorInfo
from gpumon.playground.data.outcome import Outcome
from gpumon.playground.kernel.engine import Engine

pytestmark = pytest.mark.xdist_group("test_faults_playground")  # its module fixture: made once

WAIT_MS = 60_000  # the first action imports torch in the kernel


@pytest.fixture
def probe() -> Iterator[list[int]]:
    hits = install_probe()
    yield hits
    remove_probe()


@pytest.fixture(scope="module")
def engine() -> Engine:
    """One engine for the whole corpus: it must survive every input in turn."""
    e = Engine()
    for action in SETUP:
        assert e.run(action).ok, action
    return e


def test_corpus_is_big_enough() -> None:
    assert len(BAD) >= 30
    assert len({label for label, _ in BAD}) == len(BAD)
    assert (TORCH_ANSWERS | REFUSED_WITH_CUDA) <= {label for label, _ in BAD}


def test_the_check_catches_a_bug_of_ours_passed_off_as_an_answer() -> None:
    """A KeyError from our own code, or a RuntimeError where a refusal belongs, has text
    and no traceback, and still fails the check."""
    def outcome(error: ErrorInfo) -> Outcome:
        return Outcome(act.Compute("y", "matmul", "x", "w"), "y = x @ w", False, 0.0, 0.0,
                       error=error)

    bug = ErrorInfo("KeyError", "'shape'", "PyTorch raised this error.")
    assert problems_with(outcome(bug), "matmul shapes") != []
    internal = ErrorInfo("InternalError", "AttributeError: x", "please report it",
                         by_torch=False)
    assert problems_with(outcome(internal), "matmul shapes") != []
    not_refused = ErrorInfo("RuntimeError", "bad shape", "A size is negative.")
    assert problems_with(outcome(not_refused), "shape negative") != []
    torch_answer = ErrorInfo("RuntimeError", "mat1 and mat2 shapes cannot be multiplied",
                             "The inner sizes must match.")
    assert problems_with(outcome(torch_answer), "matmul shapes") == []


@pytest.mark.parametrize(("label", "action"), BAD, ids=[label for label, _ in BAD])
def test_bad_input_is_an_outcome_with_a_clear_message(engine: Engine, probe: list[int],
                                                      label: str, action: act.Action) -> None:
    names_before = engine.names()
    out = engine.run(action)
    assert problems_with(out, label) == [], (label, out.error)
    assert probe == [], "typed values were evaluated"
    assert engine.names() == names_before  # nothing half-created


def test_engine_works_after_the_whole_corpus(engine: Engine) -> None:
    for _, action in BAD:
        engine.run(action)
    out = engine.run(act.CreateTensor("ok", "[1.0, 2.0]"))
    assert out.ok and out.shape == (2,) and out.device == "cpu"
    total = engine.run(act.Compute("s", "sum", "ok"))
    assert total.ok and total.preview.startswith("tensor(3.")


@pytest.mark.parametrize(("action", "device"), [
    (act.CreateFilled("c", "zeros", (2,), device="cpu:1"), "cpu"),
    (act.CreateFilled("c", "zeros", (2,), device="meta:0"), "meta"),
    (act.CreateFilled("c", "zeros", (0,)), "cpu"),
    (act.CreateTensor("c", "[1e400, -1e400]"), "cpu"),
], ids=["cpu:1", "meta:0", "zero-size", "1e400"])
def test_inputs_torch_accepts_are_not_refused(engine: Engine, action: act.Action,
                                              device: str) -> None:
    """Odd but valid for torch: the playground shows what torch does, it does not refuse."""
    out = engine.run(action)
    assert out.ok and out.device == device, out.error


def test_mps_says_what_torch_says(engine: Engine) -> None:
    out = engine.run(act.CreateFilled("z", "zeros", (2,), device="mps"))
    assert out.error is not None and out.error.by_torch
    assert "MPS" in out.error.message or "mps" in out.error.message


# --- through the kernel and the playground page --------------------------------------

def _run_all(qtbot, submit, outcomes: list[Outcome], n: int) -> None:
    for _, action in BAD:
        submit(action)
    qtbot.waitUntil(lambda: len(outcomes) >= n, timeout=WAIT_MS)


@pytest.mark.slow
def test_corpus_through_the_engine_thread(qtbot, probe: list[int]) -> None:
    from gpumon.ui.playground.kernel_link import KernelLink

    engine = KernelLink()
    outcomes: list[Outcome] = []
    engine.outcomeReady.connect(outcomes.append)
    try:
        for action in SETUP:
            engine.submit(action)
        _run_all(qtbot, engine.submit, outcomes, len(SETUP) + len(BAD))
        assert all(o.ok for o in outcomes[:len(SETUP)])
        bad = outcomes[len(SETUP):]
        # in order, none lost (repr: a NaN field is equal only to itself, and these crossed
        # a pipe as copies)
        assert [repr(o.action) for o in bad] == [repr(a) for _, a in BAD]
        assert {label: problems_with(o, label) for (label, _), o in zip(BAD, bad, strict=True)
                if problems_with(o, label)} == {}
        engine.submit(act.CreateTensor("ok", "[1, 2]"))
        qtbot.waitUntil(lambda: len(outcomes) == len(SETUP) + len(BAD) + 1, timeout=WAIT_MS)
        assert outcomes[-1].ok
        assert probe == []
    finally:
        assert engine.stop()


@pytest.mark.slow
def test_corpus_through_the_playground_page(qtbot, make_window, probe: list[int]) -> None:
    w = make_window()
    panel = w.playground
    outcomes: list[Outcome] = []
    w.kernel_link.outcomeReady.connect(outcomes.append)
    for action in SETUP:
        panel.submit(action)
    _run_all(qtbot, panel.submit, outcomes, len(SETUP) + len(BAD))
    qtbot.waitUntil(lambda: panel.log.count() == len(SETUP) + len(BAD), timeout=WAIT_MS)
    logged = panel.log.outcomes()[::-1]  # the log is newest first
    assert [repr(o.action) for o in logged[len(SETUP):]] == [repr(a) for _, a in BAD]
    assert not any(o.ok for o in logged[len(SETUP):])
    texts = [e.plain_text() for e in panel.log.entries()]
    assert all(t.strip() and "Traceback" not in t for t in texts)
    panel.submit(act.CreateTensor("ok", "[1, 2]"))
    qtbot.waitUntil(lambda: panel.log.count() == len(SETUP) + len(BAD) + 1, timeout=WAIT_MS)
    assert panel.log.outcomes()[0].ok
    assert w.isVisible() and w.sampling.running  # the app keeps running
    before = w.snapshot_count
    qtbot.waitUntil(lambda: w.snapshot_count > before + 2, timeout=5000)
    assert probe == []
