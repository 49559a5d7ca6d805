"""What a handler fills in while one action runs (its value, operands, devices, timing).

The engine makes one per action and turns it into an Outcome; the handlers in ``ops`` fill it
in. It lives apart from both so that neither imports the other.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from gpumon.device_ids import cuda_index
from gpumon.playground.data.errors import OperandInfo
from gpumon.playground.kernel import cuda_calls
from gpumon.playground.kernel.memory import read_memory, start_peaks, with_process_memory


@dataclass
class ActionRun:
    """What a handler fills in while an action runs; turned into an Outcome at the end."""

    value: Any = None
    kind: str = "none"
    result_name: str | None = None
    copied: bool | None = None
    details: tuple[tuple[str, str], ...] = ()
    operands: list[OperandInfo] = field(default_factory=list)
    devices: list[str] = field(default_factory=list)  # readings and graph markers
    held: list[str] = field(default_factory=list)  # devices holding the action's tensors
    memory_before: tuple[Any, ...] = ()
    rss_peak: bool = False  # the RSS high-water mark was reset before the action ran
    duration_s: float = 0.0
    executed: bool = False
    in_torch: bool = False  # an exception now comes from the torch call (see blame.py)
    output: str = ""  # what typed code printed (printed.py)

    def touch(self, *devices: object) -> None:
        """Note devices the action uses (for memory readings and graph markers)."""
        for d in devices:
            name = str(d)
            if name == "cuda":
                name = _current_cuda()
            if name and name not in self.devices:
                self.devices.append(name)

    def hold(self, *devices: object) -> None:
        """Note devices that hold the action's tensors (inputs or results): only these are
        synchronised, since ``synchronize(i)`` creates a context on a GPU that has none."""
        self.touch(*devices)
        for d in devices:
            name = str(d)
            if name == "cuda":
                name = _current_cuda()
            if name and name not in self.held:
                self.held.append(name)

    def begin(self, devices: list[str]) -> None:
        """Read the memory of ``devices`` (NVML's figure for this process on each GPU too)
        and reset the peaks, just before the action runs: its readings after give the change
        and the most it held (memory.start_peaks)."""
        self.memory_before = with_process_memory(read_memory(devices))
        self.rss_peak = start_peaks()

    def execute(self, fn: Callable[[], Any]) -> Any:
        """Read memory, run the torch work timed (CUDA synchronised), and keep its value."""
        self.begin(self.devices)
        self.executed = True
        start = time.perf_counter()
        try:
            self.in_torch = True
            value = fn()
            if hasattr(value, "device"):  # a numpy array's "cpu" too, for the readings
                self.touch(value.device)
            self.hold(*devices_of(value))
            synchronize(self.held)
            self.in_torch = False
        finally:
            self.duration_s = time.perf_counter() - start
        self.value = value
        return value


def devices_of(value: Any) -> list[str]:
    """Where a result's tensors live: a tensor's device, a model's parameters' and buffers',
    each element's of a list or tuple; ``[]`` for anything else."""
    torch = sys.modules.get("torch")
    if torch is None:
        return []
    if isinstance(value, torch.Tensor):
        return [str(value.device)]
    if isinstance(value, torch.nn.Module):
        return sorted({str(t.device) for t in (*value.parameters(), *value.buffers())})
    if isinstance(value, (list, tuple)):
        return [d for item in value if isinstance(item, torch.Tensor) for d in devices_of(item)]
    return []


def _current_cuda() -> str:
    torch = sys.modules.get("torch")
    try:
        if torch is not None and torch.cuda.is_available():
            return f"cuda:{cuda_calls.current_index(torch)}"  # cudaGetDevice: no context
    except Exception:
        pass
    return ""


def synchronize(devices: list[str]) -> None:
    """Wait for queued CUDA work so durations are honest and async errors land here.

    Pass only the devices holding the action's tensors: ``torch.cuda.synchronize(i)`` creates
    a context on device ``i`` if it has none (cuda_calls.py says how that was checked). A
    device without a context is skipped too: no work can be queued there, so the first action
    that really uses the GPU (not a query such as get_device_name) is the one whose marker
    says "context created".
    """
    torch = sys.modules.get("torch")
    if torch is None or not torch.cuda.is_initialized():
        return
    indices = (cuda_index(n) for n in devices)
    cuda_calls.synchronize(torch, (i for i in indices if i is not None))
