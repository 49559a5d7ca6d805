"""A combo box as wide as its longest item, in the font of the moment, and its list uncut.

Qt's AdjustToContents policy updates the size hint when items come and go and when the font
changes, but not the minimum size hint, which a squeezed layout goes down to: a device field
made when it held only "cpu" kept a 7-character minimum and showed "a:0 — 本机不可用", and
its list, no wider than the field, cut the middle out of each item ("cuda:0…不可用").
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Qt
from PySide6.QtWidgets import QComboBox

from gpumon.ui.widgets.refit import Refit


class FitToItems(QObject):
    """Keeps ``combo`` at least as wide as its longest item, and its list unelided."""

    def __init__(self, combo: QComboBox) -> None:
        super().__init__(combo)
        self.combo = combo
        combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        combo.view().setTextElideMode(Qt.TextElideMode.ElideNone)
        model = combo.model()
        for signal in (model.rowsInserted, model.rowsRemoved, model.modelReset,
                       model.dataChanged):
            signal.connect(self.refit)
        Refit(combo, self.refit)  # after the combo's own FontChange drops its size hint
        self.refit()

    def refit(self) -> None:
        """The minimum width the longest item needs now (its size hint), and a space more:
        an editable combo's line edit has text margins the hint leaves out."""
        combo = self.combo
        margin = combo.fontMetrics().horizontalAdvance("  ")
        combo.setMinimumWidth(combo.sizeHint().width() + margin)
