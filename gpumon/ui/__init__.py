"""Qt views: the only package that imports PySide6 and pyqtgraph."""
