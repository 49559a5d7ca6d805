"""NvmlSource: live readings of NVIDIA GPUs through NVML (the nvidia-ml-py binding).

This is the only module in gpumon that imports ``pynvml``. Every NVML call goes through one
guarded helper, ``NvmlSource._call``: "not supported" becomes None (shown as N/A), a
function the driver lacks is logged once and never called again, and an error that means
the GPU stopped answering marks only that GPU as lost while the others keep updating.
"""

from __future__ import annotations

import dataclasses
import logging
import operator
import socket
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar, cast

import pynvml

from gpumon.i18n import N_, ntr, tr
from gpumon.telemetry.procinfo import ProcInfoCache
from gpumon.telemetry.types import (
    GpuInfo,
    GpuProcess,
    GpuSample,
    MachineInfo,
    MigSample,
    ProcessType,
    Snapshot,
    SourceState,
    SourceStatus,
)

log = logging.getLogger(__name__)
T = TypeVar("T")

LIBRARY_NAME = "nvml.dll" if sys.platform.startswith("win") else "libnvidia-ml.so.1"
NOT_AVAILABLE = 0xFFFFFFFFFFFFFFFF  # NVML_VALUE_NOT_AVAILABLE as an unsigned long long
SIMULATE_HINT = N_("or run gpumon with --simulate N to see simulated GPUs")

# Errors after which a GPU is treated as gone until a re-check says otherwise. Any other error
# (an "unknown error" included) only makes that one field N/A for the tick, unless every read
# of the GPU failed (_every_read_failed).
_LOST_WORDS: dict[int, str] = {
    pynvml.NVML_ERROR_GPU_IS_LOST: N_("The GPU stopped answering (NVML: GPU is lost). It may "
                                      "have fallen off the PCIe bus or overheated; a reboot is "
                                      "usually needed."),
    pynvml.NVML_ERROR_RESET_REQUIRED: N_("The GPU needs a reset before it can be used again "
                                         "(NVML: GPU requires reset)."),
}
_COMPUTE_MODES = {0: "Default", 1: "Exclusive Thread", 2: "Prohibited", 3: "Exclusive Process"}
# Read only when sample(include_slow=True); otherwise the last reading is reused. PCIe is here
# because NVML measures it over a ~20 ms window per call: two calls per GPU every tick would
# stall the sampler (16 GPUs: ~0.6 s per tick).
_SLOW_FIELDS = ("persistence_mode", "compute_mode", "power_limit_w", "pstate",
                "pcie_rx_bytes_per_s", "pcie_tx_bytes_per_s")


class _GpuLost(Exception):
    """Raised by the guarded helper when a device call says the GPU is gone."""

    def __init__(self, code: int, words: str = "") -> None:
        words = words or tr(_LOST_WORDS[code])
        super().__init__(words)
        self.message = words


@dataclass
class _Gpu:
    """What NvmlSource keeps per GPU between ticks."""

    index: int
    handle: Any
    info: GpuInfo
    lost_message: str = ""
    recheck_at: float = 0.0  # time.monotonic() of the next cheap re-check while lost
    mem_v2: bool = True  # nvmlDeviceGetMemoryInfo_v2 works on this GPU
    last: GpuSample | None = None
    mig: bool = False  # in MIG mode (read at open: changing it needs a GPU reset)
    mig_devices: list[tuple[Any, MigSample]] | None = None  # found on the last slow tick


_INIT_ERRORS: dict[int, tuple[SourceState, str, str]] = {
    pynvml.NVML_ERROR_LIBRARY_NOT_FOUND: (
        SourceState.LIBRARY_NOT_FOUND,
        N_("No NVIDIA driver was found on this computer ({library} could not be loaded)."),
        N_("Install the NVIDIA driver, {simulate_hint}.")),
    pynvml.NVML_ERROR_DRIVER_NOT_LOADED: (
        SourceState.DRIVER_NOT_LOADED,
        N_("The NVIDIA driver is installed but not running."),
        N_("Reboot, or load it with 'sudo modprobe nvidia'; 'nvidia-smi' and 'dmesg' tell why "
           "it did not start, {simulate_hint}.")),
    pynvml.NVML_ERROR_LIB_RM_VERSION_MISMATCH: (
        SourceState.VERSION_MISMATCH,
        N_("The NVIDIA driver that is running does not match the installed NVIDIA library "
           "(driver/library version mismatch)."),
        N_("This usually follows a driver update: reboot so that the new driver is loaded.")),
    pynvml.NVML_ERROR_NO_PERMISSION: (
        SourceState.NO_PERMISSION,
        N_("gpumon is not allowed to talk to the NVIDIA driver (insufficient permissions)."),
        N_("Check that your user may open /dev/nvidia* (often the 'video' group), or that the "
           "container was given the GPUs.")),
}


