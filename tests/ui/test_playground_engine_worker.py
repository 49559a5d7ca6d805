"""EngineThread: the engine on its own QThread; order, busy/queue signals, calls, clean stop."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from gpumon.playground import actions as act
from gpumon.playground.engine import Engine
from gpumon.playground.outcome import LoadStatus
from gpumon.ui.playground.engine_worker import EngineThread


@pytest.fixture
def engine(qapp) -> Iterator[EngineThread]:  # type: ignore[no-untyped-def]
    handle = EngineThread()
    yield handle
    assert handle.stop()
    assert not handle.running


def test_nothing_starts_until_asked(engine: EngineThread) -> None:
    assert not engine.running and not engine.busy and engine.load_status is None


def test_load_signals_in_order_then_devices(qtbot, engine: EngineThread) -> None:
    busy: list[bool] = []
    engine.busyChanged.connect(busy.append)
    with qtbot.waitSignals([engine.loadingStarted, engine.loadingFinished,
                            engine.devicesChanged], order="strict", timeout=20000):
        engine.load()
    assert engine.load_status is not None and engine.load_status.ok
    assert "PyTorch" in engine.load_status.message
    names = [d.name for d in engine.device_options]
    assert names[0] == "cpu"
    qtbot.waitUntil(lambda: not engine.busy, timeout=5000)
    assert busy == [True, False]


def test_actions_run_in_order_with_queue_length_and_busy(qtbot, engine: EngineThread) -> None:
    outcomes, lengths, busy = [], [], []
    engine.outcomeReady.connect(outcomes.append)
    engine.queueLengthChanged.connect(lengths.append)
    engine.busyChanged.connect(busy.append)
    tickets = [engine.submit(act.CreateTensor("x", "[1, 2, 3]")),
               engine.submit(act.Compute("y", "pow", "x")),
               engine.submit(act.Compute("s", "sum", "y"))]
    assert engine.queue_length == 3 and engine.busy
    qtbot.waitUntil(lambda: len(outcomes) == 3, timeout=20000)
    assert tickets == sorted(tickets)
    assert [o.code for o in outcomes] == ["x = torch.tensor([1, 2, 3])", "y = x ** 2",
                                          "s = y.sum()"]
    assert all(o.ok for o in outcomes)
    assert outcomes[2].preview == "tensor(14)"
    assert lengths[:3] == [1, 2, 3] and lengths[-1] == 0
    qtbot.waitUntil(lambda: not engine.busy, timeout=5000)
    assert busy[0] is True and busy[-1] is False
    assert engine.queue_length == 0


def test_action_finished_carries_the_ticket_and_workspace_follows(qtbot,
                                                                 engine: EngineThread) -> None:
    ticket = engine.submit(act.CreateFilled("m", "zeros", (2, 3)))
    with qtbot.waitSignal(engine.workspaceChanged, timeout=20000) as ws:
        pass
    assert [(e.name, e.shape, e.device) for e in ws.args[0]] == [("m", (2, 3), "cpu")]
    done = []
    engine.actionFinished.connect(lambda t, o: done.append((t, o.code)))
    second = engine.submit(act.Delete("m"))
    qtbot.waitUntil(lambda: bool(done), timeout=5000)
    assert done == [(second, "del m")] and second == ticket + 1


def test_call_runs_on_the_engine_thread_and_returns_errors(qtbot, engine: EngineThread) -> None:
    engine.submit(act.CreateTensor("x", "[1.5]"))
    with qtbot.waitSignal(engine.callFinished, timeout=20000) as got:
        ticket = engine.call(lambda eng: float(eng.get("x")))  # type: ignore[arg-type]
    assert got.args == [ticket, 1.5]
    with qtbot.waitSignal(engine.callFinished, timeout=5000) as bad:
        engine.call(lambda eng: 1 / 0)
    assert isinstance(bad.args[1], ZeroDivisionError)


def test_stop_lets_the_running_call_end_and_skips_the_queue(qtbot, engine: EngineThread) -> None:
    """A call is held running on the engine thread while 20 more requests wait behind it;
    stop() waits for the running one and none of the queued ones ever runs."""
    started, release = threading.Event(), threading.Event()
    ended: list[bool] = []
    ran: list[int] = []

    def running(_eng: object) -> None:
        started.set()
        release.wait(10)
        ended.append(True)

    engine.submit(act.CreateFilled("a", "randn", (60, 60)))
    engine.call(running)
    for i in range(10):
        engine.submit(act.Compute("b", "matmul", "a", "a"))
        engine.call(lambda _eng, i=i: ran.append(i))
    qtbot.waitUntil(started.is_set, timeout=20000)
    timer = threading.Timer(0.3, release.set)
    timer.start()
    assert engine.stop(timeout_s=20)
    timer.join()
    assert ended == [True]  # the running call was not cut short
    assert ran == []  # what was queued never ran
    assert not engine.running and not engine.busy and engine.queue_length == 0
    assert engine.submit(act.IsAvailable()) == -1


class _NoTorchEngine(Engine):
    """An engine whose ``import torch`` fails, as on a machine without PyTorch."""

    def ensure_loaded(self) -> LoadStatus:
        return LoadStatus(False, "PyTorch could not be imported: ModuleNotFoundError: "
                                 "No module named 'torch'")


def test_missing_torch_is_a_status_and_an_error_outcome(qtbot) -> None:
    handle = EngineThread(engine_factory=_NoTorchEngine)
    try:
        with qtbot.waitSignal(handle.outcomeReady, timeout=10000) as got:
            handle.submit(act.CreateTensor("x", "[1]"))
        assert handle.load_status is not None and not handle.load_status.ok
        outcome = got.args[0]
        assert not outcome.ok and outcome.error.type_name == "ImportError"
        assert handle.device_options == []
    finally:
        assert handle.stop()
