"""Why a GPU is slow and whether it is healthy, read through the real nvidia-ml-py from the
fake NVML library: clock event reasons, energy, memory temperature, ECC, remapped rows,
retired pages, PCIe replays and XID events; each None (never 0) where not supported, and a
lost GPU on any of these calls marks only that GPU lost."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pynvml
import pytest
from fakenvml import FakeNvml

from gpumon.telemetry.nvml.health import XID_EVENTS_PER_READ
from gpumon.telemetry.nvml.readers import HEALTH_FIELDS
from gpumon.telemetry.nvml.source import NvmlSource

HEALTH_CALLS = {  # each NVML function -> the fields it alone gives
    "nvmlDeviceGetCurrentClocksEventReasons": ("clocks_event_reasons",),
    "nvmlDeviceGetTotalEnergyConsumption": ("energy_mj",),
    "nvmlDeviceGetFieldValues": ("mem_temperature_c",),
    "nvmlDeviceGetRemappedRows": ("remapped_rows_correctable", "remapped_rows_uncorrectable",
                                  "remap_pending", "remap_failure"),
    "nvmlDeviceGetRetiredPages": ("retired_pages_sbe", "retired_pages_dbe"),
    "nvmlDeviceGetRetiredPagesPendingStatus": ("retired_pages_pending",),
    "nvmlDeviceGetPcieReplayCounter": ("pcie_replay_count",),
    "nvmlDeviceGetTotalEccErrors": ("ecc_corrected_volatile", "ecc_uncorrected_volatile",
                                    "ecc_corrected_aggregate", "ecc_uncorrected_aggregate"),
    "nvmlDeviceGetEccMode": ("ecc_enabled", "ecc_corrected_volatile",
                             "ecc_uncorrected_volatile", "ecc_corrected_aggregate",
                             "ecc_uncorrected_aggregate"),
}


@pytest.fixture
def source() -> Iterator[NvmlSource]:
    src = NvmlSource(recheck_lost_s=3600)
    yield src
    src.close()


def test_every_health_field_is_read_as_the_fake_sets_it(fake_nvml: FakeNvml,
                                                        source: NvmlSource) -> None:
    fake_nvml.set_gpu_count(2)
    for key, value in (("clock_events", 0x44), ("ecc_sbe_vol", 7), ("ecc_dbe_vol", 2),
                       ("ecc_sbe_agg", 70), ("ecc_dbe_agg", 3), ("remap_corr", 5),
                       ("remap_unc", 1), ("remap_pending", 1), ("remap_failure", 0),
                       ("retired_sbe", 4), ("retired_dbe", 2), ("retired_pending", 1),
                       ("pcie_replay", 9), ("mem_temp", 71)):
        fake_nvml.set_value(1, key, value)
    fake_nvml.set_energy(1, 5_000_000)
    source.open()
    s = source.sample().samples[1]
    assert s.clocks_event_reasons == 0x44
    assert (s.ecc_enabled, s.ecc_corrected_volatile, s.ecc_uncorrected_volatile,
            s.ecc_corrected_aggregate, s.ecc_uncorrected_aggregate) == (True, 7, 2, 70, 3)
    assert (s.remapped_rows_correctable, s.remapped_rows_uncorrectable, s.remap_pending,
            s.remap_failure) == (5, 1, True, False)
    assert (s.retired_pages_sbe, s.retired_pages_dbe, s.retired_pages_pending) == (4, 2, True)
    assert s.pcie_replay_count == 9
    assert s.mem_temperature_c == 71.0
    assert 5_000_000 <= s.energy_mj < 5_000_000 + 101_000 * 5  # at most 5 s at 101 W
    assert s.xid_count == 0 and s.xid_last is None
    other = source.sample().samples[0]
    assert other.clocks_event_reasons == 0 and other.ecc_uncorrected_volatile == 0


def test_energy_grows_with_the_power_drawn(fake_nvml: FakeNvml, source: NvmlSource) -> None:
    fake_nvml.set_value(0, "power_mw", 250_000)
    source.open()
    first = source.sample().samples[0]
    time.sleep(0.5)
    second = source.sample().samples[0]
    assert first.energy_mj is not None and second.energy_mj is not None
    watts = (second.energy_mj - first.energy_mj) / 1000 / (second.timestamp_s - first.timestamp_s)
    assert watts == pytest.approx(250, rel=0.05)


@pytest.mark.parametrize("func", sorted(HEALTH_CALLS))
def test_a_call_not_supported_leaves_its_fields_none_never_zero(
        fake_nvml: FakeNvml, source: NvmlSource, func: str) -> None:
    fake_nvml.set_gpu_count(2)
    fake_nvml.set_unsupported(func, gpu=0)
    if func == "nvmlDeviceGetCurrentClocksEventReasons":  # and the older name as well
        fake_nvml.set_unsupported("nvmlDeviceGetCurrentClocksThrottleReasons", gpu=0)
    source.open()
    s0, s1 = source.sample().samples
    for key in HEALTH_CALLS[func]:
        assert getattr(s0, key) is None, key
        assert getattr(s1, key) is not None, key
    assert not s0.lost and s0.failed_reads == ()


@pytest.mark.parametrize("func", sorted(HEALTH_CALLS))
def test_a_lost_gpu_on_a_health_call_marks_only_that_gpu_lost(
        fake_nvml: FakeNvml, source: NvmlSource, func: str) -> None:
    fake_nvml.set_gpu_count(2)
    source.open()
    source.sample()
    fake_nvml.set_error(func, pynvml.NVML_ERROR_GPU_IS_LOST, gpu=1)
    s0, s1 = source.sample().samples
    assert s1.lost and "GPU is lost" in s1.message
    assert not s0.lost and s0.energy_mj is not None


def test_memory_temperature_field_not_supported_is_none(fake_nvml: FakeNvml,
                                                         source: NvmlSource) -> None:
    # The call succeeds; the field's own nvmlReturn says not supported (GDDR GPUs).
    fake_nvml.set_error("NVML_FI_DEV_MEMORY_TEMP", pynvml.NVML_ERROR_NOT_SUPPORTED, gpu=0)
    source.open()
    assert source.sample().samples[0].mem_temperature_c is None


def test_health_counts_are_read_on_slow_ticks_only(fake_nvml: FakeNvml,
                                                   source: NvmlSource) -> None:
    source.open()
    assert source.sample().samples[0].ecc_uncorrected_volatile == 0
    fake_nvml.set_value(0, "ecc_dbe_vol", 3)
    fake_nvml.set_value(0, "clock_events", 0x4)
    fast = source.sample(include_slow=False).samples[0]
    assert fast.ecc_uncorrected_volatile == 0  # the last slow reading, reused
    assert fast.clocks_event_reasons == 0x4  # every tick
    assert source.sample().samples[0].ecc_uncorrected_volatile == 3
    assert set(HEALTH_FIELDS) <= set(fast.__dataclass_fields__)


def test_an_old_driver_gives_the_reasons_through_the_throttle_call(
        fake_nvml_old: FakeNvml, source: NvmlSource) -> None:
    fake_nvml_old.set_value(0, "clock_events", 0x24)
    source.open()
    assert source.sample().samples[0].clocks_event_reasons == 0x24
    assert source.sample().samples[0].clocks_event_reasons == 0x24  # missing: asked no more


def wait_for(predicate, timeout_s: float = 2.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def test_xid_events_arrive_through_the_event_set(fake_nvml: FakeNvml,
                                                 source: NvmlSource) -> None:
    fake_nvml.set_gpu_count(3)
    source.open()
    before = time.time()
    fake_nvml.add_xid(1, 79, after_ms=100)
    fake_nvml.add_xid(1, 48, after_ms=300)
    fake_nvml.add_xid(2, 13, after_ms=0)
    s0, s1, s2 = source.sample().samples  # only what came before this reading
    assert (s1.xid_count, s2.xid_count, s2.xid_last) == (0, 1, 13)
    time.sleep(0.35)
    s0, s1, s2 = source.sample().samples  # the rest came meanwhile: taken now
    assert fake_nvml.xids_delivered() == 3
    assert (s0.xid_count, s0.xid_last) == (0, None)
    assert (s1.xid_count, s1.xid_last) == (2, 48)
    assert (s2.xid_count, s2.xid_last) == (1, 13)
    assert s1.xid_last_time_s is not None and before <= s1.xid_last_time_s <= time.time()


def test_a_burst_of_xids_is_taken_over_a_few_readings(fake_nvml: FakeNvml,
                                                      source: NvmlSource) -> None:
    source.open()
    for n in range(XID_EVENTS_PER_READ + 6):
        fake_nvml.add_xid(0, 31 + n % 2)
    assert source.sample().samples[0].xid_count == XID_EVENTS_PER_READ
    assert source.sample().samples[0].xid_count == XID_EVENTS_PER_READ + 6


def test_xid_not_supported_or_lost_at_registration_is_none(fake_nvml: FakeNvml,
                                                           source: NvmlSource) -> None:
    fake_nvml.set_gpu_count(3)
    fake_nvml.set_unsupported("nvmlDeviceRegisterEvents", gpu=0)
    fake_nvml.set_error("nvmlDeviceGetSupportedEventTypes", pynvml.NVML_ERROR_GPU_IS_LOST, gpu=1)
    source.open()
    s0, s1, s2 = source.sample().samples
    assert s0.xid_count is None and s1.xid_count is None
    assert s2.xid_count == 0


def test_no_thread_waits_for_xids_and_close_frees_the_set(fake_nvml: FakeNvml,
                                                          source: NvmlSource) -> None:
    """A thread that waited 100 ms at a time woke ten times a second in an idle window."""
    import threading
    threads = set(threading.enumerate())
    source.open()
    assert set(threading.enumerate()) == threads
    source.close()
    assert fake_nvml.init_count() == 0
    source.open()  # a second open watches again
    fake_nvml.add_xid(0, 31)
    assert source.sample().samples[0].xid_last == 31


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads Linux /proc")
def test_the_fake_event_wait_sleeps_until_an_xid_comes(fake_nvml: FakeNvml) -> None:
    """The fake's nvmlEventSetWait sleeps as the driver's does (it polled every 5 ms, about
    200 wakeups a second charged to whoever waits) and wakes for an XID."""
    import threading

    pynvml.nvmlInit()
    event_set = pynvml.nvmlEventSetCreate()
    try:
        pynvml.nvmlDeviceRegisterEvents(pynvml.nvmlDeviceGetHandleByIndex(0),
                                        pynvml.nvmlEventTypeXidCriticalError, event_set)
        native_id = threading.get_native_id()
        status = Path(f"/proc/self/task/{native_id}/status")

        def switches() -> int:
            return sum(int(line.split()[1]) for line in status.read_text().splitlines()
                       if "ctxt_switches:" in line)

        before = switches()
        with pytest.raises(pynvml.NVMLError_Timeout):
            pynvml.nvmlEventSetWait(event_set, 500)
        assert switches() - before <= 5  # polling: about 100
        fake_nvml.add_xid(0, 79, after_ms=200)
        # Woken by the XID, not the timeout: a wait of a minute answers well before it.
        got: list[int] = []
        waiter = threading.Thread(target=lambda: got.append(
            pynvml.nvmlEventSetWait(event_set, 60_000).eventData), daemon=True)
        waiter.start()
        waiter.join(30)
        assert got == [79]
    finally:
        pynvml.nvmlEventSetFree(event_set)
        pynvml.nvmlShutdown()
