"""Helpers shared by tests in several folders (``tests/`` is on sys.path via its conftest).

- ``vanished_pid()``: the PID of a process that has exited and been reaped.
- ``torch_error(fn)``: what torch raises for ``fn()`` here, to compare with an Outcome.
- ``cpu_only_build``: skip marker for tests of a CPU-only torch build's errors.
- ``TEST_MACHINE``, ``STATUS_OK``, ``snapshot(t, *samples, ...)``: a reading of a machine
  named "test" whose source is fine, for the History's and the views' tests.
- ``jsonschema_or_skip()``: jsonschema, or the test skips with the reason (a machine that
  runs the suite without the test extra, a GPU machine say, may lack it).
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from types import ModuleType

import pytest

from gpumon.telemetry.model.types import (
    GpuProcess,
    GpuSample,
    MachineInfo,
    Snapshot,
    SourceState,
    SourceStatus,
)

TEST_MACHINE = MachineInfo(host_name="test", source_name="test")
STATUS_OK = SourceStatus(SourceState.OK, "ok")


def snapshot(t: float, *samples: GpuSample, processes: tuple[GpuProcess, ...] = (),
             extra: dict[int, dict[str, float]] | None = None) -> Snapshot:
    """A reading at ``t`` of TEST_MACHINE with ``samples`` and ``processes``."""
    return Snapshot(t, TEST_MACHINE, STATUS_OK, samples=samples, processes=processes,
                    extra=extra or {})


def jsonschema_or_skip() -> ModuleType:
    """The jsonschema module; where it is not installed the test skips, saying so."""
    return pytest.importorskip("jsonschema", reason=(
        "jsonschema is not installed (pip install -e '.[test]'): the JSON output is checked "
        "against docs/snapshot.schema.json with it"))


def vanished_pid() -> int:
    """The PID of a process that has exited and been reaped (nothing has it now)."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def torch_error(fn: Callable[[], object]) -> tuple[str, str] | None:
    """(type name as an Outcome writes it, message) of what ``fn()`` raises right now, or
    None when it succeeds."""
    from gpumon.playground.kernel.explain import qualified_type_name

    try:
        fn()
    except Exception as exc:  # noqa: BLE001 - we want whatever torch raises
        return qualified_type_name(exc), str(exc)
    return None


def _cuda_built() -> bool:
    import torch

    return bool(torch.backends.cuda.is_built())


cpu_only_build = pytest.mark.skipif(_cuda_built(),
                                    reason="checks the errors of a CPU-only torch build")
