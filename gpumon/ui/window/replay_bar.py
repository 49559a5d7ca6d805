"""The replay's time bar: play and pause, the speed, where in the recording, jump to a time.

It drives a ``ReplayClock`` (recording/source.py) and shows its position four times a second
while the window is on screen; what the file got wrong (the reader's sentences) sits at its
right end, whole in the tooltip.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer, Signal, Slot
from PySide6.QtWidgets import (
    QComboBox,
    QLabel,
    QLineEdit,
    QPushButton,
    QSlider,
    QToolBar,
    QWidget,
)

from gpumon.i18n import tr
from gpumon.recording.reader import Recording
from gpumon.recording.source import SPEEDS, ReplayClock

REFRESH_MS = 250
STEPS_PER_S = 10  # the slider's resolution


class ReplayBar(QToolBar):
    """Play/pause, speed, a slider over the recording, the time, a box to jump to a time."""

    seeked = Signal(float)  # the moment jumped to (epoch seconds)

    def __init__(self, clock: ReplayClock, recording: Recording,
                 parent: QWidget | None = None) -> None:
        super().__init__(tr("Replay"), parent)
        self.setObjectName("replayBar")
        self.setMovable(False)
        self.clock, self.recording = clock, recording
        self.play_button = QPushButton()
        self.play_button.setObjectName("replayPlay")
        self.play_button.setCheckable(True)
        self.play_button.setToolTip(tr("Play or pause the recording (Space)"))
        self.play_button.toggled.connect(self._on_play)
        self.speed_combo = QComboBox()
        self.speed_combo.setObjectName("replaySpeed")
        self.speed_combo.setToolTip(tr("How fast the recording plays"))
        for speed in SPEEDS:
            self.speed_combo.addItem(f"{speed:g}×", speed)
        self.speed_combo.currentIndexChanged.connect(
            lambda i: self.clock.set_speed(float(self.speed_combo.itemData(i))))
        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.slider.setObjectName("replaySlider")
        self.slider.setRange(0, max(1, round((recording.end_s - recording.start_s)
                                             * STEPS_PER_S)))
        self.slider.setPageStep(60 * STEPS_PER_S)
        self.slider.sliderMoved.connect(self._on_slider)
        self.slider.actionTriggered.connect(
            lambda _a: QTimer.singleShot(0, lambda: self._on_slider(self.slider.value())))
        self.time_label = QLabel()
        self.time_label.setObjectName("replayTime")
        self.jump_edit = QLineEdit()
        self.jump_edit.setObjectName("replayJump")
        self.jump_edit.setPlaceholderText(tr("jump to: 90 or 14:05:30"))
        self.jump_edit.setToolTip(tr("Seconds after the first snapshot, or a clock time of "
                                     "the recording; Enter jumps"))
        self.jump_edit.setMaximumWidth(180)
        self.jump_edit.returnPressed.connect(self._on_jump)
        self.note = QLabel()
        self.note.setObjectName("replayNote")
        self.note.setStyleSheet("color: #b71c1c;")
        for widget in (self.play_button, self.speed_combo, self.slider, self.time_label,
                       self.jump_edit, self.note):
            self.addWidget(widget)
        self.show_problems()
        self._timer = QTimer(self)
        self._timer.setInterval(REFRESH_MS)
        self._timer.timeout.connect(self.refresh)
        self.refresh()

    def showEvent(self, event: object) -> None:
        super().showEvent(event)  # type: ignore[arg-type]
        self._timer.start()

    def hideEvent(self, event: object) -> None:
        super().hideEvent(event)  # type: ignore[arg-type]
        self._timer.stop()

    # -- what the bar shows ----------------------------------------------------------------
    @Slot()
    def refresh(self) -> None:
        """The clock's position on the slider and as text; the play button as it plays."""
        position, playing = self.clock.position(), self.clock.playing
        rec = self.recording
        if not self.slider.isSliderDown():
            self.slider.blockSignals(True)
            self.slider.setValue(round((position - rec.start_s) * STEPS_PER_S))
            self.slider.blockSignals(False)
        self.time_label.setText(tr("{at} of {length} ({clock})", at=rec.since_start(position),
                                   length=rec.since_start(rec.end_s),
                                   clock=rec.clock(position).strftime("%H:%M:%S")))
        if self.play_button.isChecked() != playing:
            self.play_button.blockSignals(True)
            self.play_button.setChecked(playing)
            self.play_button.blockSignals(False)
        self.play_button.setText(tr("Pause") if playing else tr("Play"))

    def show_problems(self, extra: str = "") -> None:
        """The reader's sentences (and ``extra``, a bad jump) at the bar's end."""
        sentences = ([extra] if extra else []) + self.recording.problems()
        self.note.setText(sentences[0] if sentences else "")
        self.note.setToolTip("\n".join(sentences))

    # -- what the user does ----------------------------------------------------------------
    def toggle(self) -> None:
        self.set_playing(not self.clock.playing)

    def set_playing(self, playing: bool) -> None:
        self.clock.set_playing(playing)
        self.refresh()

    def seek(self, t: float) -> None:
        self.clock.seek(t)
        self.refresh()
        self.seeked.emit(self.clock.position())

    def _on_play(self, checked: bool) -> None:
        self.set_playing(checked)

    def _on_slider(self, value: int) -> None:
        self.seek(self.recording.start_s + value / STEPS_PER_S)

    def _on_jump(self) -> None:
        try:
            t = self.recording.time_of(self.jump_edit.text())
        except ValueError as exc:
            self.show_problems(str(exc))
            return
        self.show_problems()
        self.seek(t)
