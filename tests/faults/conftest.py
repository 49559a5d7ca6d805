"""Fixtures for the fault suite: the fake NVML library, windows, and a traceback guard.

The fixtures of ``tests/telemetry/conftest.py`` (fake NVML) and ``tests/ui/conftest.py``
(windows; no QThread or QTimer left running) are loaded here from their files under
private module names: conftest modules share one basename, so they cannot be imported by
name. Every fault test also fails if a traceback reached stderr or the log.
"""

from __future__ import annotations

import importlib.util
import logging
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

TESTS = Path(__file__).resolve().parent.parent
if str(TESTS / "telemetry") not in sys.path:  # for `from fakenvml import ...`
    sys.path.insert(0, str(TESTS / "telemetry"))


def _load(name: str, path: Path) -> ModuleType:
    module = sys.modules.get(name)
    if module is None:
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return module


_telemetry = _load("_gpumon_faults_telemetry_fixtures", TESTS / "telemetry" / "conftest.py")
_ui = _load("_gpumon_faults_ui_fixtures", TESTS / "ui" / "conftest.py")

fake_nvml_lib = _telemetry.fake_nvml_lib
fake_nvml_old_lib = _telemetry.fake_nvml_old_lib
fake_nvml = _telemetry.fake_nvml
fake_nvml_old = _telemetry.fake_nvml_old
make_window = _ui.make_window
_no_dangling_qthreads_or_qtimers = _ui._no_dangling_qthreads_or_qtimers
_gc_on_the_gui_thread = _ui._gc_on_the_gui_thread


@pytest.fixture(autouse=True)
def no_traceback_reaches_the_user(
    capfd: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> Iterator[None]:
    """Fail the test if "Traceback" was printed or a log record carried an exception."""
    caplog.set_level(logging.DEBUG)
    yield
    out, err = capfd.readouterr()
    sys.stdout.write(out)  # give the output back to pytest's report
    sys.stderr.write(err)
    problems = [f"stderr: {line}" for line in err.splitlines()
                if "Traceback" in line or "Fatal Python error" in line]
    problems += [f"log {r.name}: {r.getMessage()} (with exception info)"
                 for r in caplog.records if r.exc_info and r.exc_info[0] is not None]
    problems += [f"log {r.name}: {r.getMessage()}"
                 for r in caplog.records if "Traceback" in r.getMessage()]
    if problems:
        pytest.fail("a traceback reached the user:\n" + "\n".join(problems), pytrace=False)
