"""The fake NVML's cost profiles: "none" (the default) costs nothing, "h200" costs what an
H200's driver did, call by call (the benchmarks read NVML through it).

Only lower bounds on what a call costs are asserted: a spin of the calling thread's CPU
clock is guaranteed to last at least that long, however busy the machine is.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pynvml
import pytest
from fakenvml import PROFILES, FakeNvml, fake_driver_env


def _cpu_and_wall(fn: object, *args: object) -> tuple[float, float]:
    t0, c0 = time.perf_counter(), time.thread_time()
    fn(*args)  # type: ignore[operator]
    return time.thread_time() - c0, time.perf_counter() - t0


def test_the_default_profile_is_none_and_every_call_is_supported(fake_nvml: FakeNvml) -> None:
    assert fake_nvml.profile() == "none"
    pynvml.nvmlInit()
    try:
        h = pynvml.nvmlDeviceGetHandleByIndex(0)
        assert pynvml.nvmlDeviceGetFanSpeed(h) == 30
        assert pynvml.nvmlDeviceGetPcieReplayCounter(h) == 0
        assert pynvml.nvmlDeviceGetPowerManagementLimit(h) == 300000
    finally:
        pynvml.nvmlShutdown()


def test_the_h200_profile_spins_the_callers_cpu_and_sleeps_for_pcie(
        fake_nvml: FakeNvml) -> None:
    fake_nvml.set_profile("h200")
    pynvml.nvmlInit()
    try:
        h = pynvml.nvmlDeviceGetHandleByIndex(0)
        cpu, wall = _cpu_and_wall(pynvml.nvmlDeviceGetTotalEnergyConsumption, h)
        assert cpu >= 3.28e-3 and wall >= 3.28e-3
        cpu, _ = _cpu_and_wall(pynvml.nvmlDeviceGetMemoryInfo, h)
        assert cpu >= 10e-6
        # PCIe throughput: NVML samples the link for 20 ms, asleep (wall time, not CPU)
        cpu, wall = _cpu_and_wall(pynvml.nvmlDeviceGetPcieThroughput, h,
                                  pynvml.NVML_PCIE_UTIL_TX_BYTES)
        assert wall >= 21.1e-3 and cpu < wall / 2
        # process utilization costs its 2.8 ms even when there is no sample (NotFound)
        c0 = time.thread_time()
        with pytest.raises(pynvml.NVMLError_NotFound):
            pynvml.nvmlDeviceGetProcessUtilization(h, 0)
        assert time.thread_time() - c0 >= 2.78e-3
        # what an H200 does not support costs 0.18 ms to be told so
        for fn in (pynvml.nvmlDeviceGetFanSpeed, pynvml.nvmlDeviceGetPcieReplayCounter,
                   pynvml.nvmlDeviceGetPowerManagementLimit):
            c0 = time.thread_time()
            with pytest.raises(pynvml.NVMLError_NotSupported):
                fn(h)
            assert time.thread_time() - c0 >= 0.18e-3
    finally:
        pynvml.nvmlShutdown()
    fake_nvml.reset()
    assert fake_nvml.profile() == "none"


def test_an_unknown_profile_is_refused(fake_nvml: FakeNvml) -> None:
    assert PROFILES == ("none", "h200")
    with pytest.raises(ValueError, match="no cost profile 'h100'"):
        fake_nvml.set_profile("h100")
    assert fake_nvml.profile() == "none"


def test_a_child_process_takes_the_profile_from_its_environment(
        fake_nvml_lib: Path, tmp_path: Path) -> None:
    """gpustat, nvitop and gpumon's own processes in the benchmarks load the fake as
    libnvidia-ml.so.1 and get the profile from FAKENVML_PROFILE."""
    code = ("import pynvml; pynvml.nvmlInit(); h = pynvml.nvmlDeviceGetHandleByIndex(0)\n"
            "try:\n    pynvml.nvmlDeviceGetFanSpeed(h); print('supported')\n"
            "except pynvml.NVMLError_NotSupported:\n    print('not supported')\n")
    for profile, said in (("h200", "not supported"), ("none", "supported")):
        env = fake_driver_env(fake_nvml_lib, tmp_path, profile=profile)
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                             text=True, timeout=60, check=True)
        assert out.stdout.strip() == said, out.stderr
