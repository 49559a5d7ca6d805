"""GPU activity from NVML's GPM (GPU Performance Monitoring; Hopper and newer): SM activity and
occupancy, tensor, DRAM and FP pipe activity, the video engines, PCIe and NVLink rates.

GPM counts in hardware; a metric is the difference between two samples, at least 100 ms
apart (nvml.h; on an H200 with driver 580.159.04, DRAM came back NaN at 50 ms, a number at
500 ms). Each GPU (in MIG mode: each GPU instance, ``nvmlGpmMigSampleGet``) keeps two sample
buffers and swaps them: a reading costs one ``nvmlGpmSampleGet`` and one ``nvmlGpmMetricsGet``
(its metric list is built once and reused). The first reading only takes a sample
(``ActivityState.WARMING``); a reading less than 100 ms after the last keeps the older sample
and repeats the last values. Every metric has its own nvmlReturn: one the GPU does not answer
(the H200 said error 2 for ids 249 and 255 alone), a NaN, a GPU older than Hopper (support 0)
or a driver without the functions (``NVMLError_FunctionNotFound``) is None, never 0.

Every call goes through the source's guarded ``call`` (a lost GPU still raises GpuLost).
GPM shares hardware counters with DCGM's profiling module: ``GpmReader(enabled=False)``
(``--no-gpm``) makes no GPM call at all.
"""

from __future__ import annotations

import ctypes
import math
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import pynvml

from gpumon.telemetry.model.activity import ActivityState
from gpumon.telemetry.nvml.readers import Guarded
from gpumon.telemetry.nvml.rows import row_format, rows
from gpumon.telemetry.nvml.status import GpuLost
from gpumon.units import MIB

MIN_INTERVAL_S = 0.1  # nvml.h: "should be greater than 100ms"

_P = pynvml


def _ids(name: str, count: int) -> tuple[int, ...]:
    """``NVML_GPM_METRIC_<name>_<k>_UTIL`` for the engines k = 0 .. count-1."""
    return tuple(getattr(_P, f"NVML_GPM_METRIC_{name}_{k}_UTIL") for k in range(count))


#: GpuSample field -> the GPM metric ids it is read from (several: the mean of those that
#: answer, one per engine) and the factor to the field's unit (GPM's MiB/s -> bytes/s).
FIELDS: dict[str, tuple[tuple[int, ...], float]] = {
    "graphics_active_pct": ((_P.NVML_GPM_METRIC_GRAPHICS_UTIL,), 1.0),
    "sm_active_pct": ((_P.NVML_GPM_METRIC_SM_UTIL,), 1.0),
    "sm_occupancy_pct": ((_P.NVML_GPM_METRIC_SM_OCCUPANCY,), 1.0),
    "tensor_active_pct": ((_P.NVML_GPM_METRIC_ANY_TENSOR_UTIL,), 1.0),
    "tensor_hmma_active_pct": ((_P.NVML_GPM_METRIC_HMMA_TENSOR_UTIL,), 1.0),
    "tensor_imma_active_pct": ((_P.NVML_GPM_METRIC_IMMA_TENSOR_UTIL,), 1.0),
    "tensor_dfma_active_pct": ((_P.NVML_GPM_METRIC_DFMA_TENSOR_UTIL,), 1.0),
    "dram_active_pct": ((_P.NVML_GPM_METRIC_DRAM_BW_UTIL,), 1.0),
    "fp64_active_pct": ((_P.NVML_GPM_METRIC_FP64_UTIL,), 1.0),
    "fp32_active_pct": ((_P.NVML_GPM_METRIC_FP32_UTIL,), 1.0),
    "fp16_active_pct": ((_P.NVML_GPM_METRIC_FP16_UTIL,), 1.0),
    "int_active_pct": ((_P.NVML_GPM_METRIC_INTEGER_UTIL,), 1.0),
    "nvdec_active_pct": (_ids("NVDEC", 8), 1.0),
    "nvjpg_active_pct": (_ids("NVJPG", 8), 1.0),
    "nvofa_active_pct": (_ids("NVOFA", 2), 1.0),
    "nvenc_active_pct": (_ids("NVENC", 4), 1.0),
    "pcie_tx_bytes_per_s": ((_P.NVML_GPM_METRIC_PCIE_TX_PER_SEC,), MIB),  # "MiB/sec"
    "pcie_rx_bytes_per_s": ((_P.NVML_GPM_METRIC_PCIE_RX_PER_SEC,), MIB),
    "nvlink_rx_bytes_per_s": ((_P.NVML_GPM_METRIC_NVLINK_TOTAL_RX_PER_SEC,), MIB),
    "nvlink_tx_bytes_per_s": ((_P.NVML_GPM_METRIC_NVLINK_TOTAL_TX_PER_SEC,), MIB),
}
PCIE_KEYS = ("pcie_rx_bytes_per_s", "pcie_tx_bytes_per_s")
_METRIC_IDS: tuple[int, ...] = tuple(i for ids, _ in FIELDS.values() for i in ids)
_NO_VALUES: dict[str, float | None] = dict.fromkeys(FIELDS)