def init_error_status(err: Exception) -> SourceStatus:
    """The SourceStatus for an error raised by nvmlInit, in words a person understands."""
    code = getattr(err, "value", None)
    known = _INIT_ERRORS.get(code) if isinstance(code, int) else None
    hint = tr(SIMULATE_HINT)
    if known is not None:
        state, message, advice = known
        return SourceStatus(state, tr(message, library=LIBRARY_NAME),
                            tr(advice, simulate_hint=hint))
    return SourceStatus(SourceState.ERROR, tr("NVML could not start: {error}.", error=err),
                        tr("Check that 'nvidia-smi' works, {simulate_hint}.", simulate_hint=hint))


def cuda_version_text(version: int | None) -> str | None:
    """NVML's integer CUDA driver version (12040) as people write it ("12.4")."""
    if version is None or version <= 0:
        return None
    return f"{version // 1000}.{version % 1000 // 10}"


def pstate_text(value: int | None) -> str | None:
    """P-state number as "P0".."P15"; NVML's 32 means unknown."""
    return None if value is None or not 0 <= value <= 15 else f"P{value}"


class NvmlSource:
    """The real GPUs, read through NVML. Plain blocking calls; callers choose the thread."""

    def __init__(self, recheck_lost_s: float = 5.0) -> None:
        self.recheck_lost_s = recheck_lost_s
        self._lock = threading.RLock()
        self._status = SourceStatus(SourceState.CLOSED, tr("The NVML source has not been opened."))
        self._machine = MachineInfo(host_name=socket.gethostname(), source_name="NVML")
        self._gpus: list[_Gpu] = []
        self._initialized = False
        self._missing: set[str] = set()  # functions this driver lacks
        self._logged: set[tuple[str, int]] = set()
        self._last_error: int | None = None
        self._failed: list[str] = []  # "name: error" of the calls that failed on this GPU's tick
        self._procs = ProcInfoCache()

    # --- the one guarded helper -------------------------------------------------------------

    def _call(self, fn: Callable[..., T], *args: Any, name: str | None = None) -> T | None:
        """Call an NVML function; None when not supported or missing, _GpuLost when lost."""
        # The name is looked up only when a function has gone missing or failed: on the
        # common path it cost ~0.1 us per call, a tenth of a 1-GPU tick's overhead.
        if self._missing and (name or fn.__name__) in self._missing:
            return None
        try:
            return fn(*args)
        except (pynvml.NVMLError_NotSupported, pynvml.NVMLError_NotFound):
            return None  # NotFound: no such thing (an empty MIG slot, say)
        except UnicodeDecodeError as err:  # the binding decodes strict UTF-8 (a GPU name)
            return cast(T, bytes(err.object).decode("utf-8", errors="replace"))
        except pynvml.NVMLError_FunctionNotFound:
            name = name or fn.__name__
            self._missing.add(name)
            log.info("NVML function %s is not in this driver; gpumon will not call it again",
                     name)
            return None
        except pynvml.NVMLError as err:
            self._last_error = err.value
            if err.value in _LOST_WORDS:
                raise _GpuLost(err.value) from err
            name = name or fn.__name__
            self._failed.append(f"{name}: {err}")
            if (name, err.value) not in self._logged:
                self._logged.add((name, err.value))
                log.warning("NVML %s failed: %s", name, err)
            return None

    def _first(self, fns: Sequence[Callable[..., T]], *args: Any) -> T | None:
        """The first of several versions of a function that this driver has."""
        for fn in fns:
            value = self._call(fn, *args)
            if value is not None or fn.__name__ not in self._missing:
                return value
        return None

    # --- Source protocol ---------------------------------------------------------------------

    def open(self) -> SourceStatus:
        """Initialise NVML and cache device handles; never raises."""
        with self._lock:
            self.close()
            try:
                pynvml.nvmlInit()
            except Exception as err:  # NVMLError, or anything odd from loading the library
                self._status = init_error_status(err)
                log.info("NVML unavailable: %s", self._status.message)
                return self._status
            self._initialized = True
            try:
                count = pynvml.nvmlDeviceGetCount()
                self._machine = self._read_machine()
                self._gpus = [self._open_gpu(i) for i in range(count)]
            except Exception as err:
                self.close()
                self._status = SourceStatus(
                    SourceState.ERROR,
                    tr("NVML started but could not list the GPUs: {error}.", error=err),
                    tr("Check that 'nvidia-smi' works."))
                return self._status
            self._status = self._open_status()
            return self._status

    def machine(self) -> MachineInfo:
        return self._machine

    def gpus(self) -> list[GpuInfo]:
        with self._lock:
            return [g.info for g in self._gpus]

    def status(self) -> SourceStatus:
        return self._status

    def sample(self, include_slow: bool = True) -> Snapshot:
        """Read all GPUs and their processes; never raises."""
        with self._lock:
            start = time.perf_counter()
            now = time.time()
            samples: list[GpuSample] = []
            raw: list[tuple[int, int, ProcessType, int | None]] = []
            migs: list[MigSample] = []
            for g in self._gpus:
                samples.append(self._sample_gpu(g, include_slow, raw))
                if g.mig and not samples[-1].lost:
                    migs += self._read_migs(g, include_slow)
            return Snapshot(
                timestamp_s=now,
                machine=self._machine,
                status=self._status,
                gpus=tuple([g.info for g in self._gpus]),  # a list is ~0.5 us faster
                samples=tuple(samples),
                processes=self._describe(raw, verify=include_slow),
                read_duration_s=time.perf_counter() - start,
                migs=tuple(migs),
            )

    def close(self) -> None:
        """Shut NVML down (once) and forget handles. open() may be called again."""
        with self._lock:
            if self._initialized:
                self._initialized = False
                try:
                    pynvml.nvmlShutdown()
                except pynvml.NVMLError as err:
                    log.debug("nvmlShutdown failed: %s", err)
                self._status = SourceStatus(SourceState.CLOSED, tr("The NVML source is closed."))
            self._gpus = []
            self._procs.clear()

    # --- opening -----------------------------------------------------------------------------

    def _system(self, fn: Callable[[], T]) -> T | None:
        try:
            return self._call(fn)
        except _GpuLost:  # an "unknown error" from a system call concerns no GPU
            return None

    def _read_machine(self) -> MachineInfo:
        return MachineInfo(
            host_name=socket.gethostname(),
            source_name="NVML",
            driver_version=self._system(pynvml.nvmlSystemGetDriverVersion),
            cuda_driver_version=cuda_version_text(
                self._system(pynvml.nvmlSystemGetCudaDriverVersion)),
            nvml_version=self._system(pynvml.nvmlSystemGetNVMLVersion),
        )

    def _open_gpu(self, index: int) -> _Gpu:
        unknown = GpuInfo(index=index, name="Unknown GPU", uuid="", pci_bus_id="")
        self._last_error = None
        try:
            handle = self._call(pynvml.nvmlDeviceGetHandleByIndex, index)
            if handle is None:
                why = "gpumon may not read this GPU (NVML gave no handle for it)."
                if self._last_error == pynvml.NVML_ERROR_NO_PERMISSION:
                    why = "gpumon is not allowed to read this GPU (insufficient permissions)."
                return _Gpu(index, None, unknown, lost_message=why, recheck_at=float("inf"))
            gpu = _Gpu(index, handle, unknown)
            gpu.info = self._read_info(gpu)
            mode = self._call(pynvml.nvmlDeviceGetMigMode, handle)
            gpu.mig = mode is not None and mode[0] == pynvml.NVML_DEVICE_MIG_ENABLE
        except _GpuLost as lost:
            return _Gpu(index, None, unknown, lost_message=lost.message,
                        recheck_at=time.monotonic() + self.recheck_lost_s)
        return gpu

    def _read_info(self, g: _Gpu) -> GpuInfo:
        pci = self._call(pynvml.nvmlDeviceGetPciInfo_v3, g.handle)
        mem = self._memory(g)
        return GpuInfo(
            index=g.index,
            name=self._call(pynvml.nvmlDeviceGetName, g.handle) or "Unknown GPU",
            uuid=self._call(pynvml.nvmlDeviceGetUUID, g.handle) or "",
            pci_bus_id=pci.busId if pci is not None else "",
            mem_total_bytes=None if mem is None else mem.total,
        )

    def _open_status(self) -> SourceStatus:
        n = len(self._gpus)
        if n == 0:
            return SourceStatus(
                SourceState.NO_GPUS, tr("The NVIDIA driver is running but reports no GPUs."),
                tr("Check that the GPU is seated and powered; in a container, pass the GPUs "
                   "through (e.g. 'docker run --gpus all'), {simulate_hint}.",
                   simulate_hint=tr(SIMULATE_HINT)))
        if all(g.handle is None for g in self._gpus) and (
                self._last_error == pynvml.NVML_ERROR_NO_PERMISSION):
            return SourceStatus(
                SourceState.NO_PERMISSION,
                tr("gpumon is not allowed to read any of the GPUs (insufficient permissions)."),
                tr("Check that your user may open /dev/nvidia*, or that the container was "
                   "given the GPUs."))
        m = self._machine
        stack = ", ".join(p for p in (
            m.driver_version and tr("driver {version}", version=m.driver_version),
            m.cuda_driver_version and f"CUDA {m.cuda_driver_version}") if p)
        if stack:
            return SourceStatus(SourceState.OK, ntr("NVML sees {n} GPU ({stack}).",
                                                    "NVML sees {n} GPUs ({stack}).", n,
                                                    stack=stack))
        return SourceStatus(SourceState.OK, ntr("NVML sees {n} GPU.", "NVML sees {n} GPUs.", n))

    # --- sampling ----------------------------------------------------------------------------

    def _sample_gpu(self, g: _Gpu, include_slow: bool,
                    raw: list[tuple[int, int, ProcessType, int | None]]) -> GpuSample:
        if g.lost_message and not self._recheck(g):
            return GpuSample(index=g.index, timestamp_s=time.time(), lost=True,
                             message=g.lost_message)
        self._failed = []
        try:
            procs, listed = self._read_processes(g)
            sample = self._read_sample(g, include_slow, listed)
            if self._failed:
                if _every_read_failed(sample):
                    raise _GpuLost(0, tr("The GPU stopped answering: every NVML read of it "
                                         "failed ({error}).",
                                         error=self._failed[-1].split(': ', 1)[-1]))
                sample = dataclasses.replace(sample, failed_reads=tuple(self._failed))
        except _GpuLost as lost:
            log.warning("GPU %d (%s): %s", g.index, g.info.uuid, lost.message)
            g.lost_message = lost.message
            g.recheck_at = time.monotonic() + self.recheck_lost_s
            return GpuSample(index=g.index, timestamp_s=time.time(), lost=True,
                             message=lost.message)
        except Exception as err:  # a bug or an odd binding; keep the other GPUs going
            if ("_sample", g.index) not in self._logged:
                self._logged.add(("_sample", g.index))
                log.exception("GPU %d could not be read", g.index)
            return GpuSample(index=g.index, timestamp_s=time.time(), lost=True,
                             message=tr("gpumon could not read this GPU: {error}", error=err))
        g.last = sample
        raw.extend((g.index, pid, kind, mem) for pid, (kind, mem) in procs.items())
        return sample

    def _recheck(self, g: _Gpu) -> bool:
        """Cheap test whether a lost GPU answers again; at most once per recheck_lost_s."""
        now = time.monotonic()
        if now < g.recheck_at:
            return False
        g.recheck_at = now + self.recheck_lost_s
        try:
            handle = self._call(pynvml.nvmlDeviceGetHandleByIndex, g.index)
            uuid = None if handle is None else self._call(pynvml.nvmlDeviceGetUUID, handle)
        except _GpuLost:
            return False
        if uuid is None or (g.info.uuid and uuid != g.info.uuid):
            return False
        g.handle, g.lost_message, g.last = handle, "", None
        if not g.info.uuid:
            try:
                g.info = self._read_info(g)
            except _GpuLost:
                return False
        log.info("GPU %d answers again", g.index)
        return True

    def _memory(self, g: _Gpu) -> Any:
        if g.mem_v2:
            mem = self._call(pynvml.nvmlDeviceGetMemoryInfo, g.handle, pynvml.nvmlMemory_v2,
                             name="nvmlDeviceGetMemoryInfo_v2")
            if mem is not None:
                return mem
            g.mem_v2 = False
        return self._call(pynvml.nvmlDeviceGetMemoryInfo, g.handle)

    def _read_sample(self, g: _Gpu, include_slow: bool, listed: bool = True) -> GpuSample:
        """Every metric of the table (``READERS``), then the fields that are not metrics;
        on a tick without ``include_slow`` the last reading of ``_SLOW_FIELDS`` is reused.
        ``listed``: whether the driver gave this GPU's process list."""
        h, c, last = g.handle, self._call, g.last
        mem = self._memory(g)  # each serves several metrics: asked once
        util = c(pynvml.nvmlDeviceGetUtilizationRates, h)
        fresh = include_slow or last is None
        values: dict[str, Any] = {key: read(self, h, mem, util)
                                  for key, read in (_ALL_READERS if fresh else _FAST_READERS)}
        if fresh:
            persistence = c(pynvml.nvmlDeviceGetPersistenceMode, h)
            mode = c(pynvml.nvmlDeviceGetComputeMode, h)
            values["pstate"] = pstate_text(c(pynvml.nvmlDeviceGetPerformanceState, h))
            values["persistence_mode"] = None if persistence is None else bool(persistence)
            values["compute_mode"] = None if mode is None else _COMPUTE_MODES.get(
                mode, f"Mode {mode}")
        else:  # reuse the last reading of _SLOW_FIELDS
            values.update(zip(_SLOW_FIELDS, _slow_of(last), strict=True))
        # One constructor call: a dataclasses.replace() per GPU per tick cost ~4 us.
        return GpuSample(index=g.index, timestamp_s=time.time(), processes_supported=listed,
                         **values)

    def _read_migs(self, g: _Gpu, include_slow: bool) -> list[MigSample]:
        """The MIG devices of a GPU in MIG mode, with their memory. Which devices exist is
        read again on slow ticks only (they change when an admin creates or destroys one)."""
        try:
            if include_slow or g.mig_devices is None:
                g.mig_devices = []
                for slot in range(self._call(pynvml.nvmlDeviceGetMaxMigDeviceCount, g.handle)
                                  or 0):
                    h = self._call(pynvml.nvmlDeviceGetMigDeviceHandleByIndex, g.handle, slot)
                    if h is not None:
                        g.mig_devices.append((h, MigSample(
                            g.index, self._call(pynvml.nvmlDeviceGetGpuInstanceId, h),
                            self._call(pynvml.nvmlDeviceGetComputeInstanceId, h),
                            self._call(pynvml.nvmlDeviceGetUUID, h) or "",
                            self._call(pynvml.nvmlDeviceGetName, h) or "MIG device")))
            found = []
            for h, known in g.mig_devices:
                mem = self._call(pynvml.nvmlDeviceGetMemoryInfo, h)
                found.append(MigSample(
                    known.gpu_index, known.gpu_instance_id, known.compute_instance_id,
                    known.uuid, known.name, None if mem is None else int(mem.total),
                    None if mem is None else int(mem.used)))
            return found
        except _GpuLost:  # the parent's next tick marks it lost
            g.mig_devices = None
            return []

    def _read_processes(self, g: _Gpu) -> tuple[dict[int, tuple[ProcessType, int | None]], bool]:
        """PID -> (type, used GPU memory) for one GPU (a PID in both lists is C+G), and
        False when the driver gave neither list (not supported, as on some GeForce/WSL)."""
        found: dict[int, tuple[ProcessType, int | None]] = {}
        listed = False
        lists = (
            (ProcessType.COMPUTE, (pynvml.nvmlDeviceGetComputeRunningProcesses_v3,
                                   pynvml.nvmlDeviceGetComputeRunningProcesses_v2)),
            (ProcessType.GRAPHICS, (pynvml.nvmlDeviceGetGraphicsRunningProcesses_v3,
                                    pynvml.nvmlDeviceGetGraphicsRunningProcesses_v2)),
        )
        for kind, fns in lists:
            got = self._first(fns, g.handle)
            listed = listed or got is not None
            for p in got or []:
                mem = p.usedGpuMemory
                mem = None if mem is None or mem == NOT_AVAILABLE else int(mem)
                if p.pid in found:
                    known = [m for m in (found[p.pid][1], mem) if m is not None]
                    found[p.pid] = (ProcessType.COMPUTE_GRAPHICS, max(known, default=None))
                else:
                    found[p.pid] = (kind, mem)
        return found, listed

    def _describe(self, raw: list[tuple[int, int, ProcessType, int | None]], verify: bool
                  ) -> tuple[GpuProcess, ...]:
        # Who each PID is. A PID seen on the last tick is trusted without reading /proc
        # except on slow ticks (verify), when psutil checks that it is still the same
        # process; see gpumon/telemetry/procinfo.py for the trade-off.
        if not raw:
            return ()
        infos = self._procs.lookup_many((pid for _, pid, _, _ in raw), verify=verify)
        return tuple(
            GpuProcess(gpu_index=gpu, pid=pid, type=kind, gpu_mem_bytes=mem,
                       name=infos[pid].name, user=infos[pid].user,
                       command=infos[pid].command, is_self=infos[pid].is_self)
            for gpu, pid, kind, mem in sorted(raw, key=lambda r: (r[0], r[1])))


