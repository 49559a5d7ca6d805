"""A fake NVML library in C, loaded into the real nvidia-ml-py binding.

``build_fake_nvml(dest_dir)`` compiles ``fakenvml.c`` with gcc against NVIDIA's ``nvml.h``
(from the ``nvidia-nvml-dev`` wheel) and returns the path of the shared library.
``use_fake_nvml(path)`` makes ``pynvml`` use it instead of ``libnvidia-ml.so.1`` for the
duration of a ``with`` block and yields a ``FakeNvml`` to script it. Everything above the C
ABI (the ctypes wrappers, the NVMLError subclasses, FunctionNotFound for symbols the
library lacks) is the real binding.

Tests get it from the fixtures in ``tests/telemetry/conftest.py``. A benchmark can do::

    sys.path.insert(0, str(repo_root / "tests" / "telemetry"))
    from fakenvml import build_fake_nvml, use_fake_nvml

    lib = build_fake_nvml(tmp_dir)
    with use_fake_nvml(lib) as fake:
        fake.set_gpu_count(16)
        source = NvmlSource(); source.open(); source.sample()
"""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pynvml

SOURCE = Path(__file__).with_name("fakenvml.c")
#: The cost profiles of the fake (its ``h200_costs`` table): "none" costs nothing (tests);
#: "h200" spins and sleeps as an H200's driver did (driver 580.159.04), call by call.
PROFILES = ("none", "h200")
#: What the benchmarks that read NVML use unless told otherwise.
BENCH_PROFILE = "h200"


class FakeNvmlUnavailable(RuntimeError):
    """The fake library cannot be built here (no gcc, or no nvml.h); the message says which."""


def find_nvml_header() -> Path | None:
    """nvml.h from the installed ``nvidia-nvml-dev`` wheel (``nvidia/<cuda>/include``)."""
    try:
        import nvidia
    except ImportError:
        return None
    for root in nvidia.__path__:
        for header in sorted(Path(root).glob("*/include/nvml.h")):
            return header
    return None


def build_fake_nvml(dest_dir: Path, *, old_driver: bool = False) -> Path:
    """Compile the fake into ``dest_dir`` and return the library path.

    ``old_driver=True`` leaves out the newer entry points (memory info v2, TemperatureV,
    the ``_v3`` process lists), as an older driver does.
    """
    gcc = shutil.which("gcc")
    if gcc is None:
        raise FakeNvmlUnavailable("gcc is not installed; it is needed to build the fake NVML")
    header = find_nvml_header()
    if header is None:
        raise FakeNvmlUnavailable("nvml.h not found; install the nvidia-nvml-dev package")
    out = Path(dest_dir) / ("libfakenvml_old.so" if old_driver else "libfakenvml.so")
    cmd = [gcc, "-shared", "-fPIC", "-O1", "-Wall", "-Wextra", "-Werror",
           "-pthread", f"-I{header.parent}", "-o", str(out), str(SOURCE)]
    if old_driver:
        cmd.insert(1, "-DFAKE_OLD_DRIVER")
    result = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise FakeNvmlUnavailable(f"building the fake NVML failed:\n{result.stderr}")
    return out


