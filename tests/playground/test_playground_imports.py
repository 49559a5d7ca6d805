"""Layering: importing the playground pays for neither torch nor Qt (fresh interpreters)."""

from __future__ import annotations

import subprocess
import sys

import pytest

MODULES = ["gpumon.playground", "gpumon.playground.kernel.engine",
           "gpumon.playground.data.actions", "gpumon.playground.kernel.torch_devices",
           "gpumon.playground.data.values", "gpumon.playground.kernel.explain",
           "gpumon.playground.kernel.memory", "gpumon.playground.data.outcome",
           "gpumon.playground.kernel.ops"]


def run_fresh(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_importing_the_engine_does_not_import_torch_or_qt() -> None:
    imports = "; ".join(f"import {m}" for m in MODULES)
    out = run_fresh(f"import sys; {imports}; "
                    "print(sorted(m for m in sys.modules if m.split('.')[0] in "
                    "('torch', 'PySide6', 'pyqtgraph')))")
    assert out == "[]"


@pytest.mark.slow
def test_engine_loads_torch_on_first_action_and_its_first_ops_stay_light() -> None:
    """The size guards of a + b, a * b and a ** 2 work out the result without meta tensors:
    the first elementwise op on a meta tensor imports torch._dynamo (over a second of CPU,
    in the first such action of every kernel)."""
    out = run_fresh(
        "import sys; from gpumon.playground.kernel.engine import Engine; "
        "from gpumon.playground.data import actions as act; e = Engine(); "
        "a = 'torch' in sys.modules; o = e.run(act.IsAvailable()); "
        "print(a, e.is_loaded, 'torch' in sys.modules, o.ok); "
        "e.run(act.CreateTensor('x', '[1, 2, 3]')); "
        "ok = [e.run(act.Compute('y', op, 'x', 'x')).ok for op in ('add', 'mul')]; "
        "ok.append(e.run(act.Compute('y', 'pow', 'x', exponent=2)).ok); "
        "print(ok, 'torch._dynamo' in sys.modules)")
    assert out.splitlines() == ["False True True True", "[True, True, True] False"]


def test_memory_counters_without_torch_are_empty_and_do_not_import_it() -> None:
    out = run_fresh("import sys; "
                    "from gpumon.playground.kernel.memory import torch_memory_counters; "
                    "print(torch_memory_counters(), 'torch' in sys.modules)")
    assert out == "{} False"


@pytest.mark.slow
def test_memory_counters_leave_cuda_uninitialised() -> None:
    """With torch loaded but CUDA never used, there are no counters, and asking for them
    does not start CUDA (that would cost a context on every GPU). The figures themselves are
    checked against torch on a real GPU: tests/gpu/test_playground_cuda.py."""
    out = run_fresh("import torch; "
                    "from gpumon.playground.kernel.memory import torch_memory_counters;"
                    " print(torch_memory_counters(), torch.cuda.is_initialized())")
    assert out == "{} False"
