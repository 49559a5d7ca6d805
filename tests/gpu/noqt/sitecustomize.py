"""Hides Qt from every Python started with this folder on PYTHONPATH, as on a GPU machine
that has torch and NVML but no PySide6, pyqtgraph, pytest-qt or pytest-timeout.

``tests/gpu/check.py --dry-run`` and ``tests/gpu/test_check_dry_run.py`` use it to find what
breaks there (a conftest that imports Qt, an ini key of a plugin that is missing) before a GPU
machine does. An import of a hidden package raises ModuleNotFoundError, as if uninstalled.
"""

from __future__ import annotations

import importlib.abc
import os
import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from types import ModuleType

#: Top-level packages hidden; GPUMON_HIDE_MODULES (comma-separated) replaces the list.
HIDDEN = ("PySide6", "shiboken6", "pyqtgraph", "pytestqt", "pytest_timeout")


class _Hide(importlib.abc.MetaPathFinder):
    def __init__(self, names: Sequence[str]) -> None:
        self.names = frozenset(names)

    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> ModuleSpec | None:
        if fullname.partition(".")[0] in self.names:
            raise ModuleNotFoundError(f"No module named {fullname!r} (hidden: a machine "
                                      "without Qt is simulated)", name=fullname)
        return None


_names = os.environ.get("GPUMON_HIDE_MODULES")
sys.meta_path.insert(0, _Hide(_names.split(",") if _names else HIDDEN))
