"""How busy one GPU was over a stretch of work, for the lesson's step "GPU-Util is not how busy
the GPU is": GPU-Util as nvidia-smi shows it, and what GPM (Hopper and newer) measured over the
stretch: SM activity, SM occupancy, tensor and DRAM activity; with the power drawn, the power
cap and the clock event reasons. Read in an NVML session of its own (session.py: the lesson's
kernel has no NvmlSource), through the monitor's own GPM reader (gpm.py), so the figures are
the ones gpumon's Activity view and ``gpumon dmon`` show.

    watch = BusyWatch(torch.cuda.get_device_properties(device).uuid)  # GPM's first sample
    ...  # the work
    watch.stop()  # GPM's second sample: {'gpu_util_pct': 100, 'sm_active_pct': 96.4, ...}

GPM compares two samples at least 0.1 s apart, so ``stop`` waits for the rest of 0.1 s when
called sooner. A GPU without GPM gives None for its activity (``'gpm'`` says why: the
``ActivityState`` values), never 0; a GPU NVML cannot find gives None everywhere and
``'gpm': 'no_nvml'``. Never raises. NVML never creates a CUDA context.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import ExitStack

import pynvml

from gpumon.telemetry.model.activity import ActivityState
from gpumon.telemetry.model.health import CLOCK_REASONS
from gpumon.telemetry.nvml.gpm import MIN_INTERVAL_S, GpmReader
from gpumon.telemetry.nvml.readers import clocks_event_reasons
from gpumon.telemetry.nvml.session import GpuSession, nvml_session

#: The figures ``stop`` gives, in this order: GpuSample's names and units.
KEYS = ("gpu_util_pct", "sm_active_pct", "sm_occupancy_pct", "tensor_active_pct",
        "dram_active_pct", "power_w", "power_limit_w", "clock_events", "gpm")
NO_NVML = "no_nvml"  # 'gpm' where NVML could not be started or did not know the GPU


def _reasons(mask: int | None) -> list[str] | None:
    """The clock event reasons of ``mask`` as nvidia-smi -q names them (never translated:
    what the code returns reads the same in every language); None when not read."""
    if mask is None:
        return None
    return [full for bit, full, _ in CLOCK_REASONS if mask & bit]


class BusyWatch:
    """GPM's first sample of the GPU whose UUID is ``uuid`` (any spelling), now."""

    def __init__(self, uuid: str, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self._clock = clock
        self._sleep = sleep
        self._gpm = GpmReader(clock=clock)
        self._state: ActivityState | None = None
        self._started = clock()
        self._session = ExitStack()  # open from here to stop()
        self._gpu: GpuSession | None = self._session.enter_context(nvml_session(uuid))
        if self._gpu is None:
            self._session.close()
            return
        calls, handle = self._gpu, self._gpu.handle
        mig = calls.call(pynvml.nvmlDeviceGetMigMode, handle)
        in_mig = mig is not None and mig[0] == pynvml.NVML_DEVICE_MIG_ENABLE
        self._state = self._gpm.open_gpu(calls, 0, handle, in_mig)
        if self._state is ActivityState.READING:
            self._state = self._gpm.read(calls, 0, handle).state  # WARMING
        self._started = clock()

    def stop(self) -> dict[str, object]:
        """GPU-Util, the power, its cap and the clock event reasons now; GPM's activity since
        the first sample (``KEYS``, in percent and watts, rounded as nvidia-smi shows them).
        Ends the NVML session; a second call gives what NVML can say without it."""
        out: dict[str, object] = dict.fromkeys(KEYS)
        out["gpm"] = NO_NVML
        calls = self._gpu
        if calls is None:
            return out
        h = calls.handle
        util = calls.call(pynvml.nvmlDeviceGetUtilizationRates, h)
        power = calls.call(pynvml.nvmlDeviceGetPowerUsage, h)
        cap = calls.call(pynvml.nvmlDeviceGetEnforcedPowerLimit, h)
        out.update(gpu_util_pct=None if util is None else int(util.gpu),
                   power_w=None if power is None else round(power / 1000),
                   power_limit_w=None if cap is None else round(cap / 1000),
                   clock_events=_reasons(clocks_event_reasons(calls, h)))
        state = self._state
        if state is ActivityState.WARMING:
            wait = MIN_INTERVAL_S + 0.01 - (self._clock() - self._started)
            if wait > 0:
                self._sleep(wait)  # GPM needs its two samples 0.1 s apart at least
            got = self._gpm.read(calls, 0, h)
            state = got.state
            for key in KEYS[1:5]:
                value = got.values.get(key)
                out[key] = None if value is None else round(value, 1)
        out["gpm"] = state.value if state is not None else NO_NVML
        self._shutdown()
        return out

    def _shutdown(self) -> None:
        if self._gpu is not None:
            self._gpm.close(self._gpu)
        self._gpu = None
        self._session.close()


__all__ = ["KEYS", "NO_NVML", "BusyWatch"]
