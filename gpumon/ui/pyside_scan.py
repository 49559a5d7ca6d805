"""Spare every later import PySide6's scan of its source.

Once ``PySide6.QtCore`` is imported, PySide calls ``feature_imported(module)`` after every
import in the process (its ``__feature__`` machinery, for modules that switch on
``snake_case`` or ``true_property``). The first time it sees a module it decides whether the
module uses PySide by reading the module's whole source with ``inspect.getsource`` and
searching it for "PySide6". When the window starts, that is numpy's 71 modules, pyqtgraph's
131 and gpumon's 94: 130 ms of the start-up, measured around the check itself (the same
~170 ms by the clock, with and without it, on ``import gpumon.ui.window.launch``).

``skip()`` answers "uses PySide" for every module without reading its source: each gets 0,
"no feature", PySide's ordinary names, which is what gpumon and the libraries it loads use
(none imports ``__feature__``). Not -1, "ignore", what PySide gives a module without
"PySide6" in its source: an ignored module keeps whatever feature the last module switched
on, so after one module's ``from __feature__ import snake_case`` pyqtgraph failed to import
(``QPainterPath.addEllipse`` was ``add_ellipse`` to it). A module that imports
``__feature__`` still gets its features: that import sets its own entry. Where PySide has no
such check (another version), nothing is changed.
"""

from __future__ import annotations

import importlib
import sys
from types import ModuleType

FEATURE_MODULE = "PySide6.support.feature"
CHECK = "_mod_uses_pyside"


def _uses_pyside(module: ModuleType) -> bool:
    return True


def skip() -> bool:
    """Answer PySide's per-import check without reading the module's source; True when
    this PySide has the check (and it is answered from now on). Without PySide6 (a machine
    that runs gpumon's Qt-free parts only) nothing is done."""
    try:
        importlib.import_module("PySide6.QtCore")  # installs the hook answered here
    except ImportError:
        return False
    feature = sys.modules.get(FEATURE_MODULE)
    if feature is None or not callable(getattr(feature, CHECK, None)):
        return False
    setattr(feature, CHECK, _uses_pyside)
    return True
