"""A GPU panel's health beside its title: why the clocks are held down, in words
("clocks held down: power cap, thermal"), and a health mark (ok / warning / error) whose
tooltip gives the reasons. The words come from telemetry/model/health.py; this only shows
them. Each has a shorter form for a narrow header ("power cap, thermal"; the mark's symbol
alone), which ``PanelHeader`` chooses by the room there is."""

from __future__ import annotations

from PySide6.QtGui import QFont
from PySide6.QtWidgets import QWidget

from gpumon.i18n import tr
from gpumon.telemetry.model.health import Health, Level
from gpumon.ui.widgets.runs_label import RunsLabel, TextRun

HELD_COLOR = "#e65100"
MARKS = {Level.OK: ("●", "#2e7d32"), Level.WARNING: ("▲", "#ef6c00"),
         Level.ERROR: ("✖", "#c62828")}


class HealthMark:
    """``held``: the clock words (hidden when none); ``mark``: ● ok, ▲ warning, ✖ error.
    Both are labels of the panel's header row, which places them."""

    def __init__(self, index: int, parent: QWidget | None = None) -> None:
        bold = QFont()
        bold.setBold(True)  # only the weight: the size still follows the application's zoom
        self.held = RunsLabel(parent)
        self.held.setObjectName(f"clocksHeld{index}")
        self.held.setFont(bold)
        self.held.hide()
        self.mark = RunsLabel(parent)  # painted runs, like the panel's other per-tick labels
        self.mark.setObjectName(f"healthMark{index}")
        self.mark.setAccessibleName(tr("GPU {index} health", index=index))
        self.mark.setFont(bold)
        self.level: Level | None = None
        self._held = ("", "")  # the clock words shown, and their shorter form
        self.show_health("", Health(Level.OK))

    def show_health(self, held: str, health: Health | None, held_short: str = "") -> None:
        """Set only what changed (called every tick); ``held_short``: the reasons alone, for
        a narrow header; ``health`` None: no mark (a lost GPU, whose panel says so)."""
        if (held, held_short) != self._held:
            self._held = (held, held_short)
            runs = [TextRun(held, bold=True, color=HELD_COLOR)] if held else []
            short = [[TextRun(held_short, bold=True, color=HELD_COLOR)]] if held_short else []
            self.held.set_runs(runs, short if held else [])
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
            self.mark.set_runs([TextRun(text, bold=True, color=color)],
                               [[TextRun(symbol, bold=True, color=color)]])
        if tip != self.mark.toolTip():
            self.mark.setToolTip(tip)
        self.level = health.level
