"""Qt views: the only package that imports PySide6 and pyqtgraph."""

from gpumon.ui import pyside_scan

pyside_scan.skip()  # before pyqtgraph, numpy and the views are imported (pyside_scan.py)