@dataclass(frozen=True, slots=True)
class Activity:
    """One GPU's (or GPU instance's) GPM reading: its state and the FIELDS values."""

    state: ActivityState
    values: dict[str, float | None] = field(default_factory=lambda: dict(_NO_VALUES))


@dataclass
class _Counters:
    """The two sample buffers of one GPU or GPU instance, and the last values read."""

    samples: list[Any]
    query: Any  # the c_nvmlGpmMetricsGet_t, metric ids filled once
    older: int = 0  # which buffer holds the older sample
    taken_at: float | None = None  # the clock when it was taken; None: none yet
    last: Activity | None = None


_QUIET = {state: Activity(state) for state in ActivityState}  # a GPU not read: shared values


def _query() -> Any:
    q = pynvml.c_nvmlGpmMetricsGet_t()
    q.version = pynvml.NVML_GPM_METRICS_GET_VERSION
    q.numMetrics = len(_METRIC_IDS)
    for k, metric in enumerate(_METRIC_IDS):
        q.metrics[k].metricId = metric
    return q


# One metric of a filled query: (metricId, nvmlReturn, value), read in one pass (rows.py).
_ROW = row_format(pynvml.c_nvmlGpmMetric_t, (("metricId", "u"), ("nvmlReturn", "u"),
                                             ("value", "d")))
_METRICS_AT = pynvml.c_nvmlGpmMetricsGet_t.metrics.offset


def decode(query: Any) -> dict[str, float | None]:
    """The FIELDS values of a filled query: a metric that failed (its own nvmlReturn) or is
    NaN counts as not answered; a field with no answering metric is None. Percentages are
    held to 0-100 (a counter's rounding can pass 100 by a hair)."""
    got: dict[int, float] = {
        metric: value
        for metric, ret, value in rows(_ROW, ctypes.addressof(query) + _METRICS_AT,
                                       len(_METRIC_IDS))
        if ret == pynvml.NVML_SUCCESS and math.isfinite(value)}
    values: dict[str, float | None] = {}
    for key, (ids, scale) in FIELDS.items():
        found = [got[i] for i in ids if i in got]
        if not found:
            values[key] = None
        elif key.endswith("_pct"):
            values[key] = min(100.0, max(0.0, sum(found) / len(found)))
        else:
            values[key] = max(0.0, sum(found) / len(found)) * scale
    return values


