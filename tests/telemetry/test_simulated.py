"""SimulatedSource: determinism under a seed and a clock, labels, and injected faults."""

from __future__ import annotations

import dataclasses

import pytest

from gpumon.telemetry.model.types import SourceState
from gpumon.telemetry.sources.simulated import MODELS, SimulatedFaults, SimulatedSource


class FakeClock:
    """A clock a test moves by hand."""

    def __init__(self, t: float = 1_700_000_000.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t

    def advance(self, dt: float) -> None:
        self.t += dt


def _opened(n: int = 4, seed: int = 0, **kw: object) -> tuple[SimulatedSource, FakeClock]:
    clock = FakeClock()
    src = SimulatedSource(n, seed=seed, clock=clock, **kw)  # type: ignore[arg-type]
    src.open()
    return src, clock


def _run(src: SimulatedSource, clock: FakeClock, steps: int, dt: float = 1.0) -> list:
    snaps = []
    for _ in range(steps):
        snaps.append(src.sample())
        clock.advance(dt)
    return snaps


def test_same_seed_and_clock_give_identical_snapshots() -> None:
    a, ca = _opened(seed=7)
    b, cb = _opened(seed=7)
    assert _run(a, ca, 30) == _run(b, cb, 30)


def test_different_seeds_differ() -> None:
    a, ca = _opened(seed=1)
    b, cb = _opened(seed=2)
    assert [g.uuid for g in a.gpus()] != [g.uuid for g in b.gpus()]
    assert [s.samples for s in _run(a, ca, 5)] != [s.samples for s in _run(b, cb, 5)]


def test_values_depend_on_time_not_on_how_often_one_samples() -> None:
    a, ca = _opened()
    b, cb = _opened()
    _run(b, cb, 9)  # b was read nine times before; a was not
    ca.advance(9)
    assert a.sample().samples == b.sample().samples


def test_identity_is_plausible_and_labelled() -> None:
    src, _ = _opened(n=16, seed=3)
    gpus = src.gpus()
    assert [g.index for g in gpus] == list(range(16))
    assert len({g.uuid for g in gpus}) == 16
    assert all(g.uuid.startswith("GPU-") and len(g.uuid) == 40 for g in gpus)
    buses = [g.pci_bus_id for g in gpus]
    assert buses == sorted(buses) and len(set(buses)) == 16  # index order = PCI order
    assert {g.name for g in gpus} <= {m.name for m in MODELS}
    assert len({g.name for g in gpus}) > 1  # a mix
    assert all(g.simulated and g.mem_total_bytes and g.mem_total_bytes > 8 * 1024**3
               for g in gpus)
    machine = src.machine()
    assert machine.simulated and machine.source_name == "simulated"
    status = src.open()
    assert status.state is SourceState.SIMULATED and "simulated" in status.message
    snap = src.sample()
    assert snap.simulated and snap.status.state is SourceState.SIMULATED


@pytest.mark.parametrize("n", [0, -1, 65])
def test_bad_gpu_count_is_refused(n: int) -> None:
    with pytest.raises(ValueError, match="n_gpus"):
        SimulatedSource(n)


def test_metrics_move_within_their_ranges() -> None:
    src, clock = _opened(n=4)
    snaps = _run(src, clock, 400, dt=1.0)
    for i in range(4):
        samples = [s.sample_for(i) for s in snaps]
        utils = {s.gpu_util_pct for s in samples if s}
        assert len(utils) > 5, "utilization should move"
        for s in samples:
            assert s is not None and not s.lost
            assert s.mem_used_bytes is not None and s.mem_total_bytes is not None
            assert 0 < s.mem_used_bytes <= s.mem_total_bytes
            assert s.mem_free_bytes is not None and s.mem_free_bytes >= 0
            assert s.gpu_util_pct is not None and 0 <= s.gpu_util_pct <= 100
            assert s.temperature_c is not None and 20 <= s.temperature_c <= 95
            assert s.power_w is not None and s.power_limit_w is not None
            assert 0 < s.power_w <= s.power_limit_w * 1.05
            assert s.pstate in {"P0", "P2", "P8"}
    # processes hold memory, have names and are on existing GPUs
    procs = [p for s in snaps for p in s.processes]
    assert any(p.command and "python" in p.command for p in procs)
    assert all(0 <= p.gpu_index < 4 and p.pid > 0 for p in procs)


def test_process_memory_fits_in_device_memory() -> None:
    src, clock = _opened(n=3, seed=5)
    for snap in _run(src, clock, 120, dt=3.0):
        for s in snap.samples:
            held = sum(p.gpu_mem_bytes or 0 for p in snap.processes if p.gpu_index == s.index)
            assert held <= (s.mem_used_bytes or 0)


def test_unsupported_fields_are_none_everywhere_or_per_gpu() -> None:
    faults = SimulatedFaults(unsupported={"power_w", "fan_pct"},
                             unsupported_by_gpu={1: {"temperature_c"}})
    src, clock = _opened(n=3, faults=faults)
    for snap in _run(src, clock, 5):
        for s in snap.samples:
            assert s.power_w is None and s.fan_pct is None
            assert (s.temperature_c is None) == (s.index == 1)
            assert s.gpu_util_pct is not None


def test_unknown_fault_field_is_refused() -> None:
    with pytest.raises(ValueError, match="gpu_utilisation"):
        SimulatedFaults(unsupported={"gpu_utilisation"})


def test_gpu_lost_after_t_while_others_keep_updating() -> None:
    src, clock = _opened(n=3, faults=SimulatedFaults(lost_after_s={1: 10.0}))
    before = _run(src, clock, 10)
    assert not any(s.lost for snap in before for s in snap.samples)
    after = _run(src, clock, 20)
    for snap in after:
        lost = snap.sample_for(1)
        assert lost is not None and lost.lost and "lost" in lost.message
        assert lost.gpu_util_pct is None and lost.mem_used_bytes is None
        assert not any(p.gpu_index == 1 for p in snap.processes)
        assert len(snap.gpus) == 3  # still listed
    for other in (0, 2):
        values = [snap.sample_for(other) for snap in after]
        assert not any(v is None or v.lost for v in values)
        assert len({v.power_w for v in values if v}) > 1, "the others keep moving"


def test_slow_calls_sleep_each_sample() -> None:
    slept: list[float] = []
    src = SimulatedSource(1, faults=SimulatedFaults(slow_sample_s=2.5), sleep=slept.append)
    src.open()
    src.sample()
    src.sample()
    assert slept == [2.5, 2.5]


def test_vanished_process_keeps_pid_and_memory_only() -> None:
    src, clock = _opened(n=1, faults=SimulatedFaults(vanished_pid_after_s=5.0))
    first = src.sample().processes[0]
    assert first.name is not None
    clock.advance(5.0)
    gone = src.sample().processes[0]
    assert gone.pid == first.pid and gone.gpu_mem_bytes == first.gpu_mem_bytes
    assert gone.name is None and gone.user is None and gone.command is None


def test_self_process_is_listed_when_asked() -> None:
    src, _ = _opened(n=2, self_process_gpu=1)
    own = [p for p in src.sample().processes if p.is_self]
    assert len(own) == 1 and own[0].gpu_index == 1


def test_slow_fields_are_reused_without_include_slow() -> None:
    src, clock = _opened(n=1)
    first = src.sample(include_slow=True).samples[0]
    for _ in range(200):
        clock.advance(1.0)
        s = src.sample(include_slow=False).samples[0]
        assert s.pstate == first.pstate  # cached, even when the load changed
    pstates = set()
    for _ in range(200):
        clock.advance(1.0)
        pstates.add(src.sample(include_slow=True).samples[0].pstate)
    assert len(pstates) > 1


def test_closed_source_returns_no_samples() -> None:
    src, _ = _opened(n=2)
    src.close()
    snap = src.sample()
    assert snap.samples == () and snap.status.state is SourceState.CLOSED
    assert src.open().state is SourceState.SIMULATED  # reopens


def test_faults_are_frozen() -> None:
    faults = SimulatedFaults()
    with pytest.raises(dataclasses.FrozenInstanceError):
        faults.slow_sample_s = 1.0  # type: ignore[misc]


def test_status_sentence_agrees_in_number() -> None:
    one, four = SimulatedSource(1), SimulatedSource(4)
    assert one.open().message.startswith("This GPU is simulated;")
    assert four.open().message.startswith("These 4 GPUs are simulated;")


def test_simulated_health_fields_follow_the_model_and_scripted_xids() -> None:
    from gpumon.telemetry.sources.simulated import SimulatedFaults
    clock = [1000.0]
    src = SimulatedSource(8, faults=SimulatedFaults(xids={1: ((5.0, 79), (6.0, 13))}),
                          clock=lambda: clock[0])
    src.open()
    clock[0] += 4.0
    first = src.sample()
    clock[0] += 4.0
    snap = src.sample()
    assert snap.simulated
    by_name = {g.index: g.name for g in snap.gpus}
    for before, s in zip(first.samples, snap.samples, strict=True):
        assert s.energy_mj is not None and before.energy_mj is not None
        assert s.clocks_event_reasons is not None
        watts = (s.energy_mj - before.energy_mj) / 1000 / 4.0  # the power of the later tick
        assert watts == pytest.approx(s.power_w, rel=0.3)
        name = by_name[s.index]
        assert (s.ecc_enabled is None) == ("GeForce" in name)
        assert (s.remap_pending is None) != any(m in name for m in ("A100", "H100", "L40S"))
        assert (s.mem_temperature_c is None) != any(m in name for m in ("A100", "H100", "V100"))
    assert (snap.samples[1].xid_count, snap.samples[1].xid_last) == (2, 13)
    assert (first.samples[1].xid_count, first.samples[1].xid_last) == (0, None)


def test_a_source_with_history_brings_the_seconds_before_its_start_once() -> None:
    """``history_s``: the GPUs ran that long before open(); the first reading brings one
    reading a second of it, oldest first, the same readings as a source opened then."""
    from gpumon.telemetry.sources.simulated import SimulatedSource as Source

    clock = [1_000_000.0]
    src = Source(2, seed=4, clock=lambda: clock[0], history_s=60.0)
    src.open()
    first = src.sample()
    assert [s.timestamp_s for s in first.backfill] == [999_940.0 + i for i in range(60)]
    then = [1_000_000.0 - 60.0]
    early = Source(2, seed=4, clock=lambda: then[0])
    early.open()
    then[0] = 999_970.0
    assert first.backfill[30].samples == early.sample().samples
    clock[0] += 1.0
    assert src.sample().backfill == ()
    plain = Source(2, seed=4, clock=lambda: clock[0])
    plain.open()
    assert plain.sample().backfill == ()  # no history asked: none (the tests' sources)
