"""Per-process GPU utilization (SM, memory bandwidth, encoder, decoder) from NVML's samples.

``nvmlDeviceGetProcessUtilization(handle, last_seen_us)`` returns the samples the driver took
after ``last_seen_us`` (CPU time in microseconds), one per process per driver sampling period;
none at all is NVML_ERROR_NOT_FOUND. :class:`ProcessUtilReader` keeps, per GPU, the newest
timestamp it has seen and passes it on the next read, so each sample is taken once; the
newest sample of each process is its value. A process with no sample newer than the last
read shows no value (N/A), as nvitop does: the driver samples only processes that ran.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pynvml

from gpumon.telemetry.procs.procinfo import HostUsage


@dataclass(frozen=True, slots=True)
class ProcessUtil:
    """One process's latest sample on one GPU, in percent."""

    sm_pct: float
    mem_bw_pct: float
    enc_pct: float
    dec_pct: float
    timestamp_us: int


Call = Callable[..., Any]  # NvmlSource.call: the guarded helper (None when not supported)


class ProcessUtilReader:
    """``read(call, gpu_index, handle)`` per GPU; remembers the newest timestamp per GPU."""

    def __init__(self) -> None:
        self._last_seen_us: dict[int, int] = {}

    def read(self, call: Call, gpu_index: int, handle: Any) -> dict[int, ProcessUtil]:
        """pid -> its newest sample since the last read of this GPU (empty: none, or the
        driver cannot say). Raises only what ``call`` raises (GpuLost)."""
        since = self._last_seen_us.get(gpu_index, 0)
        samples = call(pynvml.nvmlDeviceGetProcessUtilization, handle, since) or ()
        found: dict[int, ProcessUtil] = {}
        newest = since
        for s in samples:
            stamp = int(s.timeStamp)
            if stamp <= since:  # a driver that ignores the argument: taken already
                continue
            newest = max(newest, stamp)
            known = found.get(int(s.pid))
            if known is None or stamp > known.timestamp_us:
                found[int(s.pid)] = ProcessUtil(_pct(s.smUtil), _pct(s.memUtil), _pct(s.encUtil),
                                                _pct(s.decUtil), stamp)
        self._last_seen_us[gpu_index] = newest
        return found

    def forget(self) -> None:
        self._last_seen_us.clear()


def usage_fields(util: ProcessUtil | None, host: HostUsage | None) -> dict[str, Any]:
    """The GpuProcess fields of one process's GPU samples and host usage (None: unknown)."""
    return {"sm_util_pct": util and util.sm_pct, "mem_bw_util_pct": util and util.mem_bw_pct,
            "enc_util_pct": util and util.enc_pct, "dec_util_pct": util and util.dec_pct,
            "cpu_pct": host and host.cpu_pct, "host_rss_bytes": host and host.rss_bytes,
            "started_s": host and host.started_s}


def _pct(value: int) -> float:
    """A percentage as the driver gives it, capped to 0..100 (a driver has sent more)."""
    return float(min(max(int(value), 0), 100))
