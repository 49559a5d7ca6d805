"""The reading budget: what a real driver makes costly is read less often, or off the tick,
and says so (the fake NVML's "h200" cost profile: the energy counter spins 3.3 ms of CPU,
per-process utilization 2.8 ms, the PCIe throughput call sleeps 21 ms a direction)."""

from __future__ import annotations

import dataclasses
import re
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pynvml
import pytest
from fakenvml import FakeNvml

from gpumon.telemetry.model.types import GpuSample
from gpumon.telemetry.nvml.budget import MAX_EVERY_S, SHARE_S, Budget
from gpumon.telemetry.nvml.source import NvmlSource
from gpumon.telemetry.nvml.unsupported import UNSUPPORTED_RECHECK_S
from gpumon.text.smi_detail import render_detail

KIB = 1024


class Clock:
    """The source's clock (the budget's due times, the "not supported" re-checks)."""

    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


class Spy:
    """Counts the calls of one real pynvml function, by the thread that made them."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, name: str) -> None:
        self.real = getattr(pynvml, name)
        self.threads: list[str] = []
        self.args: list[tuple[Any, ...]] = []
        monkeypatch.setattr(pynvml, name, self)
        self.__name__ = name

    def __call__(self, *args: Any) -> Any:
        self.threads.append(threading.current_thread().name)
        self.args.append(args)
        return self.real(*args)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def source(fake_nvml: FakeNvml, clock: Clock) -> Iterator[NvmlSource]:
    s = NvmlSource(clock=clock)
    yield s
    s.close()


def _spin(seconds: float) -> None:
    until = time.thread_time() + seconds
    while time.thread_time() < until:
        pass


def test_a_costly_reading_waits_its_share_and_a_cheap_one_does_not() -> None:
    clock = Clock()
    budget = Budget(clock)
    assert budget.due("energy_mj", 0) and budget.read("energy_mj", 0, _spin, 3e-3) is None
    assert budget.every_s("energy_mj", 0) >= 3e-3 / SHARE_S  # 12 s at least
    clock.t += 3e-3 / SHARE_S - 0.1
    assert not budget.due("energy_mj", 0)
    assert budget.due("energy_mj", 1)  # each GPU learns its own cost
    clock.t += MAX_EVERY_S
    assert not budget.due("energy_mj", 0)  # a costly reading of GPU 0 was made this tick
    budget.tick()  # the next reading
    assert budget.due("energy_mj", 0)  # never older than MAX_EVERY_S
    assert budget.read("energy_mj", 2, lambda: 7) == 7  # cheap: due every time asked
    assert budget.due("energy_mj", 2) and budget.every_s("energy_mj", 2) == 0.0
    assert budget.marks(2) == () and budget.marks(0)[0][0] == "energy_mj"


def test_on_an_h200_the_energy_counter_is_read_seldom_and_says_so(
        fake_nvml: FakeNvml, source: NvmlSource, clock: Clock,
        monkeypatch: pytest.MonkeyPatch) -> None:
    fake_nvml.set_profile("h200")
    energy = Spy(monkeypatch, "nvmlDeviceGetTotalEnergyConsumption")
    source.open()
    samples: list[GpuSample] = []
    for tick in range(16):  # 1 s ticks, slow every 5th as the sampler asks
        samples.append(source.sample(include_slow=tick % 5 == 0).samples[0])
        clock.t += 1.0
    # read on the first tick, then once its 3.3 ms fit the share: every ~13 s, not 16 times
    assert len(energy.threads) == 2
    first = samples[0].energy_mj
    assert first is not None and all(s.energy_mj == first for s in samples[1:13])
    assert samples[-1].energy_mj is not None and samples[-1].energy_mj > first
    every = dict(samples[-1].read_every_s)["energy_mj"]
    assert 3.28e-3 / SHARE_S <= every <= MAX_EVERY_S


def test_with_the_fake_costing_nothing_everything_is_read_every_tick_as_before(
        fake_nvml: FakeNvml, source: NvmlSource, monkeypatch: pytest.MonkeyPatch) -> None:
    energy = Spy(monkeypatch, "nvmlDeviceGetTotalEnergyConsumption")
    pcie = Spy(monkeypatch, "nvmlDeviceGetPcieThroughput")
    source.open()
    for tick in range(6):
        s = source.sample(include_slow=tick % 5 == 0).samples[0]
    assert len(energy.threads) == 6 and s.read_every_s == ()
    assert pcie.threads == [threading.current_thread().name] * 4  # two slow ticks, on the tick


def test_per_process_utilization_is_asked_only_for_a_gpu_with_processes(
        fake_nvml: FakeNvml, source: NvmlSource, clock: Clock) -> None:
    fake_nvml.set_profile("h200")
    fake_nvml.set_gpu_count(2)
    fake_nvml.add_process(1, 4242, 1 << 30)
    source.open()
    for tick in range(31):
        snap = source.sample(include_slow=tick % 5 == 0)
        clock.t += 1.0
    assert fake_nvml.util_calls(0) == 0  # no process: 2.8 ms saved on every slow tick
    # 2.8 ms a call: not on each of the 7 slow ticks, but every ~11 s, on a slow tick
    assert 2 <= fake_nvml.util_calls(1) <= 4
    assert 2.78e-3 / SHARE_S <= dict(snap.samples[1].read_every_s)["processes"] <= MAX_EVERY_S
    assert "processes" not in dict(snap.samples[0].read_every_s)


def test_two_costly_readings_of_a_gpu_never_share_a_tick(
        fake_nvml: FakeNvml, source: NvmlSource, clock: Clock,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The energy counter (3.3 ms) and per-process utilization (2.8 ms) would hold one tick
    6 ms for that GPU: the second waits for the next tick."""
    fake_nvml.set_profile("h200")
    fake_nvml.add_process(0, 4242, 1 << 30)
    energy = Spy(monkeypatch, "nvmlDeviceGetTotalEnergyConsumption")
    source.open()
    both, ticks_with = 0, {"energy": 0, "processes": 0}
    for tick in range(100):  # all slow: every ~12 s and every ~14 s meet at 84 s
        e0, u0 = len(energy.threads), fake_nvml.util_calls(0)
        source.sample()
        read_energy, read_util = len(energy.threads) > e0, fake_nvml.util_calls(0) > u0
        both += tick > 0 and read_energy and read_util
        ticks_with["energy"] += read_energy
        ticks_with["processes"] += read_util
        clock.t += 1.0
    assert both == 0
    assert ticks_with["energy"] >= 4 and ticks_with["processes"] >= 4  # both still read


