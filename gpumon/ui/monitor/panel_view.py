"""What a view laid out under a GPU panel's graphs offers the panel (``GpuPanel.add_view``):
the panel hands it every reading and, when it draws its curves, the History's series, so the
view is drawn exactly when the panel is (never while no one sees it: grid.py)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from PySide6.QtWidgets import QWidget

from gpumon.telemetry.model.types import GpuSample

SeriesFn = Callable[[int, str], "tuple[np.ndarray, np.ndarray]"]  # (gpu, key) -> (t, v)


class PanelView(QWidget):
    """A view under a panel's graphs (activity_view.py); the defaults do nothing."""

    def show_sample(self, sample: GpuSample | None) -> None:
        """The current reading: on every update of the panel, curves or not."""

    def draw(self, series: SeriesFn, t_ref: float) -> None:
        """Redraw from ``series`` with x = 0 at ``t_ref``: when the panel draws its curves."""

    def needed_width(self) -> int:
        """The least width it needs to show its text whole, in its font of the moment (the
        panel's minimum width counts it)."""
        return 0

    def wanted_width(self) -> int:
        """The width it shows best at (the grid gives a panel that much where it can: each
        column at least as wide); ``needed_width`` unless the view can fold its text."""
        return self.needed_width()

    def needed_height(self, line_height: int) -> int:
        """The least height it needs where a text line is ``line_height`` pixels tall (the
        panel's minimum height counts it: the grid scrolls rather than squeeze it)."""
        return 0
