"""NvmlSource: live readings of NVIDIA GPUs through NVML (the nvidia-ml-py binding).

Only the modules of ``telemetry/nvml/`` import ``pynvml``: this one, status.py (what NVML's
errors mean, in sentences), readers.py (one reader per metric, the slow-tick fields, the
process lists), devices.py (versions, names, MIG devices), budget.py and pcie.py (what a driver
makes costly, read as the reading budget allows), health.py, procutil.py, activity.py (GPM's
activity, gpm.py; NVLink and the topology, links.py) and session.py (one GPU by UUID in a
session of its own, for the kernel's free.py, process_memory.py and busy.py). Every NVML call
of the source goes through one guarded helper, ``NvmlSource.call`` (with ``first`` for a
function with several versions; the room's other modules use both through ``readers.Guarded``):
"not supported" becomes None (shown as N/A) and is not asked again on that GPU for a while
(unsupported.py), a function the driver lacks is logged once and never called again, and an
error that means the GPU stopped answering marks only that GPU as lost while the others keep
updating. What a driver makes costly (the energy counter, per-process utilization, the PCIe
rates) is read as the reading budget allows (budget.py, pcie.py); GPM's PCIe rates, where the
GPU has GPM, cost nothing and replace the throughput call.
"""

from __future__ import annotations

import dataclasses
import logging
import socket
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

import pynvml

