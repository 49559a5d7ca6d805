"""The lesson's reading of how busy a GPU was (``nvml/busy.py``), through the real
nvidia-ml-py against the fake NVML: the H200's figures from GPM's two samples with GPU-Util,
power, cap and clock event reasons as nvidia-smi names them; a GPU without GPM (None, not 0);
an unknown GPU and a driver that does not start; the 0.1 s GPM needs between its samples; and
its own NVML session, ended."""

from __future__ import annotations

import pynvml
import pytest
from fakenvml import FakeNvml

from gpumon.playground.lesson.step_code import BUSY
from gpumon.telemetry.nvml.busy import KEYS, BusyWatch
from gpumon.telemetry.nvml.gpm import MIN_INTERVAL_S

H200_UNDER_BF16 = {"gpu_util_pct": 100, "sm_active_pct": 96.4, "sm_occupancy_pct": 14.3,
                   "tensor_active_pct": 93.6, "dram_active_pct": 16.6, "power_w": 691,
                   "power_limit_w": 700, "clock_events": ["SW power cap"], "gpm": "reading"}


def uuid_of(gpu: int) -> str:
    pynvml.nvmlInit()
    try:
        return str(pynvml.nvmlDeviceGetUUID(pynvml.nvmlDeviceGetHandleByIndex(gpu)))
    finally:
        pynvml.nvmlShutdown()


def test_the_h200_under_a_bf16_product(fake_nvml: FakeNvml) -> None:
    fake_nvml.use_scenario("hgx")  # GPU 0: the H200's own GPM figures under the matmul
    fake_nvml.set_value(0, "util_gpu", 100)
    fake_nvml.set_value(0, "power_mw", 691_000)
    fake_nvml.set_value(0, "limit_mw", 700_000)
    fake_nvml.set_value(0, "clock_events", 0x4)  # nvmlClocksEventReasonSwPowerCap
    uuid = uuid_of(0)
    watch = BusyWatch(uuid.removeprefix("GPU-"))  # as torch spells it
    got = watch.stop()
    assert list(got) == list(KEYS) and got == H200_UNDER_BF16
    assert fake_nvml.gpm_sample_gets(0) == 2  # one sample each side of the work
    assert fake_nvml.gpm_samples_alive() == 0  # freed
    assert fake_nvml.init_count() == 0  # its NVML session ended


def test_two_samples_are_0_1_s_apart_however_soon_it_stops(fake_nvml: FakeNvml) -> None:
    fake_nvml.set_gpm(0)
    now = [100.0]
    slept: list[float] = []

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        now[0] += seconds

    watch = BusyWatch(uuid_of(0), clock=lambda: now[0], sleep=sleep)
    now[0] += 0.02  # the work took 20 ms: stop() waits the rest of 0.1 s, then reads
    got = watch.stop()
    assert slept == [pytest.approx(MIN_INTERVAL_S + 0.01 - 0.02)]
    assert got["gpm"] == "reading" and got["sm_active_pct"] == 0.0
    assert fake_nvml.gpm_sample_gets(0) == 2
    fake_nvml.set_gpm(0)
    later = BusyWatch(uuid_of(0), clock=lambda: now[0], sleep=sleep)
    now[0] += 3.0  # three seconds of work: no wait
    assert later.stop()["gpm"] == "reading" and len(slept) == 1


def test_a_gpu_without_gpm_has_no_activity_not_zero(fake_nvml: FakeNvml) -> None:
    fake_nvml.set_value(0, "util_gpu", 37)
    fake_nvml.set_value(0, "clock_events", 0)
    got = BusyWatch(uuid_of(0)).stop()
    assert got["gpm"] == "unsupported" and got["gpu_util_pct"] == 37
    assert all(got[k] is None for k in KEYS[1:5])
    assert got["clock_events"] == []  # read: none active
    assert fake_nvml.gpm_sample_gets(0) == 0


def test_a_gpu_nvml_does_not_know_and_a_driver_that_does_not_start(
        fake_nvml: FakeNvml) -> None:
    got = BusyWatch("GPU-00000000-0000-0000-0000-00000000dead").stop()
    assert got == {**dict.fromkeys(KEYS), "gpm": "no_nvml"}
    assert fake_nvml.init_count() == 0
    fake_nvml.set_init_error(pynvml.NVML_ERROR_DRIVER_NOT_LOADED)
    assert BusyWatch("GPU-1").stop()["gpm"] == "no_nvml"


def test_a_second_stop_reads_nothing_more(fake_nvml: FakeNvml) -> None:
    fake_nvml.set_gpm(0)
    watch = BusyWatch(uuid_of(0))
    assert watch.stop()["gpm"] == "reading"
    assert watch.stop() == {**dict.fromkeys(KEYS), "gpm": "no_nvml"}


def test_the_lesson_s_code_reads_the_gpu_torch_calls_device(fake_nvml: FakeNvml) -> None:
    """Step 17's code as the lesson shows it, run against the fake's HGX board with a
    stand-in for torch's two CUDA calls (torch here has no CUDA): GPU 3 by its UUID, one
    product per loop turn, each followed by a synchronize."""
    fake_nvml.use_scenario("hgx")
    uuid = uuid_of(3)
    calls: list[str] = []

    class Properties:
        def __init__(self, device: str) -> None:
            self.uuid = uuid.removeprefix("GPU-")  # torch prints it without the prefix
            calls.append(f"properties {device}")

    class Cuda:
        get_device_properties = Properties

        @staticmethod
        def synchronize(device: str) -> None:
            calls.append(f"synchronize {device}")

    class Torch:
        cuda = Cuda

    namespace: dict[str, object] = {"torch": Torch, "device": "cuda:3"}
    exec(BUSY, namespace)  # the lesson's own code
    busy = namespace["busy"]
    products: list[int] = []
    got = busy(lambda: products.append(1), seconds=0.15)  # type: ignore[operator]
    assert calls[0] == "properties cuda:3" and calls[1:] == ["synchronize cuda:3"] * len(products)
    assert products and got["gpm"] == "reading"
    hgx_gpu3 = {key: got[key] for key in KEYS[1:5]}
    assert all(isinstance(v, float) for v in hgx_gpu3.values()), hgx_gpu3
    assert fake_nvml.gpm_sample_gets(3) == 2 and fake_nvml.gpm_sample_gets(0) == 0
