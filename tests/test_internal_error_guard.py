"""The suite's guard against gpumon's own bugs (tests/conftest.py): a test during which an
InternalError was produced fails, unless it is marked ``internal_error``. Checked by running
a small suite with that conftest as a plugin in a fresh pytest."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

INNER = '''
import pytest

from gpumon.playground.data import actions as act
from gpumon.playground.kernel import ops
from gpumon.playground.kernel.engine import Engine

pytestmark = pytest.mark.slow  # real servers or subprocesses: seconds each (docs/development.md)


def broken(values, action, run):
    return values.no_such_attribute


def test_an_unmarked_bug(monkeypatch):
    monkeypatch.setitem(ops.HANDLERS, act.DeviceCount, broken)
    out = Engine().run(act.DeviceCount())
    assert out.error is not None  # the test itself would pass: the guard must fail it


@pytest.mark.internal_error
def test_a_marked_bug(monkeypatch):
    monkeypatch.setitem(ops.HANDLERS, act.DeviceCount, broken)
    assert Engine().run(act.DeviceCount()).error.type_name == "InternalError"


def test_no_bug():
    assert Engine().run(act.DeviceCount()).ok
'''


def test_an_internal_error_fails_the_test_unless_it_is_marked(tmp_path: Path) -> None:
    (tmp_path / "test_inner.py").write_text(INNER)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p))
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "tests.conftest", "-p", "no:cacheprovider",
         "-c", os.devnull, "--rootdir", str(tmp_path), "-q", "-rE",
         "-W", "ignore::pytest.PytestUnknownMarkWarning", str(tmp_path / "test_inner.py")],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False)
    out = done.stdout
    # the unmarked test passes its body and errors at teardown: 3 passed, 1 error
    assert "3 passed, 1 error" in out, out + done.stderr
    assert "test_inner.py::test_an_unmarked_bug" in out.split("short test summary")[-1]
    assert "gpumon's own code failed during this test" in out
    assert "AttributeError" in out  # the traceback of the bug is in the report
