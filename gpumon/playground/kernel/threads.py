"""How many CPU threads torch may use, so that a long action leaves the window a core.

torch's intra-op pool takes every physical core by default. On a small machine (2 cores) a
long matrix product then starves the GUI thread: measured, its timers paused 300-400 ms
while the kernel's matmul ran. So when the engine loads torch it lowers the pool to
``cores - 1`` (never below 1, never raising it), unless the person chose a number
themselves with ``OMP_NUM_THREADS`` or ``MKL_NUM_THREADS``, which torch honours and so do
we. The pure :func:`plan_threads` decides; :func:`limit_torch_threads` applies it. The
result is shown in the playground's status line, so a teacher timing CPU against GPU knows
how many cores the CPU side had.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gpumon.i18n import ntr

#: Environment variables torch reads for its default thread count; set means "my choice".
ENV_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS")


@dataclass(frozen=True)
class ThreadPlan:
    """torch's CPU thread count after loading, out of the cores this process may use."""

    cores: int
    torch_threads: int
    reason: str  # "lowered" (by gpumon), "env" (the person's variable), "kept" (already fewer)
    env: str = ""  # "OMP_NUM_THREADS=2" when reason is "env"

    def text(self) -> str:
        """``1 of 2 cores for torch, so the window stays responsive``, and the other cases,
        in the chosen language."""
        n, threads = self.cores, self.torch_threads
        if self.reason == "env":
            return ntr("{threads} of {n} core for torch ({env})",
                       "{threads} of {n} cores for torch ({env})", n, threads=threads,
                       env=self.env)
        if self.torch_threads < self.cores:
            return ntr("{threads} of {n} core for torch, so the window stays responsive",
                       "{threads} of {n} cores for torch, so the window stays responsive", n,
                       threads=threads)
        return ntr("{threads} of {n} core for torch: long actions may slow the window",
                   "{threads} of {n} cores for torch: long actions may slow the window", n,
                   threads=threads)


def usable_cores() -> int:
    """CPUs this process may run on (its affinity, e.g. a container's share), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not on Linux
        return max(1, os.cpu_count() or 1)


def explicit_env(environ: Mapping[str, str]) -> str:
    """``OMP_NUM_THREADS=2`` for the first thread variable set to a number, else ``""``."""
    for name in ENV_VARS:
        value = environ.get(name, "").strip()
        if value.isdigit() and int(value) > 0:
            return f"{name}={value}"
    return ""


def plan_threads(current: int, cores: int, environ: Mapping[str, str]) -> ThreadPlan:
    """Keep one core for the window: ``cores - 1`` threads at most, never more than now."""
    env = explicit_env(environ)
    if env:
        return ThreadPlan(cores, current, "env", env)
    target = max(1, cores - 1)
    if current > target:
        return ThreadPlan(cores, target, "lowered")
    return ThreadPlan(cores, current, "kept")


def limit_torch_threads(torch: Any, environ: Mapping[str, str] | None = None,
                        cores: int | None = None) -> ThreadPlan:
    """Apply :func:`plan_threads` to ``torch`` (process-wide); returns what it now uses."""
    plan = plan_threads(int(torch.get_num_threads()), cores or usable_cores(),
                        os.environ if environ is None else environ)
    if plan.reason == "lowered":
        torch.set_num_threads(plan.torch_threads)
    return ThreadPlan(plan.cores, int(torch.get_num_threads()), plan.reason, plan.env)
