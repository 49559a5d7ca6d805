"""The toolbar: pause/resume, sampling interval, time window, and after them what the window
puts there (the health events badge). The values under the pointer show on the graph itself,
beside the pointer (hover_readout.py)."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDoubleSpinBox,
    QLabel,
    QPushButton,
    QSizePolicy,
    QToolBar,
    QWidget,
)

from gpumon.i18n import tr
from gpumon.interval import SAMPLING
from gpumon.telemetry.history.store import WINDOW_CHOICES_S
from gpumon.telemetry.model.readouts import window_label
from gpumon.ui.widgets.refit import Refit


class Controls(QToolBar):
    """Emits what the user asked for; the window decides what it means."""

    pauseToggled = Signal(bool)
    intervalChanged = Signal(float)
    windowChanged = Signal(int)

    def __init__(self, interval_s: float, window_s: int, parent: QWidget | None = None) -> None:
        super().__init__(tr("Controls"), parent)
        self.setObjectName("controls")
        self.setMovable(False)
        # the zoom: the toolbar's layout keeps each widget's old width; give the spin box and
        # the combo room for their text at the new size, once they have the new font
        Refit(self, self._fit_widths)
        self.pause_button = QPushButton(tr("Pause"))
        self.pause_button.setObjectName("pauseButton")
        self.pause_button.setAccessibleName(tr("Pause or resume sampling"))
        self.pause_button.setCheckable(True)
        self.pause_button.toggled.connect(self._on_pause)

        self.interval_spin = QDoubleSpinBox()
        self.interval_spin.setObjectName("intervalSpin")
        self.interval_spin.setAccessibleName(tr("Sampling interval in seconds"))
        self.interval_spin.setRange(SAMPLING.low, SAMPLING.high)
        self.interval_spin.setDecimals(SAMPLING.decimals)
        self.interval_spin.setSingleStep(0.1)
        self.interval_spin.setSuffix(" s")
        self.interval_spin.setKeyboardTracking(False)
        self.interval_spin.setValue(interval_s)
        self.interval_spin.valueChanged.connect(self.intervalChanged)

        self.window_combo = QComboBox()
        self.window_combo.setObjectName("windowCombo")
        self.window_combo.setAccessibleName(tr("Time window of the graphs"))
        # Measured again at each zoom (the default measures once, at first show: "5 m" at 300 %).
        self.window_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        for s in WINDOW_CHOICES_S:
            self.window_combo.addItem(window_label(s), s)
        idx = self.window_combo.findData(window_s)
        self.window_combo.setCurrentIndex(idx if idx >= 0 else 0)
        self.window_combo.currentIndexChanged.connect(
            lambda i: self.windowChanged.emit(int(self.window_combo.itemData(i))))

        self.addWidget(self.pause_button)
        self.addSeparator()
        self.addWidget(QLabel(" " + tr("Interval") + " "))
        self.addWidget(self.interval_spin)
        self.addWidget(QLabel("  " + tr("Window") + " "))
        self.addWidget(self.window_combo)

    def _fit_widths(self) -> None:
        for widget in (self.interval_spin, self.window_combo):
            widget.setMinimumWidth(widget.sizeHint().width())

    def add_right(self, widget: QWidget) -> None:
        """Put ``widget`` after the controls, in the room they leave (its size hint should be
        small: a toolbar moves what does not fit behind a » button)."""
        widget.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        self.addWidget(widget)

    def _on_pause(self, paused: bool) -> None:
        self.pause_button.setText(tr("Resume") if paused else tr("Pause"))
        self.pauseToggled.emit(paused)
