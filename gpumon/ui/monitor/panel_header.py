"""A GPU panel's first line: its title at the left, the clock words and the health mark at
the right, sharing the line by priority (``fit_row.FitRow``).

When the line is too narrow for all of it, in this order: the mark shows its symbol alone
("●" for "● healthy"), the bus id loses its zero PCI domain ("17:00.0"), then the bus id goes,
then the clock words keep only their reasons ("power cap, thermal"); only then is anything
cut with "…": the clock words first (down to a few characters), then the title. The mark is
never cut, so a ✖ always shows. Each cut or shortened label has its whole text in its tooltip.
"""

from __future__ import annotations

from PySide6.QtWidgets import QWidget

from gpumon.telemetry.model.types import GpuInfo
from gpumon.ui.monitor.health_mark import HealthMark
from gpumon.ui.monitor.panel_labels import title_forms, title_runs
from gpumon.ui.widgets.fit_row import FitRow
from gpumon.ui.widgets.runs_label import RunsLabel

TITLE_CUT_CHARS = 8  # the title is never cut shorter than this ("GPU 0 · N…")
HELD_CUT_CHARS = 5


class PanelHeader(FitRow):
    """``title`` (a RunsLabel) and ``health`` (its ``held`` and ``mark`` labels)."""

    def __init__(self, info: GpuInfo, parent: QWidget | None = None) -> None:
        super().__init__(gap_chars=1.0, parent=parent)
        self.setObjectName(f"panelHeader{info.index}")
        self.title = RunsLabel()
        self.title.setObjectName(f"panelTitle{info.index}")
        self.health = HealthMark(info.index, self)  # parented: never shown as a window
        title = self.add(self.title, cut_chars=TITLE_CUT_CHARS)
        held = self.add(self.health.held, right=True, cut_chars=HELD_CUT_CHARS)
        mark = self.add(self.health.mark, right=True)
        self.show_info(info)
        # the mark's word goes first, then the bus id (two steps), then the clock words'
        self.set_order(steps=(mark, title, title, held), cuts=(held, title))

    def show_info(self, info: GpuInfo) -> None:
        self.title.set_runs(title_runs(info), title_forms(info))