class GpmReader:
    """GPM of every GPU of a source; see the module docstring. Not thread-safe (the source
    holds its lock)."""

    def __init__(self, enabled: bool = True,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.enabled = enabled
        self._clock = clock
        self._state: dict[int, ActivityState] = {}  # per GPU, from open()
        self._counters: dict[tuple[int, int | None], _Counters] = {}  # (GPU, GI or None)

    def open_gpu(self, source: Guarded, index: int, handle: Any, mig: bool) -> ActivityState:
        """Ask whether GPU ``index`` has GPM; remember and return its state."""
        state = self._support(source, handle) if self.enabled else ActivityState.OFF
        if state is ActivityState.READING and mig:
            state = ActivityState.MIG
        self._state[index] = state
        return state

    def _support(self, source: Guarded, handle: Any) -> ActivityState:
        got = source.call(pynvml.nvmlGpmQueryDeviceSupport, handle)
        if got is None:
            return (ActivityState.NO_DRIVER if source.lacks("nvmlGpmQueryDeviceSupport")
                    else ActivityState.UNSUPPORTED)
        return ActivityState.READING if got.isSupportedDevice else ActivityState.UNSUPPORTED

    def state(self, index: int) -> ActivityState | None:
        """GPU ``index``'s state from open (READING: it has GPM), None if never opened."""
        return self._state.get(index)

    def read(self, source: Guarded, index: int, handle: Any) -> Activity:
        """This tick's activity of a whole GPU (not in MIG mode). A GPU not asked yet (lost
        at open) is asked now."""
        state = self._state.get(index) or self.open_gpu(source, index, handle, False)
        if state is not ActivityState.READING:
            return _QUIET[state]
        return self._read(source, (index, None), pynvml.nvmlGpmSampleGet, handle)

    def read_instance(self, source: Guarded, index: int, handle: Any, gi: int) -> Activity:
        """This tick's activity of GPU instance ``gi`` of a GPU in MIG mode (``handle``: the
        parent's)."""
        if self._state.get(index) is not ActivityState.MIG:
            return Activity(self._state.get(index, ActivityState.OFF))
        return self._read(source, (index, gi), pynvml.nvmlGpmMigSampleGet, handle, gi)

    def _read(self, source: Guarded, key: tuple[int, int | None], get: Callable[..., Any],
              *args: Any) -> Activity:
        c = self._counters.get(key) or self._allocate(source, key)
        if c is None:
            return Activity(self._failed(source))
        now = self._clock()
        if c.taken_at is not None and now - c.taken_at < MIN_INTERVAL_S:
            return c.last or Activity(ActivityState.WARMING)  # keep the older sample
        newer = 1 - c.older if c.taken_at is not None else c.older
        if source.call(get, *args, c.samples[newer]) is None:
            c.taken_at, c.last = None, None
            return Activity(self._failed(source))
        if c.taken_at is None:  # the first sample: nothing to compare it with yet
            c.taken_at = now
            return Activity(ActivityState.WARMING)
        c.query.sample1, c.query.sample2 = c.samples[c.older], c.samples[newer]
        got = source.call(pynvml.nvmlGpmMetricsGet, c.query)
        c.older, c.taken_at = newer, now  # the newer sample is the next reading's older one
        c.last = Activity(ActivityState.READING, decode(c.query)) if got is not None else None
        return c.last or Activity(self._failed(source))

    def _allocate(self, source: Guarded, key: tuple[int, int | None]) -> _Counters | None:
        samples: list[Any] = []
        for _ in range(2):
            s = source.call(pynvml.nvmlGpmSampleAlloc)
            if s is None:
                for got in samples:
                    source.call(pynvml.nvmlGpmSampleFree, got)
                return None
            samples.append(s)
        c = self._counters[key] = _Counters(samples, _query())
        return c

    @staticmethod
    def _failed(source: Guarded) -> ActivityState:
        return (ActivityState.NO_DRIVER if source.lacks("nvmlGpmSampleGet")
                or source.lacks("nvmlGpmMetricsGet") else ActivityState.FAILED)

    def restart(self, index: int) -> None:
        """Forget GPU ``index``'s older samples (it was lost: the next reading starts over)."""
        for key, c in self._counters.items():
            if key[0] == index:
                c.taken_at, c.last = None, None

    def keep_instances(self, source: Guarded, index: int, gis: Iterable[int]) -> None:
        """Free the buffers of GPU instances of ``index`` that are gone."""
        keep = set(gis)
        for key in [k for k in self._counters if k[0] == index and k[1] is not None
                    and k[1] not in keep]:
            self._free(source, self._counters.pop(key))

    def close(self, source: Guarded) -> None:
        """Free every sample buffer (before nvmlShutdown)."""
        for c in self._counters.values():
            self._free(source, c)
        self._counters.clear()
        self._state.clear()

    @staticmethod
    def _free(source: Guarded, c: _Counters) -> None:
        for s in c.samples:
            try:
                source.call(pynvml.nvmlGpmSampleFree, s)
            except GpuLost:  # a host buffer: freed all the same, or lost with the driver
                pass
