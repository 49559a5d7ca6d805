"""gpumon.ui spares every later import PySide6's read of its source (pyside_scan.py), and a
module that switches on a PySide feature still has it without changing anyone else's names."""

from __future__ import annotations

import inspect
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import gpumon.ui  # what the window imports first
from gpumon.ui import pyside_scan


def test_a_module_imported_after_gpumon_ui_is_not_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    feature = sys.modules[pyside_scan.FEATURE_MODULE]
    (tmp_path / "gpumon_scan_probe.py").write_text("VALUE = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    read: list[object] = []
    real = inspect.getsource
    monkeypatch.setattr(inspect, "getsource", lambda obj: read.append(obj) or real(obj))
    import gpumon_scan_probe  # noqa: F401
    assert read == []
    assert feature.pyside_feature_dict["gpumon_scan_probe"] == 0  # ordinary names


def test_without_the_check_nothing_is_changed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "modules", {k: v for k, v in sys.modules.items()
                                         if k != pyside_scan.FEATURE_MODULE})
    assert pyside_scan.skip() is False


def test_a_feature_switched_on_by_one_module_leaves_pyqtgraph_its_names(tmp_path: Path) -> None:
    """With PySide's -1 ("ignore") for modules without "PySide6" in their source, pyqtgraph
    imported after a snake_case module failed: ``addEllipse`` was ``add_ellipse`` to it."""
    (tmp_path / "snaky.py").write_text(textwrap.dedent("""
        from PySide6.QtCore import QSize
        from __feature__ import snake_case  # noqa
        def probe():
            return QSize(3, 4).is_empty()
    """))
    code = ("import gpumon.ui, snaky, pyqtgraph\n"
            "from PySide6.QtCore import QSize\n"
            "print(snaky.probe(), QSize(1, 1).isEmpty())")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path,
                          env={**os.environ, "QT_QPA_PLATFORM": "offscreen",
                               "PYTHONPATH": f"{tmp_path}:{Path(gpumon.ui.__file__).parents[2]}"})
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["False", "False"]
