"""Hides Qt from every Python started with this folder on PYTHONPATH, as on a GPU machine
that has torch and NVML but no PySide6, pyqtgraph, pytest-qt or pytest-timeout.

``tests/gpu/check.py --dry-run`` and ``tests/gpu/test_without_qt.py`` use it to find what
breaks there (a conftest that imports Qt, an ini key of a plugin that is missing) before a GPU
machine does. The standard path finder is replaced by one that does not see the hidden
packages, so ``import`` raises ModuleNotFoundError and ``importlib.util.find_spec`` returns
None, exactly as when they are not installed.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec, PathFinder
from types import ModuleType

#: Top-level packages hidden; GPUMON_HIDE_MODULES (comma-separated) replaces the list.
HIDDEN = frozenset(os.environ.get("GPUMON_HIDE_MODULES", "").split(",")) - {""} or frozenset(
    ("PySide6", "shiboken6", "pyqtgraph", "pytestqt", "pytest_timeout"))


class _HidingPathFinder(PathFinder):
    """The standard path finder, blind to the hidden packages."""

    @classmethod
    def find_spec(cls, fullname: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> ModuleSpec | None:
        if fullname.partition(".")[0] in HIDDEN:
            return None
        return super().find_spec(fullname, path, target)


sys.meta_path[:] = [_HidingPathFinder if f is PathFinder else f for f in sys.meta_path]
