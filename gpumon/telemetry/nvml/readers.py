"""How NvmlSource reads each metric: one small reader per row of ``metrics.METRICS``, which
fields are read only on slow ticks (the others every tick), and each GPU's process list.

A new metric is a row in ``metrics.METRICS``, a GpuSample field and one entry in ``READERS``
(a test checks they match).
"""

from __future__ import annotations

import dataclasses
import operator
from collections.abc import Callable, Sequence
from typing import Any, Protocol, TypeVar

import pynvml

from gpumon.telemetry.model.types import GpuSample, ProcessType
from gpumon.units import KIB

T = TypeVar("T")

NOT_AVAILABLE = 0xFFFFFFFFFFFFFFFF  # NVML_VALUE_NOT_AVAILABLE as an unsigned long long

# Read only when sample(include_slow=True); otherwise the last reading is reused.
# The health counts (health.read_health) are here: the ECC and retired-page queries
# read the InfoROM, and they change rarely.
HEALTH_FIELDS = (
    "ecc_enabled", "ecc_corrected_volatile", "ecc_uncorrected_volatile",
    "ecc_corrected_aggregate", "ecc_uncorrected_aggregate", "remapped_rows_correctable",
    "remapped_rows_uncorrectable", "remap_pending", "remap_failure", "retired_pages_sbe",
    "retired_pages_dbe", "retired_pages_pending", "pcie_replay_count")
SLOW_FIELDS = ("persistence_mode", "compute_mode", "display_active", "mig_mode",
               "power_limit_w", "pstate", *HEALTH_FIELDS)
# Not read with the others (NvmlSource reads them itself): the energy counter when the
# reading budget says (budget.py: 3.3 ms of CPU a call on an H200), and the PCIe rates from
# pcie.py (NVML samples the link for 20 ms a call, asleep), on slow ticks.
PRICED = ("energy_mj",)
PCIE_FIELDS = ("pcie_rx_bytes_per_s", "pcie_tx_bytes_per_s")
XID_FIELDS = ("xid_count", "xid_last", "xid_last_time_s")  # from the XID event set


class Guarded(Protocol):
    """What a reader needs of NvmlSource: its guarded calls (see ``NvmlSource.call``)."""

    def call(self, fn: Callable[..., T], *args: Any, name: str | None = None) -> T | None: ...

    def first(self, fns: Sequence[Callable[..., T]], *args: Any) -> T | None: ...

    def lacks(self, name: str) -> bool: ...


def first_of(calls: Guarded, fns: Sequence[Callable[..., T]], *args: Any) -> T | None:
    """The first of several versions of an NVML function that this driver has (``first``):
    the next version is tried only where the driver lacks this one."""
    for fn in fns:
        value = calls.call(fn, *args)
        if value is not None or not calls.lacks(fn.__name__):
            return value
    return None


def _num(value: float | None, scale: float = 1.0) -> float | None:
    return None if value is None else float(value) * scale


def _milli(value: float | None) -> float | None:
    return None if value is None else value / 1000.0  # NVML's mW as W


def _codec(value: list[int] | None) -> float | None:
    return None if value is None else float(value[0])  # [utilization, sampling period]


_FIELD_VALUE = {  # nvmlValueType_t -> the member of c_nvmlValue_t that holds it
    pynvml.NVML_VALUE_TYPE_DOUBLE: "dVal", pynvml.NVML_VALUE_TYPE_UNSIGNED_INT: "uiVal",
    pynvml.NVML_VALUE_TYPE_UNSIGNED_LONG: "ulVal",
    pynvml.NVML_VALUE_TYPE_UNSIGNED_LONG_LONG: "ullVal",
    pynvml.NVML_VALUE_TYPE_SIGNED_LONG_LONG: "sllVal", pynvml.NVML_VALUE_TYPE_SIGNED_INT: "siVal",
}


def clocks_event_reasons(s: Guarded, h: Any) -> int | None:
    # nvmlDeviceGetCurrentClocksEventReasons (driver 535 and later), else the older
    # nvmlDeviceGetCurrentClocksThrottleReasons: the same bits.
    value = s.first((pynvml.nvmlDeviceGetCurrentClocksEventReasons,
                      pynvml.nvmlDeviceGetCurrentClocksThrottleReasons), h)
    return None if value is None else int(value)


def energy_mj(s: Guarded, h: Any) -> float | None:
    # nvmlDeviceGetTotalEnergyConsumption: mJ since the driver was last loaded (Volta and later)
    value = s.call(pynvml.nvmlDeviceGetTotalEnergyConsumption, h)
    return None if value is None else float(value)


