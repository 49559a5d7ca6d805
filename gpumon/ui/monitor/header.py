"""The header: which source, which driver stack, one status line; and the banner that
explains, in plain words, why there is no data and what to do about it.

The driver stack and the status line share the line by priority (``fit_row.FitRow``): where
both do not fit, the status line drops its last items ("read in 3 ms", then "every 0.1 s")
and, where the whole stack still does not fit beside it, "CUDA … · NVML …" moves to a second
line under "Host … · Driver …" (at 300 % in a 1400 px window the stack alone is wider than
the line: it dropped the words "Host" and "Driver", issue 54 item 4). Only then is anything
cut with "…" (the status line first, the whole line in the tooltip); no word is dropped."""

from __future__ import annotations

import math

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QFont, QResizeEvent
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from gpumon.i18n import tr
from gpumon.telemetry.model.types import MachineInfo, SourceStatus
from gpumon.ui.widgets.fit_row import FitRow
from gpumon.ui.widgets.runs_label import RunsLabel, TextRun, runs_width
from gpumon.untrusted import for_terminal

# Sizes in em, not px: the badge grows with the zoom (the window re-polishes styled widgets
# when the font changes, presentation.py); bold comes from the widget's font.
BADGE_STYLE = "color: white; background: {bg}; border-radius: 0.25em; padding: 0.15em 0.6em;"
NVML_BG = "#2e7d32"
SIM_BG = "#e65100"
NONE_BG = "#757575"
CORNER_MARGIN = 6  # px right of the driver stack where it sits in the tab row
CODE_BG = "#1565c0"
#: Characters of a host's name the code badge shows: a name from a command line may be long,
#: and at 300 % each is about 30 px of the header's width.
CODE_HOST_CHARS = 20


def _set_style(widget: QWidget, sheet: str) -> None:
    if widget.styleSheet() != sheet:
        widget.setStyleSheet(sheet)


def _or_na(v: str | None) -> str:
    """The driver's string escaped as any untrusted text is, or N/A."""
    return for_terminal(v) if v else "N/A"


def _fewer_items(text: str) -> list[list[TextRun]]:
    """``a · b · c`` as ``a · b`` and ``a``: the status line's shorter forms."""
    items = text.split(" · ")
    return [[TextRun(" · ".join(items[:n]))] for n in range(len(items) - 1, 0, -1)]


def wraps(identity: float, stack: float, status: float, gap: float, room: float) -> bool:
    """Whether the driver stack (``stack`` px wide, its " · " included) goes to a second
    line: the host and driver, the stack and the status line's shortest form (``status``
    px; 0 when it shows nothing) with ``gap`` before it do not fit ``room``."""
    return stack > 0 and identity + stack + (gap + status if status > 0 else 0.0) > room


