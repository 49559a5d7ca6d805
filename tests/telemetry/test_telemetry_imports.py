"""Layering: the telemetry package and the CLI import no Qt, no torch (and mostly no pynvml)."""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from fnmatch import fnmatch
from pathlib import Path

QT_AND_TORCH = ("PySide6", "pyqtgraph", "torch")
ROOT = Path(__file__).resolve().parents[2]


def pynvml_importers(root: Path) -> set[str]:
    """The files under ``root/gpumon`` that import pynvml anywhere (lazy imports included)."""
    found = set()
    for path in (root / "gpumon").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            else:
                continue
            if any(name.split(".")[0] == "pynvml" for name in names):
                found.add(path.relative_to(root).as_posix())
    return found


def test_only_the_nvml_modules_import_pynvml() -> None:
    found = pynvml_importers(ROOT)
    assert "gpumon/telemetry/nvml/source.py" in found  # the scan reads the files
    assert [f for f in found if not fnmatch(f, "gpumon/telemetry/nvml/*.py")] == []


def _modules_after(code: str) -> set[str]:
    script = textwrap.dedent(code) + "\nimport sys\nprint('\\n'.join(sys.modules))\n"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return {name.split(".")[0] for name in done.stdout.split()}


def test_qt_free_modules_import_no_qt_torch_or_pynvml() -> None:
    loaded = _modules_after("""
        import gpumon.telemetry
        import gpumon.telemetry.model.types, gpumon.telemetry.model.metrics
        import gpumon.telemetry.sources.simulated, gpumon.telemetry.sources.sampler
        import gpumon.telemetry.history.store, gpumon.text.smi_text
        import gpumon.cli.main
        """)
    assert "gpumon" in loaded
    for name in (*QT_AND_TORCH, "pynvml"):
        assert name not in loaded, name


def test_every_telemetry_module_imports_no_qt_or_torch() -> None:
    loaded = _modules_after("""
        import importlib, pkgutil
        import gpumon.telemetry as pkg
        names = [m.name for m in pkgutil.iter_modules(pkg.__path__, pkg.__name__ + ".")]
        assert len(names) >= 6, names
        for name in names:
            importlib.import_module(name)
        """)
    for name in QT_AND_TORCH:
        assert name not in loaded, name


def test_simulated_once_imports_no_qt_or_torch() -> None:
    loaded = _modules_after("""
        import contextlib, io
        from gpumon.cli.main import main
        with contextlib.redirect_stdout(io.StringIO()):
            assert main(["--simulate", "2", "--once"]) == 0
        """)
    for name in QT_AND_TORCH:
        assert name not in loaded, name
