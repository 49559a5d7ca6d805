"""Fixtures for the fault suite: the fake NVML library, windows, and a traceback guard.

The fixtures of ``tests/telemetry/conftest.py`` (fake NVML) and ``tests/ui/conftest.py``
(windows; no QThread or QTimer left running) are loaded here from their files under
private module names: conftest modules share one basename, so they cannot be imported by
name. Every fault test also fails if a traceback reached stderr or the log. ``display``: a
fresh Xvfb for the tests on a real X server.
"""

from __future__ import annotations

import importlib.util
import logging
import subprocess
import sys
import time
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


def _free_display() -> int:
    for n in range(99, 400):
        if not Path(f"/tmp/.X11-unix/X{n}").exists() and not Path(f"/tmp/.X{n}-lock").exists():
            return n
    raise RuntimeError("no free X display number")


@pytest.fixture(scope="module")
def display() -> Iterator[str]:
    """A fresh Xvfb on a free display number, for the tests that need a real X server."""
    n = _free_display()
    xvfb = subprocess.Popen(
        # -noreset: by default Xvfb resets when its last client leaves, and an app
        # starting during that reset cannot connect ("could not connect to display").
        ["Xvfb", f":{n}", "-screen", "0", "1280x1024x24", "-nolisten", "tcp", "-noreset"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    socket_path = Path(f"/tmp/.X11-unix/X{n}")
    deadline = time.monotonic() + 15
    while not socket_path.exists():
        if xvfb.poll() is not None or time.monotonic() > deadline:
            xvfb.kill()
            err = xvfb.communicate()[1].decode(errors="replace")
            pytest.skip(f"Xvfb :{n} did not start: {err.strip()[:300]}")
        time.sleep(0.05)
    yield f":{n}"
    xvfb.terminate()
    try:
        xvfb.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        xvfb.kill()
        xvfb.communicate()