class FakeNvml:
    """Python handle on the fake's scripting functions (the ``fake_*`` exports)."""

    def __init__(self, lib: ctypes.CDLL) -> None:
        self.lib = lib
        lib.fake_set_value.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_ulonglong]
        lib.fake_add_process.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_uint,
                                         ctypes.c_ulonglong]
        lib.fake_set_error.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int]
        lib.fake_device_calls.restype = ctypes.c_longlong
        lib.fake_set_delay.argtypes = [ctypes.c_char_p, ctypes.c_long]
        lib.fake_set_energy.argtypes = [ctypes.c_int, ctypes.c_double]
        lib.fake_add_xid.argtypes = [ctypes.c_int, ctypes.c_ulonglong, ctypes.c_long]
        lib.fake_add_mig.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_uint, ctypes.c_uint,
                                     ctypes.c_char_p, ctypes.c_ulonglong, ctypes.c_ulonglong]
        lib.fake_set_profile.argtypes = [ctypes.c_char_p]
        lib.fake_profile.restype = ctypes.c_char_p

    def reset(self) -> None:
        self.lib.fake_reset()
        self.lib.fake_clear_process_util()

    def set_gpu_count(self, n: int) -> None:
        self.lib.fake_set_gpu_count(n)

    def set_profile(self, name: str) -> None:
        """What each device call costs from now on: one of ``PROFILES`` (``reset`` goes back
        to "none"). "h200": the energy counter spins 3.3 ms of the caller's CPU, process
        utilization 2.8 ms, PCIe throughput sleeps 21 ms a direction, fan speed, the PCIe
        replay counter and the power management limit spin 0.18 ms and are not supported,
        the others spin 2-12 us (the table is in fakenvml.c)."""
        if self.lib.fake_set_profile(name.encode()) != 0:
            raise ValueError(f"no cost profile {name!r} (one of {', '.join(PROFILES)})")

    def profile(self) -> str:
        """The cost profile in use."""
        return str(self.lib.fake_profile().decode())

    def set_init_error(self, code: int) -> None:
        """nvmlInit returns ``code`` (an NVML_ERROR_* value); 0 clears it."""
        self.lib.fake_set_init_error(code)

    def set_lost(self, gpu: int, lost: bool = True) -> None:
        """Every call on this GPU returns NVML_ERROR_GPU_IS_LOST."""
        self.lib.fake_set_lost(gpu, int(lost))

    def set_error(self, func: str, code: int, gpu: int = -1) -> None:
        """NVML function ``func`` (its C name) returns ``code`` on ``gpu`` (-1: every GPU)."""
        if self.lib.fake_set_error(gpu, func.encode(), code) != 0:
            raise ValueError("too many scripted errors")

    def set_unsupported(self, func: str, gpu: int = -1) -> None:
        self.set_error(func, pynvml.NVML_ERROR_NOT_SUPPORTED, gpu)

    def set_value(self, gpu: int, key: str, value: int) -> None:
        """One of: mem_total mem_used mem_reserved util_gpu util_mem temp power_mw limit_mw
        fan sm_clock mem_clock pstate pcie_rx_kb pcie_tx_kb enc dec persistence compute_mode
        clock_events ecc_mode ecc_sbe_vol ecc_dbe_vol ecc_sbe_agg ecc_dbe_agg remap_corr
        remap_unc remap_pending remap_failure retired_sbe retired_dbe retired_pending
        pcie_replay mem_temp display_active (retired_*: that many pages; power_mw also sets
        how fast the energy counter grows from now on)."""
        if self.lib.fake_set_value(gpu, key.encode(), value) != 0:
            raise KeyError(key)

    def set_name(self, gpu: int, name: str | bytes) -> None:
        """The GPU's name; bytes go to the binding as they are (not valid UTF-8, say)."""
        self.lib.fake_set_name(gpu, name if isinstance(name, bytes) else name.encode())

    def set_driver_version(self, driver: str, nvml: str) -> None:
        self.lib.fake_set_driver_version(driver.encode(), nvml.encode())

    def set_cuda_version(self, version: int) -> None:
        self.lib.fake_set_cuda_version(version)

    def add_process(self, gpu: int, pid: int, used_bytes: int, graphics: bool = False) -> None:
        """A process in the compute (or graphics) list; used_bytes may be NOT_AVAILABLE."""
        if self.lib.fake_add_process(gpu, int(graphics), pid, used_bytes) != 0:
            raise ValueError("too many processes")

    def set_delay(self, func: str, ms: int) -> None:
        """``func`` (its C name; "nvmlInit" for both inits; "*" every function) sleeps ``ms``
        ms per call; ``ms`` < 0: it hangs until ``set_delay("", 0)`` lets it return."""
        self.lib.fake_set_delay(func.encode(), ms)

    def set_mig_mode(self, gpu: int, mode: int) -> None:
        """MIG mode of ``gpu``: 1 enabled, 0 disabled (default), -1 not supported."""
        self.lib.fake_set_mig_mode(gpu, mode)

    def add_mig(self, gpu: int, slot: int, gi: int, ci: int, profile: str, total: int,
                used: int) -> None:
        """A MIG device in ``slot`` (0-6) of ``gpu``, named "<GPU name> MIG <profile>"."""
        if self.lib.fake_add_mig(gpu, slot, gi, ci, profile.encode(), total, used) != 0:
            raise ValueError("no such GPU or MIG slot")

    def set_energy(self, gpu: int, millijoules: float) -> None:
        """The energy counter of ``gpu`` (mJ); it grows by the power drawn from now on."""
        self.lib.fake_set_energy(gpu, millijoules)

    def add_xid(self, gpu: int, code: int, after_ms: int = 0) -> None:
        """An XID error ``code`` on ``gpu``, due ``after_ms`` from now: a waiting event set
        that registered XID events for that GPU receives it."""
        if self.lib.fake_add_xid(gpu, code, after_ms) != 0:
            raise ValueError("too many XID events")

    def xids_delivered(self) -> int:
        """XID events handed to an event set so far."""
        return int(self.lib.fake_xids_delivered())

    def clear_processes(self) -> None:
        self.lib.fake_clear_processes()

    def add_process_util(self, gpu: int, pid: int, timestamp_us: int, sm: int, mem: int = 0,
                         enc: int = 0, dec: int = 0) -> None:
        """A per-process utilization sample the driver holds (nvmlDeviceGetProcessUtilization
        returns those newer than the caller's last-seen timestamp, in microseconds)."""
        fn = self.lib.fake_add_process_util
        fn.argtypes = [ctypes.c_int, ctypes.c_uint, ctypes.c_ulonglong, ctypes.c_uint,
                       ctypes.c_uint, ctypes.c_uint, ctypes.c_uint]
        if fn(gpu, pid, timestamp_us, sm, mem, enc, dec) != 0:
            raise ValueError("too many utilization samples")

    def util_last_seen(self, gpu: int) -> int:
        """The lastSeenTimeStamp the latest nvmlDeviceGetProcessUtilization call passed."""
        self.lib.fake_util_last_seen.restype = ctypes.c_ulonglong
        return int(self.lib.fake_util_last_seen(gpu))

    def util_calls(self, gpu: int) -> int:
        """How many nvmlDeviceGetProcessUtilization calls reached this GPU."""
        self.lib.fake_util_calls.restype = ctypes.c_longlong
        return int(self.lib.fake_util_calls(gpu))

    def device_calls(self, gpu: int) -> int:
        """How many NVML calls reached this GPU since the last reset."""
        return int(self.lib.fake_device_calls(gpu))

    def init_count(self) -> int:
        """nvmlInit calls not yet matched by nvmlShutdown."""
        return int(self.lib.fake_init_count())

    # --- GPM, NVLink, topology (fakenvml_interconnect.c) -------------------------------------

    def use_scenario(self, name: str) -> None:
        """"hgx": 8 H200s with GPM, each with 18 NVLinks to four NVSwitches, two sockets;
        "gpm": GPM on every GPU (FAKENVML_SCENARIO does the same in a child process)."""
        if self.lib.fake_use_scenario(name.encode()) != 0:
            raise ValueError(f"no scenario {name!r}")

    def set_gpm(self, gpu: int, supported: bool = True) -> None:
        """GPM on ``gpu`` (Hopper or newer) or not: on, every metric answers, idle."""
        self.lib.fake_set_gpm(gpu, int(supported))

    def set_gpm_metric(self, gpu: int, metric_id: int, value: float,
                       ret: int = pynvml.NVML_SUCCESS) -> None:
        """One GPM metric of ``gpu`` (NVML_GPM_METRIC_*): its value (nan allowed) and its own
        nvmlReturn."""
        fn = self.lib.fake_set_gpm_metric
        fn.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_double, ctypes.c_int]
        if fn(gpu, metric_id, value, ret) != 0:
            raise ValueError("no such GPU or metric")

    def gpm_samples_alive(self) -> int:
        """GPM sample buffers allocated and not freed since the last reset."""
        return int(self.lib.fake_gpm_samples_alive())

    def gpm_sample_gets(self, gpu: int) -> int:
        """nvmlGpmSampleGet and nvmlGpmMigSampleGet calls that stamped a sample of ``gpu``."""
        self.lib.fake_gpm_sample_gets.restype = ctypes.c_longlong
        return int(self.lib.fake_gpm_sample_gets(gpu))

    def set_nvlink(self, gpu: int, link: int, remote_bus_id: str,
                   remote_type: int = pynvml.NVML_NVLINK_DEVICE_TYPE_SWITCH,
                   rx_kib_s: float = 0.0, tx_kib_s: float = 0.0, active: bool = True) -> None:
        """NVLink ``link`` of ``gpu``: its remote (a GPU or an NVSwitch, by PCI bus id) and
        the KiB/s its data counters (fields 138/139) grow by from now on."""
        fn = self.lib.fake_set_nvlink
        fn.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                       ctypes.c_char_p, ctypes.c_double, ctypes.c_double]
        if fn(gpu, link, int(active), remote_type, remote_bus_id.encode(), rx_kib_s,
              tx_kib_s) != 0:
            raise ValueError("no such GPU or link")

    def set_topology(self, a: int, b: int, level: int,
                     p2p: int = pynvml.NVML_P2P_STATUS_OK) -> None:
        """The PCIe path between GPUs ``a`` and ``b`` (NVML_TOPOLOGY_*) and their P2P read
        status; once one pair is set, the others are SYSTEM and not supported."""
        if self.lib.fake_set_topology(a, b, level, p2p) != 0:
            raise ValueError("no such GPU")

    def set_affinity(self, gpu: int, node: int, cpus: str = "", numa_id: int = -1) -> None:
        """``gpu``'s NUMA node, its CPUs ("0-47,96-143"; "": the node's 16) and its own NUMA
        id (-1: not supported, as on a system whose GPU memory is not host memory)."""
        fn = self.lib.fake_set_affinity
        fn.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_char_p, ctypes.c_int]
        if fn(gpu, node, cpus.encode(), numa_id) != 0:
            raise ValueError("no such GPU or a bad CPU list")


