"""Sampler: slow-field cadence, read timing, and that tick() never raises."""

from __future__ import annotations

import dataclasses

from gpumon.telemetry.model.types import (
    GpuInfo,
    MachineInfo,
    Snapshot,
    SourceState,
    SourceStatus,
)
from gpumon.telemetry.sources.sampler import Sampler, unavailable_snapshot
from gpumon.telemetry.sources.simulated import SimulatedSource

_MACHINE = MachineInfo(host_name="test", source_name="fake")
_OK = SourceStatus(SourceState.OK, "ok")


class FakeClock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


class FakeSource:
    """Records how it was called; can be told to fail."""

    def __init__(self, clock: FakeClock, open_status: SourceStatus = _OK,
                 read_takes_s: float = 0.0) -> None:
        self.clock = clock
        self.open_status = open_status
        self.read_takes_s = read_takes_s
        self.slow_flags: list[bool] = []
        self.raise_on_sample: Exception | None = None
        self.raise_on_open = False
        self.closed = 0

    def open(self) -> SourceStatus:
        if self.raise_on_open:
            raise RuntimeError("boom in open")
        return self.open_status

    def machine(self) -> MachineInfo:
        return _MACHINE

    def gpus(self) -> list[GpuInfo]:
        return []

    def sample(self, include_slow: bool = True) -> Snapshot:
        self.slow_flags.append(include_slow)
        if self.raise_on_sample is not None:
            raise self.raise_on_sample
        self.clock.t += self.read_takes_s
        return Snapshot(self.clock.t, _MACHINE, _OK)

    def close(self) -> None:
        self.closed += 1


def test_slow_fields_on_first_tick_and_every_slow_every_s() -> None:
    clock = FakeClock()
    src = FakeSource(clock)
    sampler = Sampler(src, slow_every_s=5.0, clock=clock)
    assert sampler.open() == _OK
    for _ in range(12):
        sampler.tick()
        clock.t += 1.0
    assert src.slow_flags == [True, False, False, False, False] * 2 + [True, False]


def test_read_duration_is_measured() -> None:
    clock = FakeClock()
    sampler = Sampler(FakeSource(clock, read_takes_s=0.25), clock=clock)
    sampler.open()
    assert sampler.tick().read_duration_s == 0.25


def test_exception_in_sample_becomes_error_snapshot_and_recovers() -> None:
    clock = FakeClock()
    src = FakeSource(clock)
    sampler = Sampler(src, clock=clock, wall_clock=lambda: 42.0)
    sampler.open()
    src.raise_on_sample = OSError("the driver hung up")
    snap = sampler.tick()
    assert snap.status.state is SourceState.ERROR
    assert "the driver hung up" in snap.status.message and "OSError" in snap.status.message
    assert snap.samples == () and snap.timestamp_s == 42.0 and snap.machine == _MACHINE
    assert sampler.status.state is SourceState.ERROR
    src.raise_on_sample = None
    assert sampler.tick().status == _OK
    assert sampler.status == _OK
    assert src.slow_flags[-1] is True  # the failed slow read is retried


def test_exception_in_open_becomes_error_status() -> None:
    src = FakeSource(FakeClock())
    src.raise_on_open = True
    sampler = Sampler(src)
    status = sampler.open()
    assert status.state is SourceState.ERROR and "boom in open" in status.message
    snap = sampler.tick()
    assert snap.status.state is SourceState.ERROR and src.slow_flags == []


def test_unusable_source_is_not_sampled() -> None:
    missing = SourceStatus(SourceState.LIBRARY_NOT_FOUND, "No NVML here.", "Install a driver.")
    src = FakeSource(FakeClock(), open_status=missing)
    sampler = Sampler(src)
    assert sampler.open() == missing
    snap = sampler.tick()
    assert snap.status == missing and snap.samples == ()
    assert src.slow_flags == []


def test_tick_opens_lazily_and_close_is_final() -> None:
    clock = FakeClock()
    src = FakeSource(clock)
    sampler = Sampler(src, clock=clock)
    assert sampler.tick().status == _OK
    sampler.close()
    assert src.closed == 1
    snap = sampler.tick()
    assert snap.status.state is SourceState.CLOSED and len(src.slow_flags) == 1
    assert sampler.open() == _OK  # can be opened again


def test_with_simulated_source() -> None:
    sampler = Sampler(SimulatedSource(2))
    assert sampler.open().state is SourceState.SIMULATED
    snap = sampler.tick()
    assert len(snap.samples) == 2 and snap.simulated and snap.read_duration_s >= 0
    sampler.close()


def test_unavailable_snapshot() -> None:
    status = SourceStatus(SourceState.DRIVER_NOT_LOADED, "The driver is not loaded.")
    snap = unavailable_snapshot(status)
    assert snap.status == status and snap.samples == () and snap.gpus == ()
    assert snap.machine.host_name and not snap.simulated
    sim = unavailable_snapshot(status, MachineInfo("h", "simulated", simulated=True), 5.0)
    assert sim.simulated and sim.timestamp_s == 5.0


def test_a_source_that_times_its_own_read_keeps_its_figure() -> None:
    clock = FakeClock()
    src = FakeSource(clock, read_takes_s=0.25)
    timed = src.sample

    def sample(include_slow: bool = True) -> Snapshot:
        return dataclasses.replace(timed(include_slow), read_duration_s=0.125)

    src.sample = sample  # type: ignore[method-assign]
    sampler = Sampler(src, clock=clock)
    sampler.open()
    snap = sampler.tick()
    assert snap.read_duration_s == 0.125  # not replaced by the Sampler's 0.25