from gpumon.i18n import tr
from gpumon.telemetry.model.plausible import screen
from gpumon.telemetry.model.types import (
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
from gpumon.telemetry.nvml.activity import GpuActivity
from gpumon.telemetry.nvml.budget import Budget
from gpumon.telemetry.nvml.devices import list_migs, read_info, read_machine, with_memory
from gpumon.telemetry.nvml.health import XidWatch, read_health
from gpumon.telemetry.nvml.pcie import PcieRates
from gpumon.telemetry.nvml.procutil import ProcessUtil, ProcessUtilReader, usage_fields
from gpumon.telemetry.nvml.readers import (
    ALL_READERS,
    FAST_READERS,
    PRICED,
    READERS,
    SLOW_FIELDS,
    every_read_failed,
    first_of,
    read_processes,
    slow_of,
)
from gpumon.telemetry.nvml.status import (
    COMPUTE_MODES,
    LOST_WORDS,
    GpuLost,
    init_error_status,
    open_status,
    pstate_text,
)
from gpumon.telemetry.nvml.unsupported import Unsupported
from gpumon.telemetry.procs.procinfo import HostUsage, ProcInfoCache

log = logging.getLogger(__name__)
T = TypeVar("T")

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
    proc_util: dict[int, ProcessUtil] = field(default_factory=dict)  # read on slow ticks


class NvmlSource:
    """The real GPUs, read through NVML. Plain blocking calls; callers choose the thread."""

    def __init__(self, recheck_lost_s: float = 5.0,
                 clock: Callable[[], float] = time.monotonic, gpm: bool = True) -> None:
        """``clock``: the clock of the reading budget's due times (the sampler's); ``gpm``:
        read GPM's activity (False: ``--no-gpm``)."""
        self.recheck_lost_s = recheck_lost_s
        self._activity = GpuActivity(gpm, clock)  # GPM (gpm=False: --no-gpm), NVLink, the topology
        self._lock = threading.RLock()
        self._status = SourceStatus(SourceState.CLOSED, tr("The NVML source has not been opened."))
        self._machine = MachineInfo(host_name=socket.gethostname(), source_name="NVML")
        self._gpus: list[_Gpu] = []
        self._initialized = False
        self._missing: set[str] = set()  # functions this driver lacks
        self._unsupported = Unsupported(clock)
        self._budget = Budget(clock)
        self._pcie = PcieRates(self, self.call, self._budget, clock)
        self._logged: set[tuple[str, int]] = set()
        self._last_error: int | None = None
        self._failed: list[str] = []  # "name: error" of the calls that failed on this GPU's tick
        self._procs = ProcInfoCache()
        self._util = ProcessUtilReader()
        self._usage: dict[int, HostUsage] = {}  # per PID, read on slow ticks
        self._xids = XidWatch()
        # NVML calls started so far: a watchdog that sees it stand still while a read is in
        # progress knows a call hangs (the exporter's read deadline); a slow driver moves it.
        self.calls_started = 0
        self.last_call: Callable[..., Any] | None = None  # the last of them, for a sentence

    def _progress(self) -> None:
        self.calls_started += 1  # a call made outside call() (the XID event set's)
        self.last_call = None

    # --- the one guarded helper -------------------------------------------------------------

    def call(self, fn: Callable[..., T], *args: Any, name: str | None = None,
             off_tick: list[str] | None = None) -> T | None:
        """Call an NVML function; None when not supported or missing, GpuLost when lost.
        ``off_tick``: called from another thread than the reading's (pcie.py): its failure
        goes to that list, and the call is not the reading's progress (calls_started)."""
        # The name is looked up only when a function has gone missing or failed: on the
        # common path it cost ~0.1 us per call, a tenth of a 1-GPU tick's overhead.
        if self._missing and (name or fn.__name__) in self._missing:
            return None
        if fn in self._unsupported.fns and self._unsupported.skip(fn, args):
            return None
        if off_tick is None:
            self.calls_started += 1
            self.last_call = fn
        try:
            return fn(*args)
        except pynvml.NVMLError_NotSupported:
            self._unsupported.remember(fn, args)
            return None
        except pynvml.NVMLError_NotFound:
            return None  # no such thing (an empty MIG slot, say); asked again next time
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
            if err.value in LOST_WORDS:
                raise GpuLost(err.value) from err
            name = name or fn.__name__
            (self._failed if off_tick is None else off_tick).append(f"{name}: {err}")
            if (name, err.value) not in self._logged:
                self._logged.add((name, err.value))
                log.warning("NVML %s failed: %s", name, err)
            return None

    def lacks(self, name: str) -> bool:
        """Whether this driver lacks NVML function ``name`` (a call said FunctionNotFound)."""
        return name in self._missing

    def first(self, fns: Sequence[Callable[..., T]], *args: Any) -> T | None:
        """The first of several versions of a function that this driver has."""
        return first_of(self, fns, *args)

    # --- Source protocol ---------------------------------------------------------------------

    def open(self) -> SourceStatus:
        """Initialise NVML and cache device handles; never raises."""
        with self._lock:
            self.close()
            try:
                self.last_call = pynvml.nvmlInit
                pynvml.nvmlInit()
            except Exception as err:  # NVMLError, or anything odd from loading the library
                self._status = init_error_status(err)
                log.info("NVML unavailable: %s", self._status.message)
                return self._status
            self._initialized = True
            try:
                count = pynvml.nvmlDeviceGetCount()
                self._machine = read_machine(self)
                self._gpus = [self._open_gpu(i) for i in range(count)]
                self._activity.open(self, [(g.index, g.handle, g.info.pci_bus_id, g.mig)
                                           for g in self._gpus])
                self._xids.start({g.index: g.handle for g in self._gpus if g.handle is not None},
                                 self._progress)
            except Exception as err:
                self.close()
                self._status = SourceStatus(
                    SourceState.ERROR,
                    tr("NVML started but could not list the GPUs: {error}.", error=err),
                    tr("Check that 'nvidia-smi' works."))
                return self._status
            self._status = open_status(
                len(self._gpus), self._machine, all(g.handle is None for g in self._gpus) and (
                    self._last_error == pynvml.NVML_ERROR_NO_PERMISSION))
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
            self._xids.take(self._progress)  # the XIDs since the last reading
            self._activity.tick(self, [(g.index, None if g.lost_message else g.handle,
                                        g.info.pci_bus_id) for g in self._gpus], include_slow)
            self._budget.tick()
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
                topology=self._activity.topology,
            )

    def close(self) -> None:
        """Shut NVML down (once) and forget handles. open() may be called again."""
        with self._lock:
            if self._initialized:
                self._initialized = False
                self._xids.stop()
                self._activity.close(self)  # GPM's sample buffers, before nvmlShutdown
                self._pcie.stop()
                try:
                    pynvml.nvmlShutdown()
                except pynvml.NVMLError as err:
                    log.debug("nvmlShutdown failed: %s", err)
                self._status = SourceStatus(SourceState.CLOSED, tr("The NVML source is closed."))
            self._gpus = []
            self._procs.clear()
            self._util.forget()
            self._unsupported.forget()
            self._budget.forget()

    # --- opening -----------------------------------------------------------------------------

    def _open_gpu(self, index: int) -> _Gpu:
        unknown = GpuInfo(index=index, name="Unknown GPU", uuid="", pci_bus_id="")
        self._last_error = None
        try:
            handle = self.call(pynvml.nvmlDeviceGetHandleByIndex, index)
            if handle is None:
                why = "gpumon may not read this GPU (NVML gave no handle for it)."
                if self._last_error == pynvml.NVML_ERROR_NO_PERMISSION:
                    why = "gpumon is not allowed to read this GPU (insufficient permissions)."
                return _Gpu(index, None, unknown, lost_message=why, recheck_at=float("inf"))
            gpu = _Gpu(index, handle, unknown)
            gpu.info = self._read_info(gpu)
            mode = self.call(pynvml.nvmlDeviceGetMigMode, handle)
            gpu.mig = mode is not None and mode[0] == pynvml.NVML_DEVICE_MIG_ENABLE
        except GpuLost as lost:
            return _Gpu(index, None, unknown, lost_message=lost.message,
                        recheck_at=time.monotonic() + self.recheck_lost_s)
        return gpu

    def _read_info(self, g: _Gpu) -> GpuInfo:
        return read_info(self, g.index, g.handle, self._memory(g))

    # --- sampling ----------------------------------------------------------------------------

    def _sample_gpu(self, g: _Gpu, include_slow: bool,
                    raw: list[tuple[int, int, ProcessType, int | None]]) -> GpuSample:
        if g.lost_message and not self._recheck(g):
            return GpuSample(index=g.index, timestamp_s=time.time(), lost=True,
                             message=g.lost_message)
        self._failed = []
        try:
            procs, listed = read_processes(self, g.handle)
            if not procs:
                g.proc_util = {}
            elif include_slow and self._budget.due("processes", g.index):
                # per-process samples accumulate in the driver: read them on slow ticks, and
                # seldom where the call is costly (2.8 ms on an H200, even with no sample)
                g.proc_util = self._budget.read("processes", g.index, self._util.read,
                                                self.call, g.index, g.handle)
            sample = self._read_sample(g, include_slow, listed)
            if self._failed:
                if every_read_failed(sample):
                    raise GpuLost(0, tr("The GPU stopped answering: every NVML read of it "
                                         "failed ({error}).",
                                         error=self._failed[-1].split(': ', 1)[-1]))
                sample = dataclasses.replace(sample, failed_reads=tuple(self._failed))
        except GpuLost as lost:
            log.warning("GPU %d (%s): %s", g.index, g.info.uuid, lost.message)
            self._activity.restart(g.index)
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
            handle = self.call(pynvml.nvmlDeviceGetHandleByIndex, g.index)
            uuid = None if handle is None else self.call(pynvml.nvmlDeviceGetUUID, handle)
        except GpuLost:
            return False
        if uuid is None or (g.info.uuid and uuid != g.info.uuid):
            return False
        g.handle, g.lost_message, g.last = handle, "", None
        if not g.info.uuid:
            try:
                g.info = self._read_info(g)
            except GpuLost:
                return False
        log.info("GPU %d answers again", g.index)
        return True

    def _memory(self, g: _Gpu) -> Any:
        if g.mem_v2:
            mem = self.call(pynvml.nvmlDeviceGetMemoryInfo, g.handle, pynvml.nvmlMemory_v2,
                             name="nvmlDeviceGetMemoryInfo_v2")
            if mem is not None:
                return mem
            g.mem_v2 = False
        return self.call(pynvml.nvmlDeviceGetMemoryInfo, g.handle)

    def _read_sample(self, g: _Gpu, include_slow: bool, listed: bool = True) -> GpuSample:
        """Every metric of the table (``READERS``), then the fields that are not metrics;
        on a tick without ``include_slow`` the last reading of ``SLOW_FIELDS`` is reused.
        ``listed``: whether the driver gave this GPU's process list."""
        h, c, last = g.handle, self.call, g.last
        mem = self._memory(g)  # each serves several metrics: asked once
        util = c(pynvml.nvmlDeviceGetUtilizationRates, h)
        fresh = include_slow or last is None
        activity = self._activity.read(self, g.index, h)  # GPM, NVLink; GPM's PCIe if any
        values: dict[str, Any] = {key: read(self, h, mem, util)
                                  for key, read in (ALL_READERS if fresh else FAST_READERS)}
        if fresh:
            persistence = c(pynvml.nvmlDeviceGetPersistenceMode, h)
            mode = c(pynvml.nvmlDeviceGetComputeMode, h)
            values["pstate"] = pstate_text(c(pynvml.nvmlDeviceGetPerformanceState, h))
            values["persistence_mode"] = None if persistence is None else bool(persistence)
            values["compute_mode"] = None if mode is None else COMPUTE_MODES.get(
                mode, f"Mode {mode}")
            display = c(pynvml.nvmlDeviceGetDisplayActive, h)
            mig = c(pynvml.nvmlDeviceGetMigMode, h)  # [current, pending]
            values["display_active"] = None if display is None else bool(display)
            values["mig_mode"] = None if mig is None else (
                mig[0] == pynvml.NVML_DEVICE_MIG_ENABLE)
            values.update(read_health(self, h))
        else:  # reuse the last reading of SLOW_FIELDS
            values.update(zip(SLOW_FIELDS, slow_of(last), strict=True))
        for key in PRICED:  # when the budget says; the last value in between
            values[key] = (self._budget.read(key, g.index, READERS[key], self, h, mem, util)
                           if last is None or self._budget.due(key, g.index)
                           else getattr(last, key))
        values.update(activity)
        if "pcie_rx_bytes_per_s" not in activity:  # GPM's rates, where it gave them, cost no wait
            (values["pcie_rx_bytes_per_s"], values["pcie_tx_bytes_per_s"]) = self.pcie_rates(
                g, fresh)
        marks = self._budget.marks(g.index) + self._pcie.marks(g.index)
        if marks:
            values["read_every_s"] = marks
        xid = self._xids.state(g.index)
        if xid is not None:
            values.update(xid_count=xid.count, xid_last=xid.last, xid_last_time_s=xid.last_time_s)
        bad = screen(values)  # sentinels (4294967295 %, -1 C) become N/A, the value kept
        if bad:
            values["implausible"] = bad
        # One constructor call: a dataclasses.replace() per GPU per tick cost ~4 us.
        return GpuSample(index=g.index, timestamp_s=time.time(), processes_supported=listed,
                         **values)

    def pcie_rates(self, g: _Gpu, fresh: bool) -> tuple[float | None, float | None]:
        """A GPU's PCIe RX and TX (bytes/s) for this reading; ``fresh``: a slow tick. From
        NVML's throughput call (pcie.py: off the tick where it sleeps), for a GPU whose
        rates GPM did not give."""
        last = g.last
        rates, failed = self._pcie.rates(g.index, g.handle, fresh, None if last is None else (
            last.pcie_rx_bytes_per_s, last.pcie_tx_bytes_per_s))
        self._failed += failed
        return rates

    def _read_migs(self, g: _Gpu, include_slow: bool) -> list[MigSample]:
        """The MIG devices of a GPU in MIG mode, with their memory. Which devices exist is
        read again on slow ticks only (they change when an admin creates or destroys one)."""
        try:
            listed = include_slow or g.mig_devices is None
            if listed:
                g.mig_devices = list_migs(self, g.index, g.handle)
            found = with_memory(self, g.mig_devices or [])
            return self._activity.instances(self, g.index, g.handle, found, listed)
        except GpuLost:  # the parent's next tick marks it lost
            g.mig_devices = None
            return []

    def _describe(self, raw: list[tuple[int, int, ProcessType, int | None]], verify: bool
                  ) -> tuple[GpuProcess, ...]:
        # Who each PID is. A PID seen on the last tick is trusted without reading /proc
        # except on slow ticks (verify), when psutil checks that it is still the same
        # process; see gpumon/telemetry/procs/procinfo.py for the trade-off.
        if not raw:
            return ()
        infos = self._procs.lookup_many((pid for _, pid, _, _ in raw), verify=verify)
        if verify:  # host CPU and RSS on slow ticks too: ~40 us per process
            self._usage = self._procs.usage(infos)
        util = {g.index: g.proc_util for g in self._gpus}
        return tuple(
            GpuProcess(gpu_index=gpu, pid=pid, type=kind, gpu_mem_bytes=mem,
                       name=infos[pid].name, user=infos[pid].user,
                       command=infos[pid].command, is_self=infos[pid].is_self,
                       container=infos[pid].container, seen=infos[pid].exists,
                       **usage_fields(util.get(gpu, {}).get(pid), self._usage.get(pid)))
            for gpu, pid, kind, mem in sorted(raw, key=lambda r: (r[0], r[1])))
