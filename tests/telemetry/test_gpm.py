"""GPU activity from GPM, read through the real nvidia-ml-py against the fake NVML: two
samples swapped per GPU, each metric's own return code, NaN and "not supported" as None (never
0), a GPU older than Hopper, a driver without GPM, --no-gpm, MIG instances, and GPM's PCIe
rates in place of the blocking PCIe call."""

from __future__ import annotations

import math
import time
from collections.abc import Iterator

import pynvml
import pytest
from fakenvml import FakeNvml

from gpumon.telemetry.model.activity import ActivityState, why_empty
from gpumon.telemetry.model.metrics import ACTIVITY_KEYS
from gpumon.telemetry.nvml.gpm import FIELDS, MIN_INTERVAL_S, GpmReader
from gpumon.telemetry.nvml.source import NvmlSource
from gpumon.units import MIB

GAP_S = MIN_INTERVAL_S + 0.02  # two readings GPM can compare


class Clock:
    """The sources' clock here: GPM's samples are GAP_S apart when a test says so."""

    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t

    def advance(self) -> None:
        self.t += GAP_S


CLOCK = Clock()


@pytest.fixture
def source() -> Iterator[NvmlSource]:
    s = NvmlSource(clock=CLOCK)
    yield s
    s.close()


def two_readings(source: NvmlSource):
    source.open()
    first = source.sample()
    CLOCK.advance()
    return first, source.sample()


def test_the_second_reading_has_the_h200s_figures(fake_nvml: FakeNvml,
                                                  source: NvmlSource) -> None:
    fake_nvml.use_scenario("hgx")  # GPU 0: the H200's own matmul figures from the issue
    source.open()
    first = source.sample()
    # The fake driver times its samples itself, as the H200 does: DRAM is NaN under 0.1 s.
    time.sleep(GAP_S)
    CLOCK.advance()
    second = source.sample()
    g = first.samples[0]
    assert g.activity_state is ActivityState.WARMING
    assert all(getattr(g, key) is None for key in ACTIVITY_KEYS[:-2])  # none yet, not 0
    g = second.samples[0]
    assert g.activity_state is ActivityState.READING and not g.failed_reads
    assert (g.graphics_active_pct, g.sm_active_pct, g.sm_occupancy_pct) == (100.0, 96.4, 14.3)
    assert (g.tensor_active_pct, g.tensor_hmma_active_pct, g.dram_active_pct) == (
        93.6, 93.6, 16.6)
    assert g.fp32_active_pct == 2.5 and g.fp64_active_pct == 0.0
    assert g.pcie_tx_bytes_per_s == pytest.approx(4.6 * MIB)  # GPM's MiB/s as bytes/s
    assert g.pcie_rx_bytes_per_s == pytest.approx(12.8 * MIB)
    assert g.nvlink_rx_bytes_per_s == pytest.approx(18 * 2.0e6 / 1024 * MIB)


def test_one_sample_get_per_gpu_per_reading(fake_nvml: FakeNvml, source: NvmlSource) -> None:
    fake_nvml.use_scenario("hgx")
    two_readings(source)
    before = [fake_nvml.gpm_sample_gets(g) for g in range(8)]
    for _ in range(3):
        CLOCK.advance()
        source.sample()
    assert [fake_nvml.gpm_sample_gets(g) - b for g, b in enumerate(before)] == [3] * 8
    assert fake_nvml.gpm_samples_alive() == 16  # two buffers a GPU, swapped, never more


def test_a_reading_too_soon_keeps_the_older_sample_and_its_values(
        fake_nvml: FakeNvml, source: NvmlSource) -> None:
    fake_nvml.set_gpm(0)
    fake_nvml.set_gpm_metric(0, pynvml.NVML_GPM_METRIC_SM_UTIL, 40.0)
    _, second = two_readings(source)
    gets = fake_nvml.gpm_sample_gets(0)
    fake_nvml.set_gpm_metric(0, pynvml.NVML_GPM_METRIC_SM_UTIL, 70.0)
    soon = source.sample()  # well under 100 ms after the last: no new sample
    assert fake_nvml.gpm_sample_gets(0) == gets
    assert soon.samples[0].sm_active_pct == second.samples[0].sm_active_pct == 40.0
    CLOCK.advance()
    assert source.sample().samples[0].sm_active_pct == 70.0