def _every_read_failed(sample: GpuSample) -> bool:
    """Whether a tick read nothing at all: no metric, no state (then the GPU is lost)."""
    return all(getattr(sample, key) is None for key in _READ_FIELDS)


_READ_FIELDS = tuple(f.name for f in dataclasses.fields(GpuSample)
                     if f.name not in ("index", "timestamp_s", "lost", "message",
                                       "processes_supported", "failed_reads"))


def _num(value: float | None, scale: float = 1.0) -> float | None:
    return None if value is None else float(value) * scale


def _milli(value: float | None) -> float | None:
    return None if value is None else value / 1000.0  # NVML's mW as W


def _codec(value: list[int] | None) -> float | None:
    return None if value is None else float(value[0])  # [utilization, sampling period]


#: What NvmlSource reads for each metric of ``metrics.METRICS``, by key: a new metric is a
#: row there, a GpuSample field and one entry here (a test checks they match). Each reader
#: gets the source (for its guarded ``_call``), the GPU's handle, and this tick's memory info
#: and utilization rates.
Reader = Callable[["NvmlSource", Any, Any, Any], "float | int | None"]
READERS: dict[str, Reader] = {
    "mem_used_bytes": lambda s, h, mem, util: None if mem is None else mem.used,
    "mem_total_bytes": lambda s, h, mem, util: None if mem is None else mem.total,
    "mem_reserved_bytes": lambda s, h, mem, util: getattr(mem, "reserved", None),  # not in v1
    "mem_free_bytes": lambda s, h, mem, util: None if mem is None else mem.free,
    "gpu_util_pct": lambda s, h, mem, util: None if util is None else float(util.gpu),
    "mem_util_pct": lambda s, h, mem, util: None if util is None else float(util.memory),
    "temperature_c": lambda s, h, mem, util: _num(s._first(
        (pynvml.nvmlDeviceGetTemperatureV, pynvml.nvmlDeviceGetTemperature), h,
        pynvml.NVML_TEMPERATURE_GPU)),
    "power_w": lambda s, h, mem, util: _milli(s._call(pynvml.nvmlDeviceGetPowerUsage, h)),
    "power_limit_w": lambda s, h, mem, util: _milli(
        s._call(pynvml.nvmlDeviceGetEnforcedPowerLimit, h)),
    "fan_pct": lambda s, h, mem, util: _num(s._call(pynvml.nvmlDeviceGetFanSpeed, h)),
    "sm_clock_mhz": lambda s, h, mem, util: _num(
        s._call(pynvml.nvmlDeviceGetClockInfo, h, pynvml.NVML_CLOCK_SM)),
    "mem_clock_mhz": lambda s, h, mem, util: _num(
        s._call(pynvml.nvmlDeviceGetClockInfo, h, pynvml.NVML_CLOCK_MEM)),
    "pcie_rx_bytes_per_s": lambda s, h, mem, util: _num(s._call(  # KB/s
        pynvml.nvmlDeviceGetPcieThroughput, h, pynvml.NVML_PCIE_UTIL_RX_BYTES), 1024.0),
    "pcie_tx_bytes_per_s": lambda s, h, mem, util: _num(s._call(
        pynvml.nvmlDeviceGetPcieThroughput, h, pynvml.NVML_PCIE_UTIL_TX_BYTES), 1024.0),
    "encoder_util_pct": lambda s, h, mem, util: _codec(
        s._call(pynvml.nvmlDeviceGetEncoderUtilization, h)),
    "decoder_util_pct": lambda s, h, mem, util: _codec(
        s._call(pynvml.nvmlDeviceGetDecoderUtilization, h)),
}
_ALL_READERS = tuple(READERS.items())
_slow_of = operator.attrgetter(*_SLOW_FIELDS)
_FAST_READERS = tuple((k, r) for k, r in READERS.items() if k not in _SLOW_FIELDS)