class HeaderBar(QFrame):
    """Source badge, host, driver / CUDA / NVML versions, and ``statusLine``."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("header")
        self.source_badge = QLabel("…")
        self.source_badge.setObjectName("sourceBadge")
        self.source_badge.setAccessibleName(tr("Data source"))
        bold = QFont()
        bold.setBold(True)  # only the weight: the size still follows the application's zoom
        self.source_badge.setFont(bold)
        # Elided with "…" (whole line in the tooltip) rather than widening the window.
        self.machine_label = RunsLabel()
        self.machine_label.setObjectName("machineLabel")
        # "CUDA … · NVML …" on a line of its own where the line has no room for it
        self.stack_label = RunsLabel()
        self.stack_label.setObjectName("stackLabel")
        self.stack_label.hide()
        self._tabs: QTabWidget | None = None  # where the stack's line goes (wrap_into)
        self._identity: list[TextRun] = []  # "Host h · Driver d"
        self._stack: list[TextRun] = []  # "CUDA c · NVML n" (empty: nothing to wrap)
        self.status_line = RunsLabel()
        self.status_line.setText(tr("Starting…"))
        self.status_line.setObjectName("statusLine")
        self.status_line.setAccessibleName(tr("Status"))
        # Where the Playground's and the Lesson's code runs, when not on this computer
        # (``gpumon --ssh HOST``): on every page, not only on theirs.
        self.code_badge = QLabel()
        self.code_badge.setObjectName("codeHostBadge")
        self.code_badge.setAccessibleName(tr("Where code runs"))
        self.code_badge.setTextFormat(Qt.TextFormat.PlainText)
        self.code_badge.setFont(bold)
        self.code_badge.setStyleSheet(BADGE_STYLE.format(bg=CODE_BG))
        self.code_badge.hide()
        self._gap_chars = 2.0
        self.line = FitRow(gap_chars=self._gap_chars)  # a new status never lays the window out
        machine = self.line.add(self.machine_label, cut_chars=12)
        status = self.line.add(self.status_line, right=True, cut_chars=8)
        self.line.set_order(steps=(status, status), cuts=(status, machine))
        lines = QVBoxLayout()
        lines.setContentsMargins(0, 0, 0, 0)
        lines.setSpacing(0)
        lines.addWidget(self.line)
        lines.addWidget(self.stack_label)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(6, 2, 6, 2)
        layout.addWidget(self.source_badge, 0, Qt.AlignmentFlag.AlignVCenter)
        layout.addWidget(self.code_badge, 0, Qt.AlignmentFlag.AlignVCenter)
        layout.addLayout(lines, 1)
        self._set_badge(tr("NO SOURCE"), NONE_BG)

    def show_machine(self, machine: MachineInfo, status: SourceStatus, simulated: bool) -> None:
        if simulated or machine.simulated:
            self._set_badge(tr("SIMULATED"), SIM_BG)
        elif status.usable:
            self._set_badge(machine.source_name.upper(), NVML_BG)
        else:
            name = machine.source_name if machine.source_name != "none" else "NVML"
            self._set_badge(tr("{source} — unavailable", source=name.upper()), NONE_BG)
        b = TextRun
        facts = ((" · " + tr("Driver") + " ", machine.driver_version),
                 (" · CUDA ", machine.cuda_driver_version), (" · NVML ", machine.nvml_version))
        if machine.source_name == "Prometheus":
            # "Prometheus at URL", and only what a machine's exporter says (the driver of the
            # machine in focus): "Driver N/A · CUDA N/A · NVML N/A" described nothing there.
            self._identity, self._stack = [], []
            self._arrange()
            self.machine_label.set_runs([b(machine.host_name, bold=True), *(
                run for words, v in facts if v for run in (b(words), b(_or_na(v), bold=True)))])
            return
        identity = [b(tr("Host") + " "), b(for_terminal(machine.host_name), bold=True),
                    b(" · " + tr("Driver") + " "), b(_or_na(machine.driver_version), bold=True)]
        stack = [b("CUDA "), b(_or_na(machine.cuda_driver_version), bold=True),
                 b(" · NVML "), b(_or_na(machine.nvml_version), bold=True)]
        if (identity, stack) != (self._identity, self._stack):  # each tick: nothing new
            self._identity, self._stack = identity, stack
            self._arrange()

    def wrap_into(self, tabs: QTabWidget) -> None:
        """Put the stack's second line in the right corner of ``tabs``' bar (the row under
        the header, empty right of the tabs) rather than under the header: a line more
        under the header took 38 px from every page at 300 %, three lines of the
        Playground's results among them."""
        corner = QWidget()  # its layout gives the bar the label's whole width and a margin
        row = QHBoxLayout(corner)
        row.setContentsMargins(0, 0, CORNER_MARGIN, 0)
        row.addWidget(self.stack_label)
        tabs.setCornerWidget(corner, Qt.Corner.TopRightCorner)
        self._tabs = tabs
        tabs.tabBar().installEventFilter(self)  # its tabs' width follows the zoom
        self._arrange()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() in (QEvent.Type.FontChange, QEvent.Type.Resize):
            self._arrange()
        return super().eventFilter(watched, event)

    def _corner_room(self) -> int | None:
        """The width right of the tabs, where the stack's line goes (None: no tab bar)."""
        if self._tabs is None:
            return None
        bar = self._tabs.tabBar()
        gap = self.line.fontMetrics().averageCharWidth()
        return max(0, self._tabs.width() - bar.sizeHint().width() - CORNER_MARGIN - gap)

    def shown_lines(self) -> list[str]:
        """The header's text as it stands, a line each (the forms shown, for tests)."""
        first = " ".join(lab.shown_text() for lab in (self.machine_label, self.status_line)
                         if not lab.isHidden())
        return [first] + ([self.stack_label.shown_text()] if not self.stack_label.isHidden()
                          else [])

    def _arrange(self) -> None:
        """The stack beside the host and driver where the line has room for it (with the
        status line's shortest form), on a second line where it has not."""
        if not self._stack:
            self.stack_label.hide()
            return
        font = self.machine_label.font()
        beside = [TextRun(" · "), *self._stack]
        status = 0.0 if self.status_line.isHidden() else min(self.status_line.form_widths())
        gap = self._gap_chars * self.line.fontMetrics().averageCharWidth()
        below = wraps(runs_width(self._identity, font), runs_width(beside, font), status, gap,
                      self.line.width())
        self.machine_label.set_runs(self._identity if below else [*self._identity, *beside])
        if below:
            self.stack_label.set_runs(self._stack)
            # whole where the row has room for it; cut with "…" (tooltip) where it has not
            room = self._corner_room()
            full = math.ceil(self.stack_label.full_width())
            self.stack_label.setMinimumWidth(full if room is None else min(full, room))
            self.stack_label.setMaximumWidth(full if room is None else min(full, room))
        if self.stack_label.isHidden() == below:
            self.stack_label.setVisible(below)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._arrange()

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:
            self._arrange()

    def show_code_host(self, host: str | None) -> None:
        """Say in the header that the Playground's and the Lesson's code runs on ``host``
        (None: on this computer, where nothing needs saying)."""
        if host is None:
            self.code_badge.hide()
            return
        shown = for_terminal(host)
        short = shown if len(shown) <= CODE_HOST_CHARS else shown[:CODE_HOST_CHARS - 1] + "…"
        self.code_badge.setText(tr("Code runs on {host}", host=short))
        self.code_badge.setToolTip(tr("Code in the Playground and the Lesson runs on {host}, "
                                      "with its Python, PyTorch and GPUs, over SSH.",
                                      host=shown))
        self.code_badge.show()

    def show_waiting(self, text: str) -> None:
        """While a source is being opened: a WAITING badge and ``text`` (with the seconds)."""
        self._set_badge(tr("WAITING"), NONE_BG)
        self.set_status_text(text)

    def set_status_text(self, text: str, warn: bool = False) -> None:
        """Called every tick: text and style are set only when they change (a style sheet
        set again, even the same one, re-polishes the label and repaints the header)."""
        if self.status_line.text() != text:
            runs = [TextRun(text)]
            self.status_line.set_runs(runs, _fewer_items(text))
        _set_style(self.status_line, "color: #b71c1c;" if warn else "")
        if self.status_line.font().bold() != warn:
            font = QFont()
            font.setBold(warn)  # only the weight is set: the size follows the zoom
            self.status_line.setFont(font)

    def _set_badge(self, text: str, bg: str) -> None:
        if self.source_badge.text() != text:
            self.source_badge.setText(text)
        _set_style(self.source_badge, BADGE_STYLE.format(bg=bg))


