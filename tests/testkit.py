"""Helpers shared by tests in several folders (``tests/`` is on sys.path via its conftest).

- ``vanished_pid()``: the PID of a process that has exited and been reaped.
- ``torch_error(fn)``: what torch raises for ``fn()`` here, to compare with an Outcome.
- ``cpu_only_build``: skip marker for tests of a CPU-only torch build's errors.
- ``TEST_MACHINE``, ``STATUS_OK``, ``snapshot(t, *samples, ...)``: a reading of a machine
  named "test" whose source is fine, for the History's and the views' tests.
- ``ExporterReading``: the exporter's reader and pages over a source, without HTTP.
- ``wait_until(check, timeout_s, what)``: wait for a condition, with a deadline.
- ``jsonschema_or_skip()``: jsonschema, or the test skips with the reason (a machine that
  runs the suite without the test extra, a GPU machine say, may lack it).
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable
from types import ModuleType

import pytest

from gpumon.telemetry.exporter.page import Page, Pages
from gpumon.telemetry.exporter.reader import GpuReader
from gpumon.telemetry.exporter.series import DEFAULT_OPTIONS, Options
from gpumon.telemetry.model.types import (
    GpuProcess,
    GpuSample,
    MachineInfo,
    Snapshot,
    Source,
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


def wait_until(check: Callable[[], bool], timeout_s: float, what: str) -> None:
    """Return once ``check()`` is true; fail, naming ``what``, after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while not check():
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout_s:g} s waiting for {what}")
        time.sleep(0.01)


class ExporterReading:
    """The exporter's own ``GpuReader`` over ``factory()``'s source, publishing into its own
    ``Pages`` as ``gpumon exporter`` does, without the HTTP server: a page is what a scrape
    would get. Use it as a context manager (the reader thread stops at the end)."""

    def __init__(self, factory: Callable[[], Source], host: str = "h",
                 options: Options = DEFAULT_OPTIONS, interval_s: float = 3600.0) -> None:
        self.pages = Pages(host, options)
        # A read timeout no test reaches: the watchdog never publishes a "not answering" page.
        self.reader = GpuReader(factory, self.pages.publish, interval_s, read_timeout_s=600.0)

    def __enter__(self) -> ExporterReading:
        self.reader.start()  # publishes the starting page: ``published`` is 1
        return self

    def __exit__(self, *_: object) -> None:
        assert self.reader.stop(timeout_s=5.0), "a driver call still hangs"

    def _published(self, count: int, timeout_s: float) -> Page:
        wait_until(lambda: self.pages.published >= count, timeout_s, "a reading")
        return self.pages.current

    def first(self, timeout_s: float = 30.0) -> Page:
        """The page of the first reading (each reading publishes one page after the
        starting one)."""
        return self._published(2, timeout_s)

    def fresh(self, timeout_s: float = 30.0) -> Page:
        """The page of a reading that began after this call: reading ``n + 1`` may be under
        way now, so reading ``n + 2`` (page ``n + 3``). Needs a short ``interval_s``."""
        return self._published(self.reader.readings + 3, timeout_s)


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
    except Exception as exc:  # we want whatever torch raises
        return qualified_type_name(exc), str(exc)
    return None


def built_with_cuda(version_py: str) -> bool:
    """Whether the text of a torch's ``torch/version.py`` says it was built with CUDA (or
    ROCm, which torch counts as CUDA): ``cuda`` or ``hip`` is a string, not None."""
    import ast

    for node in ast.parse(version_py).body:
        target = node.target if isinstance(node, ast.AnnAssign) else (
            node.targets[0] if isinstance(node, ast.Assign) else None)
        if (isinstance(target, ast.Name) and target.id in ("cuda", "hip")
                and isinstance(node.value, ast.Constant) and node.value.value is not None):
            return True
    return False


def _cuda_built() -> bool:
    """``torch.backends.cuda.is_built()``, read from the installed torch's version file
    without importing torch: importing this module imported torch, 2.5 s of a core, in every
    pytest that collects a test using testkit, also where nothing else there needs torch (a
    child pytest that the suite's own tests start)."""
    import importlib.util
    from pathlib import Path

    spec = importlib.util.find_spec("torch")
    if spec is None or spec.origin is None:
        return False
    return built_with_cuda(Path(spec.origin).with_name("version.py").read_text("utf-8"))


cpu_only_build = pytest.mark.skipif(_cuda_built(),
                                    reason="checks the errors of a CPU-only torch build")


def running(pid: int) -> bool:
    """Whether process ``pid`` exists and is not a zombie (the tests' process-table check)."""
    import psutil

    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def still_running(pids: list[int]) -> list[int]:
    """Those of ``pids`` that are still running (see :func:`running`)."""
    return [pid for pid in pids if running(pid)]
