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
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(NOQT), str(REPO)]),
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
            "no:cacheprovider", "-p", "no:pytest-qt", "-p", "no:timeout", *DIRS]
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