class StatusBanner(QFrame):
    """Shown when the source cannot deliver data: what happened, how to fix it, and a way
    to look at simulated GPUs instead."""

    simulateRequested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("statusBanner")
        self.setAccessibleName(tr("Source problem"))
        self.setStyleSheet(
            "#statusBanner { background: #fff3e0; border: 1px solid #ef6c00;"
            " border-radius: 4px; }")
        # The sentences may carry another machine's words (a remote gpumon's status): text,
        # never markup, whatever they hold.
        self.message = QLabel()
        self.message.setObjectName("bannerMessage")
        self.message.setTextFormat(Qt.TextFormat.PlainText)
        self.message.setWordWrap(True)
        font = QFont()
        font.setBold(True)
        self.message.setFont(font)
        self.hint = QLabel()
        self.hint.setObjectName("bannerHint")
        self.hint.setTextFormat(Qt.TextFormat.PlainText)
        self.hint.setWordWrap(True)
        self.simulate_button = QPushButton(tr("Show simulated GPUs"))
        self.simulate_button.setObjectName("simulateButton")
        self.simulate_button.setAccessibleName(tr("Show simulated GPUs"))
        self.simulate_button.setToolTip(tr("Switch to 4 simulated GPUs, for a demo without "
                                           "hardware"))
        self.simulate_button.clicked.connect(self.simulateRequested)
        text = QVBoxLayout()
        text.addWidget(self.message)
        text.addWidget(self.hint)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(10, 8, 10, 8)
        layout.addLayout(text, 1)
        layout.addWidget(self.simulate_button, 0, Qt.AlignmentFlag.AlignVCenter)
        self.hide()

    def show_status(self, status: SourceStatus) -> None:
        """Visible with the status's sentences when it is not usable, hidden otherwise."""
        if status.usable:
            self.hide()
            return
        self.message.setText(status.message or tr("No GPU data is available."))
        self.hint.setText(status.hint)
        self.hint.setVisible(bool(status.hint))
        self.show()

    def text(self) -> str:
        return f"{self.message.text()} {self.hint.text()}".strip()
