"""The exporter when the driver is in trouble, on the fake NVML library: a call that hangs, a
slow driver, a lost GPU, no driver. Scrapes never wait on the driver; stale values are never
sent as fresh; everything comes back when the driver answers again."""

from __future__ import annotations

import logging
import threading
import time

import pynvml
import pytest
from exporter_helpers import running
from fakenvml import FakeNvml
from testkit import wait_until

from gpumon.telemetry.nvml.source import NvmlSource

GPU_SERIES = "DCGM_FI_DEV_GPU_UTIL"
LAST_READ = "gpumon_gpu_last_read_timestamp_seconds"


def test_a_hung_call_is_reported_without_gpu_values_then_everything_comes_back(
        fake_nvml: FakeNvml) -> None:
    fake_nvml.set_gpu_count(2)
    with running(NvmlSource, interval_s=0.1, read_timeout_s=0.5) as ex:
        wait_until(lambda: ex.get("/health")[0] == 200, 10, "the first reading")
        assert len(ex.families()[GPU_SERIES]) == 2
        fake_nvml.set_delay("nvmlDeviceGetUtilizationRates", -1)  # the next call hangs
        wait_until(lambda: ex.get("/health")[0] == 503, 5, "/health to say 503")
        status, reason = ex.get("/health")
        assert reason.decode() == (
            "the GPU driver has not answered for 0.5 s (a driver call hangs)\n")
        threads = threading.active_count()
        for _ in range(50):  # answered at all: a scrape that waited for the call never would
            families = ex.families()
            assert families["gpumon_nvml_up"] == [({"hostname": "h"}, 0.0)]
            assert not any(name.startswith("DCGM_") for name in families)  # dropped
            assert "gpumon_gpu_lost" not in families
            assert {labels["gpu"] for labels, _ in families[LAST_READ]} == {"0", "1"}
        assert threading.active_count() <= threads  # no thread left waiting per scrape
        stale = dict((labels["gpu"], v) for labels, v in ex.families()[LAST_READ])
        fake_nvml.set_delay("", 0)  # the call returns
        wait_until(lambda: ex.get("/health")[0] == 200, 5, "the driver to answer again")
        families = ex.families()
        assert families["gpumon_nvml_up"] == [({"hostname": "h"}, 1.0)]
        assert len(families[GPU_SERIES]) == 2
        assert all(v > stale[labels["gpu"]] for labels, v in families[LAST_READ])


def test_the_read_timeout_is_only_for_a_call_that_stands_still(fake_nvml: FakeNvml) -> None:
    """200 ms per driver call on 8 GPUs: a reading takes many seconds, every scrape answers
    from the last reading (how soon: benchmarks/bench_exporter.py, slow driver), and the
    driver is not called stuck."""
    fake_nvml.set_gpu_count(8)
    with running(NvmlSource, interval_s=0.1, read_timeout_s=0.5) as ex:
        wait_until(lambda: ex.get("/health")[0] == 200, 10, "the first reading")
        fake_nvml.set_delay("*", 200)
        readings = ex.reader.readings
        try:
            for _ in range(8):  # 1.6 s: longer than the read timeout, shorter than a reading
                families = ex.families()
                assert families["gpumon_nvml_up"][0][1] == 1.0
                assert len(families[GPU_SERIES]) == 8
                time.sleep(0.2)
            # a reading now takes seconds: the 8 scrapes waited for none of them
            assert ex.reader.readings <= readings + 1
        finally:
            fake_nvml.set_delay("", 0)


def test_a_lost_gpu_is_reported_lost_while_the_others_keep_their_series(
        fake_nvml: FakeNvml) -> None:
    fake_nvml.set_gpu_count(3)
    with running(NvmlSource) as ex:
        wait_until(lambda: ex.get("/health")[0] == 200, 10, "the first reading")
        fake_nvml.set_lost(1)

        def lost() -> bool:
            return dict((la["gpu"], v) for la, v in ex.families()["gpumon_gpu_lost"]) == {
                "0": 0.0, "1": 1.0, "2": 0.0}
        wait_until(lost, 5, "GPU 1 to be reported lost")
        families = ex.families()
        assert sorted(la["gpu"] for la, _ in families[GPU_SERIES]) == ["0", "2"]
        assert families["gpumon_nvml_up"][0][1] == 1.0
        assert ex.get("/health") == (200, b"ok: 2 of 3 GPUs answer, 1 lost\n")
        fake_nvml.set_lost(0)
        fake_nvml.set_lost(2)
        wait_until(lambda: ex.get("/health")[0] == 503, 5, "every GPU lost")
        assert ex.get("/health")[1] == b"every GPU is lost (3 of 3)\n"


def test_no_driver_is_up_0_and_503_logged_once_then_the_driver_appears(
        fake_nvml: FakeNvml, caplog: pytest.LogCaptureFixture) -> None:
    fake_nvml.set_init_error(pynvml.NVML_ERROR_DRIVER_NOT_LOADED)
    with caplog.at_level(logging.WARNING, "gpumon.telemetry.exporter.reader"), \
            running(NvmlSource, interval_s=0.1) as ex:
        wait_until(lambda: ex.reader.readings >= 3, 10, "three readings")
        status, reason = ex.get("/health")
        assert status == 503 and b"driver is installed but not running" in reason
        families = ex.families()
        assert families["gpumon_nvml_up"] == [({"hostname": "h"}, 0.0)]
        assert set(families) == {"gpumon_nvml_up"}
        warnings = [r.getMessage() for r in caplog.records]
        assert len(warnings) == 1 and "driver is installed but not running" in warnings[0]
        fake_nvml.set_init_error(0)
        wait_until(lambda: ex.get("/health")[0] == 200, 5, "the driver to appear")
        assert len(ex.families()[GPU_SERIES]) == 1


def test_before_the_first_reading_health_says_starting(fake_nvml: FakeNvml) -> None:
    fake_nvml.set_delay("nvmlInit", -1)  # nvmlInit hangs until it is let go below
    with running(NvmlSource, read_timeout_s=10.0) as ex:
        try:
            assert ex.get("/health") == (503, b"starting: the GPUs have not been read yet\n")
            assert set(ex.families()) == {"gpumon_nvml_up"}
        finally:
            fake_nvml.set_delay("", 0)
        wait_until(lambda: ex.get("/health")[0] == 200, 10, "the first reading")


def test_one_render_per_reading_whatever_the_scrapers(fake_nvml: FakeNvml) -> None:
    with running(NvmlSource, interval_s=60.0) as ex:
        wait_until(lambda: ex.get("/health")[0] == 200, 10, "the first reading")
        page = ex.pages.current
        bodies = {ex.get("/metrics")[1] for _ in range(20)}
        assert len(bodies) == 1 and page.renders == 1 and ex.reader.readings == 1