def _until(predicate: Callable[[], bool], what: str, timeout_s: float = 20.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        assert time.monotonic() < deadline, what
        time.sleep(0.01)


def test_on_an_h200_pcie_rates_come_from_a_thread_of_their_own(
        fake_nvml: FakeNvml, source: NvmlSource, clock: Clock,
        monkeypatch: pytest.MonkeyPatch) -> None:
    fake_nvml.set_profile("h200")
    fake_nvml.set_gpu_count(2)
    pcie = Spy(monkeypatch, "nvmlDeviceGetPcieThroughput")
    source.open()
    first = source.sample().samples
    # the first reading has them (a one-shot `--once` shows them): read on the tick
    assert [s.pcie_rx_bytes_per_s for s in first] == [1000 * KIB] * 2
    assert pcie.threads == [threading.current_thread().name] * 4
    for _ in range(3):  # fast ticks take the latest rates and ask for no pass
        assert source.sample(include_slow=False).samples[1].pcie_tx_bytes_per_s == 2000 * KIB
    assert len(pcie.threads) == 4
    fake_nvml.set_value(0, "pcie_rx_kb", 4000)
    fake_nvml.set_value(1, "pcie_tx_kb", 5000)

    def fresh() -> bool:
        clock.t += 5.0
        s0, s1 = source.sample().samples  # a slow tick: it asks for a new pass
        return s0.pcie_rx_bytes_per_s == 4000 * KIB and s1.pcie_tx_bytes_per_s == 5000 * KIB

    _until(fresh, "the PCIe thread brought the new rates")
    assert set(pcie.threads[4:]) == {"gpumon-nvml-pcie"}  # never again on the tick
    clock.t += 5.0
    marks = dict(source.sample().samples[0].read_every_s)  # the second pass asked: 5 s apart
    assert marks["pcie_rx_bytes_per_s"] == marks["pcie_tx_bytes_per_s"] == 5.0


def test_closing_does_not_wait_for_a_pcie_call_that_hangs(
        fake_nvml: FakeNvml, source: NvmlSource, tmp_path: Any) -> None:
    fake_nvml.set_profile("h200")
    source.open()
    source.sample()  # learns that the call sleeps: the thread reads it from now on
    fake_nvml.set_delay("nvmlDeviceGetPcieThroughput", -1)  # hangs until released
    s = source.sample().samples[0]  # asks the thread; the tick does not wait for it
    assert not s.lost and s.pcie_rx_bytes_per_s == 1000 * KIB
    _until(lambda: any(t.name == "gpumon-nvml-pcie" for t in threading.enumerate()),
           "the thread runs")
    source.close()  # returns: the join gives up on the hung call (else pytest's timeout)
    assert fake_nvml.init_count() == 0  # and NVML was shut down
    fake_nvml.set_delay("", 0)  # the hung call returns; the daemon thread ends
    _until(lambda: not any(t.name == "gpumon-nvml-pcie" for t in threading.enumerate()),
           "the left thread ended")


def test_a_call_off_the_tick_is_not_the_readings_progress(
        fake_nvml: FakeNvml, source: NvmlSource) -> None:
    """The exporter's watchdog sees a hung reading by calls_started standing still; the PCIe
    thread's calls must not move it, and their failures are not the tick's."""
    fake_nvml.set_error("nvmlDeviceGetPcieThroughput", pynvml.NVML_ERROR_UNKNOWN)
    source.open()
    handle = pynvml.nvmlDeviceGetHandleByIndex(0)
    before, failed = source.calls_started, []
    value = source.call(pynvml.nvmlDeviceGetPcieThroughput, handle,
                        pynvml.NVML_PCIE_UTIL_RX_BYTES, off_tick=failed)
    assert value is None and source.calls_started == before
    assert failed == ["nvmlDeviceGetPcieThroughput: Unknown Error"]


def test_not_supported_is_remembered_per_gpu_and_asked_again_later(
        fake_nvml: FakeNvml, source: NvmlSource, clock: Clock,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """An H200 takes 0.18 ms to say the fan speed is not supported: not every tick."""
    fake_nvml.set_gpu_count(2)
    fake_nvml.set_unsupported("nvmlDeviceGetFanSpeed", gpu=1)
    fan = Spy(monkeypatch, "nvmlDeviceGetFanSpeed")
    source.open()
    def asked(gpu: int) -> int:
        return sum(pynvml.nvmlDeviceGetIndex(args[0]) == gpu for args in fan.args)

    for _ in range(5):
        s0, s1 = source.sample().samples
        assert s0.fan_pct == 30.0 and s1.fan_pct is None
    assert (asked(0), asked(1)) == (5, 1)
    clock.t += UNSUPPORTED_RECHECK_S
    fake_nvml.set_error("nvmlDeviceGetFanSpeed", pynvml.NVML_SUCCESS, gpu=1)  # supported now
    for _ in range(2):
        s1 = source.sample().samples[1]
    assert s1.fan_pct == 30.0 and asked(1) == 3


def test_once_q_says_what_is_read_less_often(fake_nvml: FakeNvml, source: NvmlSource,
                                            clock: Clock) -> None:
    """``gpumon --once -q`` on an H200: the energy counter, the PCIe rates and the
    per-process utilization say how often they are read."""
    fake_nvml.set_profile("h200")
    fake_nvml.add_process(0, 4242, 1 << 30)
    source.open()
    for tick in range(31):
        snap = source.sample(include_slow=tick % 5 == 0)
        clock.t += 1.0
    lines = render_detail(snap).splitlines()
    energy = next(line for line in lines if "Energy Since Driver Load" in line)
    assert re.search(r": \d+\.\d{3} J \(read every 1[3-9] s\)$", energy), energy
    rx = next(line for line in lines if "Rx Throughput" in line)
    assert rx.endswith(": 1000 KB/s (read every 5 s)"), rx
    assert any(re.search(r"Utilization +: read every 1[0-9] s$", line) for line in lines)
    plain = source.sample(include_slow=False)
    assert "read every" not in render_detail(dataclasses.replace(plain, samples=tuple(
        dataclasses.replace(s, read_every_s=()) for s in plain.samples)))
