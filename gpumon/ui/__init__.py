"""Qt views: the only package that imports PySide6 and pyqtgraph."""

from gpumon.ui import _pyside_guard

_pyside_guard.apply()