def test_two_samples_under_100ms_apart_give_nan_dram_which_is_none(
        fake_nvml: FakeNvml, source: NvmlSource) -> None:
    """The H200 at 50 ms: DRAM NaN, the rest numbers. A clock that claims 0.2 s passed makes
    the reader compare two samples taken a moment apart."""
    fake_nvml.set_gpm(0)
    fake_nvml.set_gpm_metric(0, pynvml.NVML_GPM_METRIC_DRAM_BW_UTIL, 30.0)
    source.open()
    clock = iter(float(k) * 0.2 for k in range(10))
    reader = GpmReader(clock=lambda: next(clock))
    handle = pynvml.nvmlDeviceGetHandleByIndex(0)
    assert reader.open_gpu(source, 0, handle, mig=False) is ActivityState.READING
    assert reader.read(source, 0, handle).state is ActivityState.WARMING
    got = reader.read(source, 0, handle)
    assert got.state is ActivityState.READING
    assert got.values["dram_active_pct"] is None  # NaN from the driver
    assert got.values["sm_active_pct"] == 0.0  # a real idle 0 where the GPU answered
    reader.close(source)


def test_each_metric_has_its_own_return_code(fake_nvml: FakeNvml, source: NvmlSource) -> None:
    fake_nvml.set_gpm(0)
    fake_nvml.set_gpm_metric(0, pynvml.NVML_GPM_METRIC_SM_OCCUPANCY, 55.0,
                             pynvml.NVML_ERROR_NOT_SUPPORTED)
    fake_nvml.set_gpm_metric(0, pynvml.NVML_GPM_METRIC_ANY_TENSOR_UTIL, math.nan)
    fake_nvml.set_gpm_metric(0, pynvml.NVML_GPM_METRIC_SM_UTIL, 12.5)
    g = two_readings(source)[1].samples[0]
    assert g.activity_state is ActivityState.READING
    assert g.sm_occupancy_pct is None and g.tensor_active_pct is None
    assert g.sm_active_pct == 12.5
    # engines: NVDEC 7 and NVENC 1-3 are missing on this GPU; the mean is over the others
    fake_nvml.set_gpm_metric(0, pynvml.NVML_GPM_METRIC_NVDEC_0_UTIL, 70.0)
    CLOCK.advance()
    g = source.sample().samples[0]
    assert g.nvdec_active_pct == pytest.approx(10.0)  # 70 over NVDEC 0-6
    assert g.nvenc_active_pct == 0.0  # NVENC 0 answers 0


def test_a_gpu_older_than_hopper_has_none_and_says_why(fake_nvml: FakeNvml,
                                                       source: NvmlSource) -> None:
    fake_nvml.set_gpu_count(2)
    fake_nvml.set_gpm(0)  # GPU 1: support 0, like an A100
    g0, g1 = two_readings(source)[1].samples
    assert g0.activity_state is ActivityState.READING
    assert g1.activity_state is ActivityState.UNSUPPORTED
    assert all(getattr(g1, key) is None for key in ACTIVITY_KEYS)
    assert fake_nvml.gpm_sample_gets(1) == 0
    assert "Hopper" in why_empty(g1.activity_state)
    assert g1.pcie_rx_bytes_per_s == 1000 * 1024  # NVML's own PCIe call, as before


def test_a_driver_without_gpm_is_no_driver(fake_nvml_old: FakeNvml) -> None:
    source = NvmlSource(clock=CLOCK)
    try:
        source.open()
        g = source.sample().samples[0]
    finally:
        source.close()
    assert g.activity_state is ActivityState.NO_DRIVER  # NVMLError_FunctionNotFound
    assert all(getattr(g, key) is None for key in ACTIVITY_KEYS)
    assert not g.failed_reads


def test_no_gpm_makes_no_gpm_call(fake_nvml: FakeNvml) -> None:
    fake_nvml.use_scenario("hgx")
    source = NvmlSource(gpm=False, clock=CLOCK)
    try:
        g = two_readings(source)[1].samples[0]
    finally:
        source.close()
    assert g.activity_state is ActivityState.OFF and g.sm_active_pct is None
    assert fake_nvml.gpm_sample_gets(0) == 0 and fake_nvml.gpm_samples_alive() == 0
    assert g.nvlink_rx_bytes_per_s is not None  # the NVLink counters are not GPM