def fake_driver_env(lib: Path, dest_dir: Path, **script: str) -> dict[str, str]:
    """Environment for a child process whose pynvml loads ``lib`` as libnvidia-ml.so.1.

    ``script`` keys become FAKENVML_* variables (gpus="8", delay="nvmlInit=3000",
    hang_file=..., scenario="hgx", profile="h200"): see fakenvml.c. gpustat and nvitop load
    the library the same way.
    """
    driver_dir = Path(dest_dir) / "fake-driver"
    driver_dir.mkdir(exist_ok=True)
    link = driver_dir / "libnvidia-ml.so.1"
    if not link.exists():
        link.symlink_to(Path(lib).resolve())
    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = os.pathsep.join(
        p for p in (str(driver_dir), env.get("LD_LIBRARY_PATH", "")) if p)
    for key, value in script.items():
        env[f"FAKENVML_{key.upper()}"] = value
    return env


@contextmanager
def use_fake_nvml(path: Path) -> Iterator[FakeNvml]:
    """Make pynvml call the fake library at ``path``; restore the binding's state after.

    The binding keeps the loaded library in ``pynvml.nvmlLib`` (loaded on first nvmlInit)
    and caches function pointers by name; both are swapped in and restored under its lock.
    """
    lib = ctypes.CDLL(str(path))
    fake = FakeNvml(lib)
    fake.reset()
    cache = pynvml._nvmlGetFunctionPointer_cache
    with pynvml.libLoadLock:
        saved = (pynvml.nvmlLib, dict(cache), pynvml._nvmlLib_refcount)
        pynvml.nvmlLib = lib
        pynvml._nvmlLib_refcount = 0
        cache.clear()
    try:
        yield fake
    finally:
        with pynvml.libLoadLock:
            pynvml.nvmlLib, old_cache, pynvml._nvmlLib_refcount = saved
            cache.clear()
            cache.update(old_cache)
