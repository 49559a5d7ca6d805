"""The kernel's loop in this process (no child): framing, counters while busy, interrupts."""

from __future__ import annotations

import io
import signal
import threading
import time
from collections.abc import Callable, Iterator

import pytest
from testkit import wait_until

from gpumon.playground.data.actions import RunCode
from gpumon.playground.data.wire import Message, Request, encode_frame, read_frame
from gpumon.playground.kernel import main as kernel_mod
from gpumon.playground.kernel.main import Kernel


def _messages(out: io.BytesIO, kernel: Kernel | None = None) -> list[Message]:
    """Every frame written to ``out`` (after the kernel's writer thread has written what it
    was given)."""
    if kernel is not None:
        assert kernel.drain()
    out.seek(0)
    found = []
    while True:
        try:
            found.append(read_frame(out))
        except EOFError:
            return found


def test_frames_round_trip_and_a_closed_pipe_is_eof() -> None:
    buf = io.BytesIO()
    buf.write(encode_frame(Request(1, "run", RunCode("x = 1"))))
    buf.seek(0)
    assert read_frame(buf) == Request(1, "run", RunCode("x = 1"))
    with pytest.raises(EOFError):
        read_frame(buf)


def test_serve_says_hello_answers_and_stops_at_shutdown() -> None:
    inp, out = io.BytesIO(), io.BytesIO()
    for r in (Request(1, "ping"), Request(2, "run", RunCode("y = 2")), Request(0, "shutdown"),
              Request(3, "ping")):
        inp.write(encode_frame(r))
    inp.seek(0)
    Kernel(out).serve(inp)
    kinds = [(m.kind, m.id) for m in _messages(out)]
    assert kinds == [("hello", None), ("reply", 1), ("started", 2), ("reply", 2),
                     ("workspace", None)]  # "started": the user's code runs, SIGINT stops it


def test_keyboard_interrupt_in_a_request_is_answered_as_interrupted() -> None:
    out = io.BytesIO()
    kernel = Kernel(out)

    def stopped(_payload: object) -> None:
        assert kernel.busy  # SIGINT only interrupts while the user's code runs
        raise KeyboardInterrupt

    kernel._handlers["run"] = stopped
    kernel.answer(Request(7, "run", RunCode("1")))
    assert not kernel.busy
    kinds = [(m.kind, m.id) for m in _messages(out, kernel)]
    assert kinds[:2] == [("started", 7), ("interrupted", 7)]


@pytest.fixture
def on_sigint() -> Iterator[Callable[[], None]]:
    """The kernel's SIGINT handler, called as the signal would call it (restored after)."""
    before = signal.getsignal(signal.SIGINT)
    try:
        yield lambda: signal.getsignal(signal.SIGINT)(signal.SIGINT, None)  # type: ignore[misc,operator]
    finally:
        signal.signal(signal.SIGINT, before)


def _importing(kernel: Kernel, sigint: Callable[[], None], seen: list[bool]) -> None:
    """Stand in for ``import torch``: a SIGINT lands in the middle of it."""
    real = kernel.engine.ensure_loaded

    def load() -> object:
        if not seen:  # the first call imports torch
            sigint()  # must not raise here: torch would be left half-imported
            seen.append(kernel.deferred)
        return real()

    kernel.engine.ensure_loaded = load  # type: ignore[method-assign]


def test_a_sigint_during_import_torch_waits_for_the_import_then_stops_the_code(
        on_sigint: Callable[[], None]) -> None:
    out = io.BytesIO()
    kernel = Kernel(out)
    kernel_mod._install_interrupt(kernel)
    seen: list[bool] = []
    ran: list[object] = []
    _importing(kernel, on_sigint, seen)
    kernel._handlers["run"] = ran.append
    kernel.answer(Request(3, "run", RunCode("x = 1")))
    assert seen == [True] and ran == []  # held back, then the code was stopped before it ran
    assert kernel.engine.is_loaded and not kernel.deferred
    kinds = [(m.kind, m.id) for m in _messages(out, kernel)]
    assert kinds[:2] == [("started", 3), ("interrupted", 3)]
    kernel._handlers["run"] = kernel._run
    kernel.answer(Request(4, "run", RunCode("torch.ones(2).sum()")))
    assert _messages(out, kernel)[-2].data.preview == "tensor(2.)"  # torch is whole


def test_a_sigint_during_the_warm_up_load_does_not_fail_the_load(
        on_sigint: Callable[[], None]) -> None:
    out = io.BytesIO()
    kernel = Kernel(out)
    kernel_mod._install_interrupt(kernel)
    seen: list[bool] = []
    _importing(kernel, on_sigint, seen)
    kernel.answer(Request(1, "load"))
    reply = _messages(out, kernel)[0]
    assert (reply.kind, reply.id) == ("reply", 1) and reply.data.ok
    assert seen == [True] and not kernel.deferred  # not kept for the user's next code
    on_sigint()  # idle (and housekeeping requests): ignored, nothing is raised