def test_samples_are_freed_on_close(fake_nvml: FakeNvml, source: NvmlSource) -> None:
    fake_nvml.use_scenario("hgx")
    two_readings(source)
    assert fake_nvml.gpm_samples_alive() == 16
    source.close()
    assert fake_nvml.gpm_samples_alive() == 0


def test_a_failed_gpm_call_is_a_failed_read_and_the_next_reading_starts_over(
        fake_nvml: FakeNvml, source: NvmlSource) -> None:
    fake_nvml.set_gpm(0)
    two_readings(source)
    fake_nvml.set_error("nvmlGpmMetricsGet", pynvml.NVML_ERROR_UNKNOWN)
    CLOCK.advance()
    g = source.sample().samples[0]
    assert g.activity_state is ActivityState.FAILED and g.sm_active_pct is None
    assert any("nvmlGpmMetricsGet" in f for f in g.failed_reads)
    assert not g.lost and g.temperature_c is not None  # the GPU itself still answers
    fake_nvml.set_error("nvmlGpmMetricsGet", pynvml.NVML_SUCCESS)
    CLOCK.advance()
    assert source.sample().samples[0].activity_state is ActivityState.READING


def test_a_lost_gpu_starts_gpm_over_when_it_answers_again(fake_nvml: FakeNvml) -> None:
    fake_nvml.set_gpu_count(2)
    fake_nvml.set_gpm(0)
    fake_nvml.set_gpm(1)
    source = NvmlSource(recheck_lost_s=0.0, clock=CLOCK)
    try:
        two_readings(source)
        fake_nvml.set_lost(0)
        CLOCK.advance()
        lost, other = source.sample().samples
        assert lost.lost and other.activity_state is ActivityState.READING
        fake_nvml.set_lost(0, False)
        back = source.sample().samples[0]
        assert not back.lost and back.activity_state is ActivityState.WARMING
        CLOCK.advance()
        assert source.sample().samples[0].activity_state is ActivityState.READING
    finally:
        source.close()


def test_mig_instances_are_read_each_and_the_gpu_says_mig(fake_nvml: FakeNvml,
                                                          source: NvmlSource) -> None:
    fake_nvml.set_name(0, "NVIDIA H100 80GB HBM3")
    fake_nvml.set_gpm(0)
    fake_nvml.set_gpm_metric(0, pynvml.NVML_GPM_METRIC_SM_UTIL, 33.0)
    fake_nvml.set_mig_mode(0, 1)
    fake_nvml.add_mig(0, 0, 1, 0, "3g.40gb", 40 << 30, 1 << 30)
    fake_nvml.add_mig(0, 1, 2, 0, "3g.40gb", 40 << 30, 2 << 30)
    fake_nvml.add_mig(0, 2, 2, 1, "3g.40gb", 40 << 30, 2 << 30)  # a second CI of GI 2
    snap = two_readings(source)[1]
    g = snap.samples[0]
    assert g.activity_state is ActivityState.MIG and g.sm_active_pct is None
    assert [(m.gpu_instance_id, m.activity_state, m.sm_active_pct) for m in snap.migs] == [
        (1, ActivityState.READING, 33.0), (2, ActivityState.READING, 33.0),
        (2, ActivityState.READING, 33.0)]
    gets = fake_nvml.gpm_sample_gets(0)
    CLOCK.advance()
    source.sample()
    assert fake_nvml.gpm_sample_gets(0) - gets == 2  # one per GPU instance, not per CI


def test_gpm_pcie_rates_replace_the_blocking_pcie_call(fake_nvml: FakeNvml,
                                                       source: NvmlSource) -> None:
    """nvmlDeviceGetPcieThroughput sleeps ~20 ms per direction on a real driver: once GPM
    gives the rates it is not called (here it would fail, and say so in failed_reads)."""
    fake_nvml.set_gpm(0)
    two_readings(source)
    fake_nvml.set_error("nvmlDeviceGetPcieThroughput", pynvml.NVML_ERROR_UNKNOWN)
    CLOCK.advance()
    g = source.sample(include_slow=True).samples[0]
    assert not g.failed_reads
    assert (g.pcie_tx_bytes_per_s, g.pcie_rx_bytes_per_s) == (0.70 * MIB, 0.50 * MIB)


def test_every_activity_key_is_read_from_gpm() -> None:
    assert set(ACTIVITY_KEYS) <= set(FIELDS)
