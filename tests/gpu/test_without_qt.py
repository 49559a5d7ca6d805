"""The tests a GPU machine runs (tests/gpu, tests/telemetry, tests/playground) collect where
there is torch and NVML but no Qt: PySide6, pyqtgraph, pytest-qt and pytest-timeout hidden by
tests/gpu/noqt, as on such a machine. Runs everywhere; needs no GPU."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # real servers or subprocesses: seconds each (docs/development.md)

REPO = Path(__file__).resolve().parents[2]
NOQT = REPO / "tests" / "gpu" / "noqt"
DIRS = ("tests/gpu", "tests/telemetry", "tests/playground")


QT = "PySide6,shiboken6,pyqtgraph,pytestqt,pytest_timeout"


def _env(hidden: str = QT) -> dict[str, str]:
    # not an xdist worker, whoever runs this test (pytest-benchmark up to 5.2 takes
    # PYTEST_XDIST_WORKER for xdist and warns at configure: an INTERNALERROR here)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST")}
    return {**env, "PYTHONPATH": os.pathsep.join([str(NOQT), str(REPO)]),
            "GPUMON_HIDE_MODULES": hidden}


def test_the_blocker_hides_qt_and_keeps_the_rest() -> None:
    code = ("import importlib, importlib.util\n"
            "assert importlib.util.find_spec('PySide6') is None\n"
            "for m in ('PySide6', 'pyqtgraph', 'pytestqt', 'pytest_timeout'):\n"
            "    try:\n        importlib.import_module(m)\n"
            "    except ModuleNotFoundError:\n        pass\n"
            "    else:\n        raise SystemExit(m + ' was imported')\n"
            "import pynvml, psutil, prometheus_client, gpumon.telemetry.nvml.source\n")
    proc = subprocess.run([sys.executable, "-c", code], env=_env(), capture_output=True,
                          text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize("hidden", [QT, QT + ",numpy"], ids=["no Qt", "no Qt, no numpy"])
def test_the_gpu_machine_s_test_folders_collect_without_qt(hidden: str) -> None:
    """Without numpy too: torch does not require it, and warns at import where it is missing
    (pyproject.toml ignores that warning); the History's tests skip, with the reason."""
    args = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-rs", "-p",
            "no:cacheprovider", "-p", "no:pytest-qt", "-p", "no:timeout", "-p", "no:benchmark",
            *DIRS]
    proc = subprocess.run(args, cwd=REPO, env=_env(hidden), capture_output=True, text=True,
                          timeout=300, check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out  # an ImportError in a conftest, or an unknown ini key
    assert "error" not in out.splitlines()[-1].lower(), out
    assert "tests/gpu/test_kernel_cuda.py::" in out
    assert "tests/gpu/test_playground_cuda.py::" in out
    assert "test_ui_cuda.py" in out and "needs PySide6" in out  # skipped, with the reason
    if "numpy" in hidden:
        assert "test_history.py" in out and "numpy is not installed" in out


OPTIONAL = "bcrypt,jsonschema,yaml,babel"  # the test extra's, not listed for a GPU machine


def test_without_the_optional_test_packages_their_tests_skip_with_the_reason() -> None:
    """bcrypt, PyYAML, jsonschema and Babel are in the test extra but not on every machine
    that runs the suite (the H200 had neither bcrypt nor jsonschema, and collection broke)."""
    tests = ["tests/telemetry/test_exporter_tls.py", "tests/test_i18n.py", "tests/test_zh_terms.py",
             "tests/telemetry/test_health_terminal.py::"
             "test_once_json_has_the_health_fields_null_where_unsupported",
             "tests/telemetry/test_nvml_procutil.py::test_json_lists_the_new_fields",
             "tests/test_cli_report.py::test_schema_rejects_what_it_should"]
    args = [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", "-p",
            "no:pytest-qt", "-p", "no:timeout", "-p", "no:benchmark", "-p", "no:xdist", *tests]
    proc = subprocess.run(args, cwd=REPO, env=_env(QT + "," + OPTIONAL), capture_output=True,
                          text=True, timeout=300, check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert "error" not in out.splitlines()[-1].lower() and "passed" not in out, out
    for reason in ("bcrypt is not installed", "Babel is not installed",
                   "jsonschema is not installed"):
        assert reason in out, out
    assert "SKIPPED [3] " in out and "6 skipped" in out, out  # the three JSON schema checks
