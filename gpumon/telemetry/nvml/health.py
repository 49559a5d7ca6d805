"""The health fields of a GpuSample through NVML: ECC, remapped rows, retired pages and PCIe
replays (slow ticks: the ECC and page queries read the InfoROM), and XID errors through an
event set that each reading empties (``XidWatch``). The clock event reasons, energy
and memory temperature are metrics, read every tick by readers.py.

Every call goes through NvmlSource's guarded helper: "not supported" is None, never 0.
"""

from __future__ import annotations

import ctypes
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pynvml

from gpumon.telemetry.nvml.readers import Guarded

log = logging.getLogger(__name__)

#: The most XID events one reading takes from the event set (the rest wait for the next).
XID_EVENTS_PER_READ = 64


def _flag(value: int | None) -> bool | None:
    return None if value is None else bool(value)


def _pages(s: Guarded, h: Any, cause: int) -> int | None:
    # nvmlDeviceGetRetiredPages: the addresses retired for this cause; we keep their number
    pages = s.call(pynvml.nvmlDeviceGetRetiredPages, h, cause)
    return None if pages is None else len(pages)


def read_health(s: Guarded, h: Any) -> dict[str, Any]:
    """The slow-tick health fields of one GPU (readers.HEALTH_FIELDS), None where the
    GPU does not support them."""
    c = s.call
    mode = c(pynvml.nvmlDeviceGetEccMode, h)  # nvmlDeviceGetEccMode: [current, pending]
    counts: dict[str, int | None] = {}
    for key, kind, counter in (
            ("ecc_corrected_volatile", pynvml.NVML_MEMORY_ERROR_TYPE_CORRECTED,
             pynvml.NVML_VOLATILE_ECC),
            ("ecc_uncorrected_volatile", pynvml.NVML_MEMORY_ERROR_TYPE_UNCORRECTED,
             pynvml.NVML_VOLATILE_ECC),
            ("ecc_corrected_aggregate", pynvml.NVML_MEMORY_ERROR_TYPE_CORRECTED,
             pynvml.NVML_AGGREGATE_ECC),
            ("ecc_uncorrected_aggregate", pynvml.NVML_MEMORY_ERROR_TYPE_UNCORRECTED,
             pynvml.NVML_AGGREGATE_ECC)):
        # nvmlDeviceGetTotalEccErrors(device, error type, counter type): not supported when
        # ECC is off or absent (GeForce)
        value = None if mode is None or not mode[0] else c(
            pynvml.nvmlDeviceGetTotalEccErrors, h, kind, counter)
        counts[key] = None if value is None else int(value)
    # nvmlDeviceGetRemappedRows: (correctable, uncorrectable, pending, failure), A100 and later
    rows = c(pynvml.nvmlDeviceGetRemappedRows, h)
    # nvmlDeviceGetRetiredPagesPendingStatus: pre-A100 GPUs retire pages instead of remapping
    pending = c(pynvml.nvmlDeviceGetRetiredPagesPendingStatus, h)
    # nvmlDeviceGetPcieReplayCounter: replays since the driver loaded
    replays = c(pynvml.nvmlDeviceGetPcieReplayCounter, h)
    return {
        "ecc_enabled": None if mode is None else bool(mode[0]),
        **counts,
        "remapped_rows_correctable": None if rows is None else int(rows[0]),
        "remapped_rows_uncorrectable": None if rows is None else int(rows[1]),
        "remap_pending": None if rows is None else bool(rows[2]),
        "remap_failure": None if rows is None else bool(rows[3]),
        "retired_pages_sbe": _pages(
            s, h, pynvml.NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS),
        "retired_pages_dbe": _pages(s, h, pynvml.NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR),
        "retired_pages_pending": _flag(pending),
        "pcie_replay_count": None if replays is None else int(replays),
    }


@dataclass
class XidState:
    count: int = 0
    last: int | None = None
    last_time_s: float | None = None


def _address(handle: Any) -> int | None:
    return ctypes.cast(handle, ctypes.c_void_p).value


class XidWatch:
    """XID errors of every GPU, from one NVML event set that ``take()`` empties.

    The driver keeps the events of a registered set until they are waited for, so each
    reading takes what came since the last one with ``nvmlEventSetWait`` and no wait (a
    thread of its own waited 100 ms at a time: ten wakeups a second, a third of an idle
    window's CPU, and a close that waited for it). An event's time is the reading's.
    ``state(index)`` is None for a GPU whose XID events cannot be watched (not supported, no
    permission, lost when registering), else its count since start and last code and time.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._states: dict[int, XidState] = {}
        self._by_address: dict[int, int] = {}
        self._set: Any = None

    def start(self, handles: dict[int, Any], progress: Callable[[], None] = lambda: None
              ) -> None:
        """Register XID events of each GPU (index -> handle); ``progress`` is called before
        each driver call (a watchdog sees calls move)."""
        try:
            progress()
            self._set = pynvml.nvmlEventSetCreate()  # nvmlEventSetCreate
        except pynvml.NVMLError as err:
            log.info("XID events cannot be watched: %s", err)
            return
        for index, handle in handles.items():
            try:
                # nvmlDeviceGetSupportedEventTypes, then nvmlDeviceRegisterEvents with
                # nvmlEventTypeXidCriticalError
                progress()
                supported = pynvml.nvmlDeviceGetSupportedEventTypes(handle)
                if not supported & pynvml.nvmlEventTypeXidCriticalError:
                    continue
                progress()
                pynvml.nvmlDeviceRegisterEvents(handle, pynvml.nvmlEventTypeXidCriticalError,
                                                self._set)
            except pynvml.NVMLError as err:
                log.info("GPU %d: XID events cannot be watched: %s", index, err)
                continue
            address = _address(handle)
            if address is not None:
                self._by_address[address] = index
                self._states[index] = XidState()
        if not self._states:
            self._free()

    def state(self, index: int) -> XidState | None:
        with self._lock:
            known = self._states.get(index)
            return None if known is None else XidState(known.count, known.last,
                                                       known.last_time_s)

    def take(self, progress: Callable[[], None] = lambda: None) -> int:
        """Count the XID events that came since the last call (at most
        :data:`XID_EVENTS_PER_READ`); how many were taken."""
        taken = 0
        while self._set is not None and taken < XID_EVENTS_PER_READ:
            try:
                progress()
                # nvmlEventSetWait (nvmlEventSetWait_v2), no wait: NVML_ERROR_TIMEOUT when
                # no event is left
                data = pynvml.nvmlEventSetWait(self._set, 0)
            except pynvml.NVMLError_Timeout:
                break
            except pynvml.NVMLError as err:  # a GPU lost, or NVML shut down under us
                log.info("reading XID events: %s", err)
                break
            taken += 1
            if data.eventType != pynvml.nvmlEventTypeXidCriticalError:
                continue
            index = self._by_address.get(_address(data.device) or 0)
            if index is None:
                continue
            with self._lock:
                st = self._states[index]
                st.count += 1
                st.last, st.last_time_s = int(data.eventData), time.time()
            log.warning("GPU %d: XID %d", index, int(data.eventData))
        return taken

    def stop(self) -> None:
        """Free the event set (before nvmlShutdown)."""
        self._free()

    def _free(self) -> None:
        if self._set is not None:
            try:
                pynvml.nvmlEventSetFree(self._set)  # nvmlEventSetFree
            except pynvml.NVMLError as err:
                log.debug("nvmlEventSetFree failed: %s", err)
            self._set = None
        with self._lock:
            self._states.clear()
            self._by_address.clear()
