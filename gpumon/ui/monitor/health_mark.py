"""A GPU panel's health line beside its title: why the clocks are held down, in words
("clocks held down: power cap, thermal"), and a health mark (ok / warning / error) whose
tooltip gives the reasons. The words come from telemetry/model/health.py; this only shows them."""

from __future__ import annotations

from PySide6.QtGui import QFont
from PySide6.QtWidgets import QHBoxLayout, QSizePolicy, QWidget

from gpumon.i18n import tr
from gpumon.telemetry.model.health import Health, Level
from gpumon.ui.widgets.runs_label import RunsLabel, TextRun

HELD_COLOR = "#e65100"
MARKS = {Level.OK: ("●", "#2e7d32"), Level.WARNING: ("▲", "#ef6c00"),
         Level.ERROR: ("✖", "#c62828")}


class HealthMark(QWidget):
    """``held``: the clock words (hidden when none); ``mark``: ● ok, ▲ warning, ✖ error."""

    def __init__(self, index: int, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.held = RunsLabel()
        self.held.setObjectName(f"clocksHeld{index}")
        # as wide as its words, cut with "…" when the panel is narrow; set beside the mark
        self.held.setSizePolicy(QSizePolicy.Policy.Maximum, QSizePolicy.Policy.Preferred)
        bold = QFont()
        bold.setBold(True)  # its size hint measures the bold words (the size follows the zoom)
        self.held.setFont(bold)
        self.held.hide()
        self.mark = RunsLabel()  # painted runs, like the panel's other per-tick labels
        self.mark.setObjectName(f"healthMark{index}")
        self.mark.setAccessibleName(tr("GPU {index} health", index=index))
        self.level: Level | None = None
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(8)
        layout.addStretch(1)
        layout.addWidget(self.held)
        layout.addWidget(self.mark)
        self.mark.setFont(bold)  # measured as painted
        self.show_health("", Health(Level.OK))

    def show_health(self, held: str, health: Health | None) -> None:
        """Set only what changed (called every tick); ``health`` None: no mark (a lost GPU,
        whose panel says so itself)."""
        if held != self.held.text():
            self.held.set_runs([TextRun(held, bold=True, color=HELD_COLOR)] if held else [])
            self.held.setToolTip(held)
            self.held.setVisible(bool(held))
        self.mark.setVisible(health is not None)
        if health is None:
            self.level = None
            return
        symbol, color = MARKS[health.level]
        text = f"{symbol} {health.word}"
        tip = "\n".join(health.reasons) or tr("No ECC, memory repair or XID problem seen.")
        if text != self.mark.text():
            self.mark.set_runs([TextRun(text, bold=True, color=color)])
        if tip != self.mark.toolTip():
            self.mark.setToolTip(tip)
        self.level = health.level
