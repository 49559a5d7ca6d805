"""KernelLink: the kernel behind the views' signals; order, busy/queue, calls, quick stop."""

from __future__ import annotations

import os
from collections.abc import Iterator

import psutil
import pytest
from PySide6.QtWidgets import QApplication

from gpumon.playground.data import actions as act
from gpumon.playground.data.actions import RunCode
from gpumon.playground.data.outcome import Outcome
from gpumon.ui.playground.kernel_link import KernelInternalError, KernelLink


@pytest.fixture
def engine(qapp) -> Iterator[KernelLink]:
    handle = KernelLink()
    yield handle
    assert handle.stop()
    assert not handle.running


def test_nothing_starts_until_asked(engine: KernelLink) -> None:
    assert not engine.running and not engine.busy and engine.load_status is None


def test_load_signals_in_order_then_devices(qtbot, engine: KernelLink) -> None:
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


def test_actions_run_in_order_with_queue_length_and_busy(qtbot, engine: KernelLink) -> None:
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
                                                                 engine: KernelLink) -> None:
    ticket = engine.submit(act.CreateFilled("m", "zeros", (2, 3)))
    with qtbot.waitSignal(engine.workspaceChanged, timeout=20000) as ws:
        pass
    assert [(e.name, e.shape, e.device) for e in ws.args[0]] == [("m", (2, 3), "cpu")]
    done = []
    engine.actionFinished.connect(lambda t, o: done.append((t, o.code)))
    second = engine.submit(act.Delete("m"))
    qtbot.waitUntil(lambda: bool(done), timeout=5000)
    assert done == [(second, "del m")] and second > ticket  # tickets only grow


@pytest.mark.internal_error
def test_call_asks_the_kernel_and_returns_our_errors_as_internal(qtbot,
                                                                engine: KernelLink) -> None:
    engine.submit(act.CreateTensor("x", "[1.5]"))
    with qtbot.waitSignal(engine.callFinished, timeout=20000) as got:
        ticket = engine.call("names")
    assert got.args == [ticket, ["x"]]
    with qtbot.waitSignal(engine.callFinished, timeout=5000) as bad:
        engine.call("no-such-request")
    assert isinstance(bad.args[1], KernelInternalError)
    assert "Traceback" in str(bad.args[1])


def test_stop_during_a_long_operation_ends_the_kernel_at_once(qtbot, tmp_path,
                                                              engine: KernelLink) -> None:
    """A 10 s sleep runs in the kernel while 10 more actions wait behind it; stop() ends
    the kernel within its timeout and none of the queued ones is answered."""
    outcomes: list[Outcome] = []
    busy: list[bool] = []
    lengths: list[int] = []
    engine.outcomeReady.connect(outcomes.append)
    engine.busyChanged.connect(busy.append)
    engine.queueLengthChanged.connect(lengths.append)
    started = tmp_path / "started"
    engine.submit(RunCode(f"import os, pathlib, time\npathlib.Path({str(started)!r})"
                          ".write_text(str(os.getpid()))\ntime.sleep(10)"))
    for _ in range(10):
        engine.submit(act.IsAvailable())
    # The sleep is running: the kernel said hello, and wrote its pid just before the sleep.
    qtbot.waitUntil(lambda: engine.kernel_pid is not None and started.exists()
                    and started.read_text() != "", timeout=30000)
    pid = engine.kernel_pid
    assert started.read_text() == str(pid)
    kernel = psutil.Process(pid)
    assert kernel.is_running() and engine.busy and engine.queue_length == 11
    busy.clear()
    lengths.clear()
    assert engine.stop(timeout_s=1.0)  # (how long it takes: benchmarks/bench_kernel_stop.py)
    assert not kernel.is_running()  # gone and reaped (a zombie would count as running)
    assert not engine.running and not engine.busy and engine.queue_length == 0
    assert busy == [False] and lengths == [0]  # the views hear that the queue is gone
    QApplication.processEvents()  # what the reader thread had queued is delivered
    assert outcomes == []
    assert engine.submit(act.IsAvailable()) == -1


def test_missing_torch_is_a_status_and_an_error_outcome(qtbot, tmp_path,
                                                        monkeypatch) -> None:
    """The kernel inherits an environment where ``import torch`` fails (sitecustomize)."""
    (tmp_path / "sitecustomize.py").write_text('import sys\nsys.modules["torch"] = None\n')
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path),
                                                      os.environ.get("PYTHONPATH", "")]))
    handle = KernelLink()
    try:
        with qtbot.waitSignal(handle.outcomeReady, timeout=10000) as got:
            handle.submit(act.CreateTensor("x", "[1]"))
        assert handle.load_status is not None and not handle.load_status.ok
        outcome = got.args[0]
        assert not outcome.ok and outcome.error.type_name == "ImportError"
        assert handle.device_options == []
    finally:
        assert handle.stop()


@pytest.mark.parametrize(("kind", "sentence"), [
    ("interrupted", "PyTorch 没有加载：加载时按下了“停止”。运行任意操作即可重新加载。"),
    ("internal_error",
     "PyTorch 没有加载：gpumon 在加载它时出错。这是 gpumon 的缺陷，请报告给我们。"),
])
def test_a_load_that_got_no_reply_says_why_in_a_sentence(engine: KernelLink, chinese: None,
                                                         kind: str, sentence: str) -> None:
    """Not "PyTorch did not load: interrupted" (the kernel's word for its answer)."""
    finished = []
    engine.loadingFinished.connect(finished.append)
    engine._requests[7] = ("load", None)  # the answer to a pending load
    engine._answer(7, kind, "Traceback …")
    assert [s.message for s in finished] == [sentence]
    assert engine.load_status is not None and not engine.load_status.ok
