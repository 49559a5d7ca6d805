"""The "Lesson" tab: the GPU-computing lesson one step at a time, run for real.

Each step shows its narration and code; "Run" plays it with a
:class:`~gpumon.playground.lesson.results.LessonRunner` through the kernel link it is given
(``KernelLink.run_lesson_step``), so torch runs in the playground's kernel, never in this
process. The runner shares the playground's workspace there: the lesson's tensors appear in
the workspace table, and jumping between steps forgets only the lesson's own names.
The outcome shown is what torch really answered on this machine:
values and devices, or the error with its explanation, then the meta variant where the
machine has no CUDA GPU. Our words are in the language in use; code and torch's own values
and messages are shown as torch wrote them. The glossary step has no code: its table shows
at once, without the kernel.
"""

from __future__ import annotations

import html
import time
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, Qt, Signal, Slot
from PySide6.QtGui import QFont, QFontDatabase, QKeySequence, QResizeEvent, QShortcut
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from gpumon.i18n import tr
from gpumon.playground.data.outcome import LoadStatus
from gpumon.playground.lesson.results import StepResult
from gpumon.playground.lesson.steps import LESSON, LessonStep
from gpumon.telemetry.model.facts import as_copied_at
from gpumon.ui.lesson.more_fold import MoreFold
from gpumon.ui.lesson.narration import NarrationArea
from gpumon.ui.lesson.page_turns import PageTurns
from gpumon.ui.lesson.result_view import colours, glossary_html, result_html
from gpumon.ui.playground.kernel_link import load_lost_text
from gpumon.ui.widgets.refit import Refit
from gpumon.ui.widgets.wide_cells import even_wide_cells

if TYPE_CHECKING:
    from gpumon.playground.client.kernel_client import KernelExit
    from gpumon.telemetry.model.types import Snapshot
    from gpumon.ui.playground.kernel_link import KernelLink

SKIP_KEY = "Alt+S"  # the next step that does not need two GPUs

def _show_focus(button: QPushButton) -> None:
    """Focus ``button`` and have the style draw its focus frame, as after a Tab key (a
    style draws it only once the window has seen keyboard navigation)."""
    button.setFocus(Qt.FocusReason.TabFocusReason)
    button.window().setAttribute(Qt.WidgetAttribute.WA_KeyboardFocusChange, True)
    button.update()


OUTPUT_LINES = 3  # the step's output keeps this many lines in sight before the narration