def memory_temperature(s: Guarded, h: Any) -> float | None:
    # nvmlDeviceGetFieldValues with NVML_FI_DEV_MEMORY_TEMP (HBM GPUs; others say not supported
    # in the field's own nvmlReturn while the call succeeds)
    got = s.call(pynvml.nvmlDeviceGetFieldValues, h, [pynvml.NVML_FI_DEV_MEMORY_TEMP])
    if not got:
        return None
    field = got[0]
    member = _FIELD_VALUE.get(field.valueType)
    if field.nvmlReturn != pynvml.NVML_SUCCESS or member is None:
        return None
    return float(getattr(field.value, member))



#: What NvmlSource reads for each metric of ``metrics.METRICS``, by key. Each reader gets the
#: source (for its guarded ``call``), the GPU's handle, and this tick's memory info and
#: utilization rates.
Reader = Callable[[Guarded, Any, Any, Any], "float | int | None"]
READERS: dict[str, Reader] = {
    "mem_used_bytes": lambda s, h, mem, util: None if mem is None else mem.used,
    "mem_total_bytes": lambda s, h, mem, util: None if mem is None else mem.total,
    "mem_reserved_bytes": lambda s, h, mem, util: getattr(mem, "reserved", None),  # not in v1
    "mem_free_bytes": lambda s, h, mem, util: None if mem is None else mem.free,
    "gpu_util_pct": lambda s, h, mem, util: None if util is None else float(util.gpu),
    "mem_util_pct": lambda s, h, mem, util: None if util is None else float(util.memory),
    "temperature_c": lambda s, h, mem, util: _num(s.first(
        (pynvml.nvmlDeviceGetTemperatureV, pynvml.nvmlDeviceGetTemperature), h,
        pynvml.NVML_TEMPERATURE_GPU)),
    "power_w": lambda s, h, mem, util: _milli(s.call(pynvml.nvmlDeviceGetPowerUsage, h)),
    "power_limit_w": lambda s, h, mem, util: _milli(
        s.call(pynvml.nvmlDeviceGetEnforcedPowerLimit, h)),
    "fan_pct": lambda s, h, mem, util: _num(s.call(pynvml.nvmlDeviceGetFanSpeed, h)),
    "sm_clock_mhz": lambda s, h, mem, util: _num(
        s.call(pynvml.nvmlDeviceGetClockInfo, h, pynvml.NVML_CLOCK_SM)),
    "mem_clock_mhz": lambda s, h, mem, util: _num(
        s.call(pynvml.nvmlDeviceGetClockInfo, h, pynvml.NVML_CLOCK_MEM)),
    "pcie_rx_bytes_per_s": lambda s, h, mem, util: _num(s.call(  # KB/s
        pynvml.nvmlDeviceGetPcieThroughput, h, pynvml.NVML_PCIE_UTIL_RX_BYTES), KIB),
    "pcie_tx_bytes_per_s": lambda s, h, mem, util: _num(s.call(
        pynvml.nvmlDeviceGetPcieThroughput, h, pynvml.NVML_PCIE_UTIL_TX_BYTES), KIB),
    "encoder_util_pct": lambda s, h, mem, util: _codec(
        s.call(pynvml.nvmlDeviceGetEncoderUtilization, h)),
    "decoder_util_pct": lambda s, h, mem, util: _codec(
        s.call(pynvml.nvmlDeviceGetDecoderUtilization, h)),
    "clocks_event_reasons": lambda s, h, mem, util: clocks_event_reasons(s, h),
    "energy_mj": lambda s, h, mem, util: energy_mj(s, h),
    "mem_temperature_c": lambda s, h, mem, util: memory_temperature(s, h),
}
ALL_READERS = tuple((k, r) for k, r in READERS.items() if k not in (*PRICED, *PCIE_FIELDS))
FAST_READERS = tuple((k, r) for k, r in ALL_READERS if k not in SLOW_FIELDS)
#: A GpuSample's SLOW_FIELDS as a tuple, in that order (reused on fast ticks).
slow_of = operator.attrgetter(*SLOW_FIELDS)

_READ_FIELDS = tuple(f.name for f in dataclasses.fields(GpuSample)
                     if f.name not in ("index", "timestamp_s", "lost", "message",
                                       "processes_supported", "failed_reads", "read_every_s",
                                       "implausible", "nvlink_links", "activity_state",
                                       *XID_FIELDS))


def every_read_failed(sample: GpuSample) -> bool:
    """Whether a tick read nothing at all: no metric, no state (then the GPU is lost)."""
    return all(getattr(sample, key) is None for key in _READ_FIELDS)


def read_processes(source: Guarded, handle: Any
                   ) -> tuple[dict[int, tuple[ProcessType, int | None]], bool]:
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
        got = source.first(fns, handle)
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
