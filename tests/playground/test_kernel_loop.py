"""The kernel's loop in this process (no child): framing, counters while busy, interrupts."""

from __future__ import annotations

import io
import threading
import time

import pytest

from gpumon.playground import kernel as kernel_mod
from gpumon.playground.codeline import RunCode
from gpumon.playground.kernel import Kernel
from gpumon.playground.wire import Message, Request, read_frame, write_frame


def _messages(out: io.BytesIO) -> list[Message]:
    out.seek(0)
    found = []
    while True:
        try:
            found.append(read_frame(out))
        except EOFError:
            return found


def test_frames_round_trip_and_a_closed_pipe_is_eof() -> None:
    buf = io.BytesIO()
    write_frame(buf, Request(1, "run", RunCode("x = 1")))
    buf.seek(0)
    assert read_frame(buf) == Request(1, "run", RunCode("x = 1"))
    with pytest.raises(EOFError):
        read_frame(buf)


def test_serve_says_hello_answers_and_stops_at_shutdown() -> None:
    inp, out = io.BytesIO(), io.BytesIO()
    for r in (Request(1, "ping"), Request(2, "run", RunCode("y = 2")), Request(0, "shutdown"),
              Request(3, "ping")):
        write_frame(inp, r)
    inp.seek(0)
    Kernel(out).serve(inp)
    kinds = [(m.kind, m.id) for m in _messages(out)]
    assert kinds == [("hello", None), ("reply", 1), ("reply", 2), ("workspace", None)]


def test_keyboard_interrupt_in_a_request_is_answered_as_interrupted() -> None:
    out = io.BytesIO()
    kernel = Kernel(out)

    def stopped(_payload: object) -> None:
        assert kernel.busy  # SIGINT only interrupts while a request runs
        raise KeyboardInterrupt

    kernel._handlers["ping"] = stopped  # noqa: SLF001
    kernel.answer(Request(7, "ping"))
    assert not kernel.busy
    assert [(m.kind, m.id) for m in _messages(out)][0] == ("interrupted", 7)


def test_counters_are_sent_when_they_change_even_while_a_request_runs(
        monkeypatch: pytest.MonkeyPatch) -> None:
    readings = iter([{}, {0: (1, 2)}, {0: (1, 2)}, {0: (5, 8)}])
    last: list[dict[int, tuple[int, int]]] = [{}]

    def counters() -> dict[int, tuple[int, int]]:
        last[0] = next(readings, last[0])
        return last[0]

    monkeypatch.setattr(kernel_mod, "torch_memory_counters", counters)
    monkeypatch.setattr(kernel_mod, "COUNTER_PERIOD_S", 0.01)
    out = io.BytesIO()
    kernel = Kernel(out)
    kernel.busy = True
    stop = threading.Event()
    watcher = threading.Thread(target=kernel.watch_counters, args=(stop,))
    watcher.start()
    time.sleep(0.3)
    stop.set()
    watcher.join()
    sent = [m.data for m in _messages(out) if m.kind == "counters"]
    assert sent == [{}, {0: (1, 2)}, {0: (5, 8)}]


def test_the_window_refuses_frames_that_would_import_torch() -> None:
    import torch

    from gpumon.playground.wire import ForbiddenGlobal

    buf = io.BytesIO()
    write_frame(buf, Message("reply", 1, torch.__version__))  # torch's own str subclass
    write_frame(buf, Message("reply", 2, "plain"))
    buf.seek(0)
    with pytest.raises(ForbiddenGlobal):
        read_frame(buf, forbidden=("torch",))
    assert read_frame(buf, forbidden=("torch",)) == Message("reply", 2, "plain")  # in step