class LessonPage(QWidget):
    """Step k of n: narration, code, Run, the real outcome; previous / next."""

    stepFinished = Signal(object)  # StepResult, after it is shown

    def __init__(self, kernel_link: KernelLink, steps: tuple[LessonStep, ...] = LESSON,
                 parent: QWidget | None = None) -> None:
        """``kernel_link`` runs the steps; feed ``on_snapshot`` for step 1's nvidia-smi."""
        super().__init__(parent)
        self.setObjectName("lessonPage")
        Refit(self, self._refit)  # the zoom: once the children have the new font too
        self._kernel_link = kernel_link
        self._latest: Snapshot | None = None
        self._steps = steps
        self._index = 0
        self._results: dict[int, StepResult] = {}
        self._ticket: int | None = None

        self.counter = QLabel()
        self.counter.setObjectName("lessonCounter")
        self.title = QLabel()
        self.title.setObjectName("lessonTitle")
        self.title.setStyleSheet("font-weight: bold; font-size: 130%;")
        self.title.setWordWrap(True)  # a long title at a high zoom: a second line, not cut
        self.narration = QLabel()
        self.narration.setObjectName("lessonNarration")
        self.narration.setWordWrap(True)
        self.narration.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.narration_area = NarrationArea(self.narration)  # scrolls rather than cut a line
        self.more = MoreFold(self)  # what a class may skip, folded (Alt+M opens it)
        # A step that needs two GPUs says so; Alt+S turns to the next step past such steps.
        self.skip_button = QPushButton(tr("Needs two GPUs: skip ▶▶"))
        self.skip_button.setObjectName("lessonSkipTwoGpus")
        self.skip_button.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.skip_button.setToolTip(tr("{key}: the next step that does not need two GPUs",
                                       key=QKeySequence(SKIP_KEY).toString(
                                           QKeySequence.SequenceFormat.NativeText)))
        self.skip_button.clicked.connect(self.skip_two_gpus)
        skip = QShortcut(QKeySequence(SKIP_KEY), self)
        skip.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        skip.activated.connect(self.skip_two_gpus)
        mono = QFont()  # only the family is set, so the size follows the zoom
        mono.setFamilies(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont).families())
        mono.setStyleHint(QFont.StyleHint.Monospace)
        self.code = QPlainTextEdit()
        self.code.setObjectName("lessonCode")
        self.code.setAccessibleName(tr("Code of this step"))
        self.code.setReadOnly(True)
        self.code.setFont(mono)
        self.output = QTextBrowser()
        self.output.setObjectName("lessonOutput")
        self.output.setAccessibleName(tr("What this step gave"))
        self.output.setFont(mono)
        self.output.setPlaceholderText(tr("Press Run to run this step on this machine."))
        self.busy_bar = QProgressBar()
        self.busy_bar.setObjectName("lessonBusy")
        self.busy_bar.setRange(0, 0)  # indeterminate: loading torch, first CUDA init
        self.busy_bar.setMaximumWidth(160)
        self.busy_bar.hide()
        self.busy_label = QLabel()
        self.busy_label.setObjectName("lessonBusyLabel")
        self.prev_button = QPushButton(tr("◀ Previous"))
        self.prev_button.setObjectName("lessonPrev")
        self.run_button = QPushButton(tr("Run"))
        self.run_button.setObjectName("lessonRun")
        self.run_button.setAccessibleName(tr("Run this step"))
        self.next_button = QPushButton(tr("Next ▶"))
        self.next_button.setObjectName("lessonNext")
        # Space never turns the page; Alt+Left / Alt+Right do (page_turns.py).
        self.page_turns = PageTurns(self, self.prev_button, self.next_button, self.turn)
        self.run_button.clicked.connect(self.run_current)

        # The title, and beside it the counter with the skip button under it where a step
        # has it: beside the title the button left the title a column a few characters wide
        # at 300 % (a Chinese title six lines tall, cut off), and a row of its own under the
        # title cost a line more than the page had.
        side = QVBoxLayout()
        side.addWidget(self.counter, 0, Qt.AlignmentFlag.AlignRight)
        side.addWidget(self.skip_button, 0, Qt.AlignmentFlag.AlignRight)
        self._top = top = QHBoxLayout()
        top.addWidget(self.title, 1)
        top.addLayout(side)
        self._buttons = buttons = QHBoxLayout()
        buttons.addWidget(self.prev_button)
        buttons.addWidget(self.run_button)
        buttons.addWidget(self.next_button)
        buttons.addSpacing(12)
        buttons.addWidget(self.busy_bar)
        buttons.addWidget(self.busy_label, 1)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.narration_area)
        layout.addWidget(self.more)
        layout.addWidget(self.code)
        layout.addWidget(self.output, 1)
        # Pinned to the page's foot: above the output they moved with each step's narration
        # and code height, so a second click on "Next" missed.
        layout.addLayout(buttons)

        self._kernel_link.callFinished.connect(self._on_call_finished)
        self._kernel_link.loadingStarted.connect(self._on_loading)
        self._kernel_link.loadingFinished.connect(self._on_loaded)
        self._kernel_link.loadingLost.connect(self._on_load_lost)
        self.show_step(0)

    # -- navigation --------------------------------------------------------------------------
    @property
    def index(self) -> int:
        """0-based index of the step shown."""
        return self._index

    @property
    def steps(self) -> tuple[LessonStep, ...]:
        """The lesson's steps, in order (``show_step`` takes an index into them)."""
        return self._steps

    @property
    def running(self) -> bool:
        return self._ticket is not None

    def take_focus(self) -> None:
        """Ctrl+3 shows the page: Run takes a visible focus, so Space runs the step."""
        _show_focus(self.run_button)

    def show_step(self, index: int) -> None:
        self._index = max(0, min(len(self._steps) - 1, index))
        step = self._steps[self._index]
        n = len(self._steps)
        self.counter.setText(tr("Step {number} of {total}", number=self._index + 1, total=n))
        self.title.setText(tr(step.title))
        self.narration.setText(tr(step.narration))
        self.more.set_text(step.more_text())
        self.skip_button.setVisible(step.two_gpus)
        self.narration_area.refit()
        self._fit_narration()
        code = step.code()
        if step.meta_variant:
            code += "\n\n" + tr("# without a CUDA GPU, the same on the meta device:") + "\n" \
                + step.meta_code()
        self.code.setPlainText(code)
        self.code.setVisible(step.kind != "glossary")  # words to read, no code
        self._fit_code_height()
        result = self._results.get(self._index + 1)
        if result is not None:
            self._set_output(result_html(result))
        else:
            self._set_output(glossary_html() if step.kind == "glossary" else "")
        self._update_buttons()

    def _set_output(self, text: str) -> None:
        """The output's HTML, its boxes' Chinese characters two columns wide (wide_cells)."""
        self.output.setHtml(text)
        even_wide_cells(self.output.document())

    def _fit_code_height(self) -> None:
        """At most as tall as the code (2 to 14 lines), so the outcome gets the rest; at
        least 2 lines, so that where room is short (a long narration at a high zoom) the
        code box, which scrolls, gives way rather than the narration being cut."""
        line = self.code.fontMetrics().lineSpacing()
        frame = 2 * int(self.code.document().documentMargin()) + 2 * self.code.frameWidth() + 4
        lines = min(14, max(2, self.code.document().blockCount()))
        self.code.setMaximumHeight(lines * line + frame)
        self.code.setMinimumHeight(2 * line + frame)

    def _refit(self) -> None:
        even_wide_cells(self.output.document())  # the spacing is in pixels of the old font
        self._fit_code_height()
        self.narration_area.refit()
        self._fit_narration()

    def _fit_narration(self) -> None:
        """Give the narration the room left when the title, the code box, the output and
        the buttons have their smallest height: all its lines if they fit there."""
        layout = self.layout()
        if layout is None:
            return
        margins = layout.contentsMargins()
        code = self.code.minimumHeight() if not self.code.isHidden() else 0
        more = self.more.minimumSizeHint().height() if not self.more.isHidden() else 0
        parts = 4 + bool(code) + bool(more)
        # The output keeps OUTPUT_LINES in sight before the narration takes the rest (it
        # scrolls): at 300 % a long narration left the output one line (issue 54, item 6).
        frame = 2 * int(self.output.document().documentMargin()) + 2 * self.output.frameWidth()
        output = max(self.output.minimumSizeHint().height(),
                     OUTPUT_LINES * self.output.fontMetrics().lineSpacing() + frame)
        # and the page's least height counts them: where the screen has no room for that,
        # the zoom step is taken back (the window was kept taller by the Monitor's least
        # height while the tabs asked for their largest page's)
        if self.output.minimumHeight() != output:
            self.output.setMinimumHeight(output)
        # the title's height at the page's width (its size hint is that of a short line)
        width = self.width() - margins.left() - margins.right()
        top = max(self._top.sizeHint().height(),
                  self._top.heightForWidth(width) if self._top.hasHeightForWidth() else 0)
        others = (top + code + more
                  + self._buttons.sizeHint().height() + output)
        room = self.height() - margins.top() - margins.bottom() - (parts - 1) * layout.spacing() \
            - others
        self.narration_area.fit(room)
        # no taller than that room: the layout gives a part its size hint (the whole text)
        # before the output's stretch
        self.narration_area.setMaximumHeight(max(self.narration_area.minimumHeight(), room))

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._fit_narration()

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:  # the theme changed: recolour
            self.show_step(self._index)

    @Slot()
    def next(self) -> None:
        self.show_step(self._index + 1)

    @Slot()
    def skip_two_gpus(self) -> None:
        """Alt+S: turn to the next step that does not need two GPUs (past the two-GPU
        steps a class with one GPU each skips), Run taking the focus."""
        later = [i for i in range(self._index + 1, len(self._steps))
                 if not self._steps[i].two_gpus]
        if later:
            self.turn(later[0] - self._index)

    @Slot()
    def previous(self) -> None:
        self.show_step(self._index - 1)

    def turn(self, by: int) -> None:
        """Previous / Next clicked (or Alt+Left / Alt+Right): turn the page, Run takes the
        focus."""
        self.show_step(self._index + by)
        _show_focus(self.run_button)

    # -- running -----------------------------------------------------------------------------
    @Slot()
    def run_current(self) -> None:
        """Run the step shown in the kernel; the result arrives in ``_on_call_finished``."""
        if self.running:
            return  # "Running…": a second press (or Space) does nothing
        number = self._index + 1
        if self._steps[self._index].kind == "glossary":  # nothing to run: no kernel, no torch
            self._show_result(StepResult(number, self._steps[self._index], ()))
            return
        # Focus on Run, drawn as keyboard focus even after a click: a teacher sees where
        # Space goes next (it runs the step again; it never moves to Next).
        _show_focus(self.run_button)
        snap = self._latest
        if snap is not None:  # a no-driver snapshot is stamped now, not at the window's start
            snap = as_copied_at(snap, time.time())
        self._ticket = self._kernel_link.run_lesson_step(self._steps, number, snap)
        self._set_busy(True, tr("Running step {number}…", number=number))

    @Slot(object)
    def on_snapshot(self, snap: Snapshot) -> None:
        """The latest snapshot: step 1 prints it as nvidia-smi would."""
        self._latest = snap

    @Slot(int, object)
    def _on_call_finished(self, ticket: int, result: object) -> None:
        if ticket != self._ticket:
            return
        self._ticket = None
        self._set_busy(False)
        if isinstance(result, StepResult):
            self._show_result(result)
            return
        # a bug in the runner comes back as the exception it raised
        failed = html.escape(tr("The step could not run:"))
        self._set_output(
            f"<p style='color:{colours()[0]}'><b>{failed}</b> "
            f"{html.escape(type(result).__name__)}: {html.escape(str(result))}</p>")
        self._update_buttons()

    def _show_result(self, result: StepResult) -> None:
        self._results[result.number] = result
        if result.number == self._index + 1:
            self._set_output(result_html(result))
        self.stepFinished.emit(result)
        self._update_buttons()

    @Slot()
    def _on_loading(self) -> None:
        self._set_busy(True, tr("Loading PyTorch… (the first time takes a few seconds)"))

    @Slot(object)
    def _on_loaded(self, status: LoadStatus) -> None:
        if self.running:
            self.busy_label.setText(tr("{message} — running…", message=status.message))
        else:
            self._set_busy(False)

    @Slot(object)
    def _on_load_lost(self, ended: KernelExit) -> None:
        """The kernel ended while torch loaded: say so (a running step gets its own answer,
        KernelLost, by callFinished)."""
        if not self.running:
            self._set_busy(False, load_lost_text(ended))

    def _set_busy(self, busy: bool, text: str = "") -> None:
        self.busy_bar.setVisible(busy)
        self.busy_label.setText(text)
        self._update_buttons()

    def _update_buttons(self) -> None:
        """Enable what can be pressed now. Run stays enabled (and focused) while its step
        runs, saying so; a press then does nothing (disabling it handed the focus to a
        neighbour, so the next Space pressed a different button or paused sampling)."""
        self.prev_button.setEnabled(self._index > 0)
        self.next_button.setEnabled(self._index < len(self._steps) - 1)
        # The glossary has no code; Run stays enabled there (it shows the list again), so
        # that it keeps the focus on the way through and Space never turns the page.
        readable = self._steps[self._index].kind == "glossary"
        self.run_button.setToolTip(tr("The glossary has no code: Run only shows it again.")
                                   if readable else "")
        done = (self._index + 1) in self._results and not readable
        self.run_button.setText(tr("Running…") if self.running
                                else tr("Run again") if done else tr("Run"))
