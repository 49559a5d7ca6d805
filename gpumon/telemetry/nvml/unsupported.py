"""The NVML calls that said "not supported", so that NvmlSource does not ask them every tick.

A GPU that lacks a reading (a fan, the PCIe replay counter, a power management limit) says so
on every call, and an H200 takes 0.18 ms to say it; asked again every few minutes, a reading
that becomes supported (a driver update, a mode change) still shows up.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

#: A call that said "not supported" is asked again after this many seconds (an H200 takes
#: 0.18 ms to say it, for the fan, the PCIe replay counter and the power management limit).
UNSUPPORTED_RECHECK_S = 300.0


class Unsupported:
    """The calls that said "not supported", by function and arguments, and when to ask each
    again. The first argument (a GPU's handle: a ctypes pointer, which has no hash) counts by
    identity; the entry keeps it alive, so its identity is not reused while remembered.
    ``fns`` is looked at first: a dict lookup by the function's identity."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self.fns: dict[Callable[..., Any], dict[tuple[Any, ...], tuple[float, Any]]] = {}

    def remember(self, fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
        try:
            self.fns.setdefault(fn, {})[_key(args)] = (
                self._clock() + UNSUPPORTED_RECHECK_S, args)
        except TypeError:  # unhashable arguments (a list of field ids): asked each time
            pass

    def skip(self, fn: Callable[..., Any], args: tuple[Any, ...]) -> bool:
        """Whether ``fn(*args)`` said "not supported" less than UNSUPPORTED_RECHECK_S ago."""
        try:
            key = _key(args)
            known = self.fns[fn].get(key)
        except TypeError:
            return False
        if known is None:
            return False
        if self._clock() < known[0]:
            return True
        del self.fns[fn][key]  # ask again; a new "not supported" is remembered again
        return False

    def forget(self) -> None:
        """Ask every call again (NVML was shut down: its handles are gone)."""
        self.fns.clear()


def _key(args: tuple[Any, ...]) -> tuple[Any, ...]:
    return (id(args[0]), *args[1:]) if args else ()