def test_counters_are_sent_when_they_change_even_while_a_request_runs(
        monkeypatch: pytest.MonkeyPatch) -> None:
    readings = iter([{}, {0: (1, 2)}, {0: (1, 2)}, {0: (5, 8)}])
    last: list[dict[int, tuple[int, int]]] = [{}]
    calls = [0]

    def counters() -> dict[int, tuple[int, int]]:
        calls[0] += 1
        last[0] = next(readings, last[0])
        return last[0]

    monkeypatch.setattr(kernel_mod, "torch_memory_counters", counters)
    monkeypatch.setattr(kernel_mod, "COUNTER_PERIOD_S", 0.01)
    out = io.BytesIO()
    kernel = Kernel(out)
    kernel.busy = kernel.answering = True
    stop = threading.Event()
    watcher = threading.Thread(target=kernel.watch_counters, args=(stop,))
    watcher.start()
    # a fifth look: the fourth reading, the last that differs, has been sent
    wait_until(lambda: calls[0] >= 5, 10, "the counters thread to read past the readings")
    stop.set()
    watcher.join()
    sent = [m.data for m in _messages(out, kernel) if m.kind == "counters"]
    assert sent == [{}, {0: (1, 2)}, {0: (5, 8)}]


def test_the_counters_thread_sleeps_until_a_request_while_cuda_has_not_started(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the user's code starts CUDA: an idle kernel without it does not look four
    times a second at counters that cannot change; a request wakes it at once."""
    looks: list[float] = []

    def counters() -> dict[int, tuple[int, int]]:
        looks.append(time.monotonic())
        return {}

    monkeypatch.setattr(kernel_mod, "torch_memory_counters", counters)
    monkeypatch.setattr(kernel_mod, "COUNTER_PERIOD_S", 0.01)
    kernel = Kernel(io.BytesIO())
    stop = threading.Event()
    watcher = threading.Thread(target=kernel.watch_counters, args=(stop,))
    watcher.start()
    time.sleep(0.1)  # the window the looks are counted over: what is tested
    assert looks == []  # every 0.01 s: about 10 looks
    began = time.monotonic()
    kernel.answer(Request(1, "ping"))
    deadline = time.monotonic() + 2.0
    while not looks and time.monotonic() < deadline:
        time.sleep(0.01)
    assert looks and looks[0] >= began  # woken by the request
    stop.set()
    kernel.request_began.set()
    watcher.join(2.0)
    assert not watcher.is_alive()


def test_the_window_refuses_frames_that_would_import_torch() -> None:
    import torch

    from gpumon.playground.data.wire import ForbiddenGlobal

    buf = io.BytesIO()
    buf.write(encode_frame(Message("reply", 1, torch.__version__)))  # torch's own str subclass
    buf.write(encode_frame(Message("reply", 2, "plain")))
    buf.seek(0)
    with pytest.raises(ForbiddenGlobal):
        read_frame(buf)
    assert read_frame(buf) == Message("reply", 2, "plain")  # the frame was read whole


class _Calls:
    """Pickles as a call of os.system: what a hostile frame would hold."""

    def __reduce__(self) -> tuple[object, tuple[str]]:
        import os

        return (os.system, ("echo pwned",))


@pytest.mark.parametrize("value", [_Calls(), Message("reply", 1, _Calls()),
                                   Message("reply", 1, [RunCode("x"), {1: _Calls()}])])
def test_no_frame_can_make_the_reader_call_or_import_anything_outside_gpumon_data(
        value: object) -> None:
    from gpumon.playground.data.wire import ForbiddenGlobal

    buf = io.BytesIO()
    buf.write(encode_frame(value))
    buf.seek(0)
    with pytest.raises(ForbiddenGlobal, match="os.system|posix.system|nt.system"):
        read_frame(buf)


def test_gpumon_values_and_plain_builtins_cross() -> None:
    values = Message("reply", 3, {"a": (1, 2.5, 3j, None, True), "b": {1, 2},
                                  "c": frozenset({"x"}), "d": b"bytes", "e": bytearray(b"z"),
                                  "f": [RunCode("y = 2")], "g": range(3), "h": slice(1, 2)})
    buf = io.BytesIO()
    buf.write(encode_frame(values))
    buf.seek(0)
    assert read_frame(buf) == values


def test_a_reply_that_cannot_be_pickled_becomes_a_card_and_the_kernel_goes_on() -> None:
    from gpumon.playground.data.outcome import Outcome

    out = io.BytesIO()
    kernel = Kernel(out)
    unsendable = Outcome(RunCode("x"), "x", True, 0.0, 0.0,
                         preview=lambda: "a value pickle refuses")  # type: ignore[arg-type]
    kernel._handlers["run"] = lambda _p: unsendable
    kernel._handlers["names"] = lambda _p: [threading.Lock()]
    kernel.answer(Request(1, "run", RunCode("x")))
    kernel.answer(Request(2, "names"))
    kernel.answer(Request(3, "ping"))
    by_id = {(m.kind, m.id): m for m in _messages(out, kernel)}
    card = by_id[("reply", 1)].data
    assert not card.ok and card.error.type_name == "UnsendableResult"
    assert "could not be sent to the window" in card.error.explanation
    assert "could not be sent" in by_id[("internal_error", 2)].data
    assert ("reply", 3) in by_id  # the kernel answered on
