"""The sampling worker: signals, control across threads, errors as signals, clean stop."""

from __future__ import annotations

import dataclasses

import pytest
from PySide6.QtCore import QThread
from PySide6.QtWidgets import QApplication

from gpumon.interval import SAMPLING
from gpumon.telemetry.model.types import Snapshot, SourceState
from gpumon.telemetry.sources.simulated import SimulatedSource
from gpumon.ui.window.workers import SamplingThread


def test_snapshots_arrive_in_the_gui_thread_from_another(qtbot):
    sampling = SamplingThread(lambda: SimulatedSource(2, seed=3), 0.1)
    threads = []
    sampling.snapshot.connect(lambda s: threads.append(QThread.currentThread()))
    with qtbot.waitSignals([sampling.status, sampling.snapshot], order="strict", timeout=5000):
        sampling.start()
    qtbot.waitUntil(lambda: len(threads) >= 3, timeout=5000)
    assert all(t is QThread.currentThread() for t in threads)
    assert sampling.worker.thread() is not QThread.currentThread()
    assert sampling.stop()
    assert not sampling.running


def test_error_in_a_tick_becomes_a_signal_and_sampling_goes_on(qtbot):
    sampling = SamplingThread(lambda: SimulatedSource(1, seed=3), 0.1)
    calls = []

    def provider(snap):
        calls.append(1)
        if len(calls) == 2:
            raise RuntimeError("boom")
        return {}

    sampling.add_extra_provider(provider)
    errors = []
    sampling.errored.connect(errors.append)
    count = []
    sampling.snapshot.connect(count.append)
    sampling.start()
    qtbot.waitUntil(lambda: bool(errors) and len(count) >= 3, timeout=5000)
    assert isinstance(errors[0], RuntimeError)
    assert sampling.stop()


def test_a_provider_that_raises_keeps_the_snapshot_and_the_others_extras(qtbot):
    """The NVML data of a tick is not lost to a decoration: every tick still arrives, with
    the working provider's series, and the failure is reported once, not every tick."""
    sampling = SamplingThread(lambda: SimulatedSource(2, seed=3), 0.1)
    sampling.add_extra_provider(lambda snap: {0: {"good_count": 1.0}})

    def broken(snap):
        raise RuntimeError("torch counters unreadable")

    sampling.add_extra_provider(broken)
    errors: list[BaseException] = []
    sampling.errored.connect(errors.append)
    snaps: list[Snapshot] = []
    sampling.snapshot.connect(snaps.append)
    sampling.start()
    qtbot.waitUntil(lambda: len(snaps) >= 4, timeout=5000)
    assert sampling.stop()
    assert all(len(s.samples) == 2 and s.samples[0].mem_used_bytes is not None for s in snaps)
    assert all(s.extra[0]["good_count"] == 1.0 for s in snaps)
    assert [str(e) for e in errors] == ["torch counters unreadable"]


def test_snapshot_extra_is_read_only_and_survives_pickling() -> None:
    import pickle

    from gpumon.telemetry.model.types import FrozenMap

    src = SimulatedSource(1, seed=3)
    src.open()
    given = {0: {"x": 1.0}}
    snap = dataclasses.replace(src.sample(), extra=given)
    given[0]["x"] = 2.0  # the caller's dict is copied, not kept
    assert snap.extra[0]["x"] == 1.0 and isinstance(snap.extra, FrozenMap)
    with pytest.raises(TypeError):
        snap.extra[0]["x"] = 3.0  # type: ignore[index]
    with pytest.raises(TypeError):
        snap.extra[1] = {}  # type: ignore[index]
    again = pickle.loads(pickle.dumps(snap))
    assert again.extra[0]["x"] == 1.0 and again == snap


def test_a_factory_that_raises_is_reported(qtbot):
    def broken():
        raise OSError("no such device")

    sampling = SamplingThread(broken, 0.1)
    with qtbot.waitSignal(sampling.status, timeout=5000) as blocker:
        sampling.start()
    assert blocker.args[0].state is SourceState.ERROR
    assert "no such device" in blocker.args[0].message
    assert sampling.stop()


def test_switch_source_pause_and_interval(qtbot):
    sampling = SamplingThread(lambda: SimulatedSource(1, seed=3), 0.1)
    snaps = []
    sampling.snapshot.connect(snaps.append)
    sampling.start()
    qtbot.waitUntil(lambda: len(snaps) >= 1, timeout=5000)
    with qtbot.waitSignal(sampling.status, timeout=5000):
        sampling.set_source(lambda: SimulatedSource(3, seed=3))
    qtbot.waitUntil(lambda: len(snaps[-1].gpus) == 3, timeout=5000)
    with qtbot.waitSignal(sampling.pausedChanged, timeout=5000):
        sampling.set_paused(True)
    n = len(snaps)
    assert sampling.worker.next_tick_ms is None  # no tick is coming
    QApplication.processEvents()  # one sent before the pause came before pausedChanged
    assert len(snaps) == n
    with qtbot.waitSignal(sampling.intervalChanged, timeout=5000) as blocker:
        sampling.set_interval(50.0)
    assert blocker.args == [10.0]
    assert sampling.stop()


def test_clamp_interval():
    assert SAMPLING.clamp(0.01) == 0.1
    assert SAMPLING.clamp(99) == 10.0
    assert SAMPLING.clamp(1.5) == 1.5
