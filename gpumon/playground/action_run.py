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

from gpumon.playground.errors import OperandInfo
from gpumon.playground.memory import read_memory


@dataclass
class ActionRun:
    """What a handler fills in while an action runs; turned into an Outcome at the end."""

    value: Any = None
    kind: str = "none"
    result_name: str | None = None
    copied: bool | None = None
    details: tuple[tuple[str, str], ...] = ()
    operands: list[OperandInfo] = field(default_factory=list)
    devices: list[str] = field(default_factory=list)
    memory_before: tuple[Any, ...] = ()
    duration_s: float = 0.0
    executed: bool = False
    in_torch: bool = False  # an exception now comes from the torch call (see blame.py)

    def touch(self, *devices: object) -> None:
        """Note devices the action uses (for memory readings and graph markers)."""
        for d in devices:
            name = str(d)
            if name == "cuda":
                name = _current_cuda()
            if name and name not in self.devices:
                self.devices.append(name)

    def execute(self, fn: Callable[[], Any]) -> Any:
        """Read memory, run the torch work timed (CUDA synchronised), and keep its value."""
        self.memory_before = read_memory(self.devices)
        self.executed = True
        start = time.perf_counter()
        try:
            self.in_torch = True
            value = fn()
            if hasattr(value, "device"):
                self.touch(value.device)
            synchronize(self.devices)
            self.in_torch = False
        finally:
            self.duration_s = time.perf_counter() - start
        self.value = value
        return value


def _current_cuda() -> str:
    torch = sys.modules.get("torch")
    try:
        if torch is not None and torch.cuda.is_available():
            return f"cuda:{torch.cuda.current_device()}"
    except Exception:  # noqa: BLE001
        pass
    return ""


def synchronize(devices: list[str]) -> None:
    """Wait for queued CUDA work so durations are honest and async errors land here.

    Only the listed cuda devices (those holding the action's tensors) are synchronised:
    ``torch.cuda.synchronize(i)`` creates a context on device ``i`` if it has none (checked
    in torch/cuda/__init__.py: it enters ``torch.cuda.device(i)``, which sets the device).
    A device without a context is skipped: no work can be queued there, and synchronising
    would create the context, so the first action that really uses the GPU (not a query
    such as get_device_name) is the one whose marker says "context created".
    """
    torch = sys.modules.get("torch")
    if torch is None or not torch.cuda.is_initialized():
        return
    has_context = getattr(torch._C, "_cuda_hasPrimaryContext", None)
    for name in devices:
        if name.startswith("cuda:"):
            index = int(name.split(":", 1)[1])
            if has_context is None or has_context(index):
                torch.cuda.synchronize(index)
