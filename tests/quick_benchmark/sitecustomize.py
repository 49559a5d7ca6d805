"""Every Python process the tests start (kernels, the fork server, ``gpumon lesson``, the GPU
check's dry run) runs the lesson's timing step with a budget of ``QUICK_BENCHMARK_S`` a case
instead of the 1 s its code asks: tests/conftest.py puts this folder on PYTHONPATH, and
Python imports ``sitecustomize`` at start-up.

The timing step (playground/lesson/step_code.py ``BENCHMARK``) measures each case with
``torch.utils.benchmark.Timer.blocked_autorange(min_run_time=1)`` on all threads: about 2 s
of both cores each time a kernel runs it. What the tests check, a median for every size on
every device, does not depend on the budget. Nothing is imported here: the budget is set when
the program itself imports ``torch.utils.benchmark`` (a program that never does is not
touched, and the window never imports torch). Where ``GPUMON_TEST_FULL_BENCHMARKS`` is set
when a case runs (tests/gpu: a GPU's utilization graph must show the loop), the budget is
the one the code asks.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import os
import sys
from typing import Any

QUICK_BENCHMARK_S = 0.05
_TIMER = "torch.utils.benchmark.utils.timer"


def quicken(timer_class: Any) -> None:
    """``timer_class.blocked_autorange`` with its ``min_run_time`` capped."""
    real = timer_class.blocked_autorange
    if getattr(real, "quickened", False):
        return

    def quick(self: Any, callback: Any = None, min_run_time: float = 0.2) -> Any:
        if not os.environ.get("GPUMON_TEST_FULL_BENCHMARKS"):
            min_run_time = min(min_run_time, QUICK_BENCHMARK_S)
        return real(self, callback, min_run_time=min_run_time)

    quick.quickened = True  # type: ignore[attr-defined]
    timer_class.blocked_autorange = quick


class _QuickTimer(importlib.abc.MetaPathFinder):
    """Finds nothing itself; when torch's timer module is found, its loader quickens
    ``Timer`` right after the module has run."""

    def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
        if name != _TIMER:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return spec
        loader = spec.loader
        run = loader.exec_module

        def exec_module(module: Any) -> None:
            run(module)
            quicken(module.Timer)

        loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


sys.meta_path.insert(0, _QuickTimer())
