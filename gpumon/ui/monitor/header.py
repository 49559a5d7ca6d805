"""The header: which source, which driver stack, one status line; and the banner that
explains, in plain words, why there is no data and what to do about it.

The driver stack and the status line share the line by priority (``fit_row.FitRow``): where
both do not fit, the status line drops its last items ("read in 3 ms", then "every 0.1 s"),
the stack drops the words "Host" and "Driver", and only then is anything cut with "…" (the
status line first): at 300 % the status line's stretch had cut "CUDA 12.4 · NVML …" away."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from gpumon.i18n import tr
from gpumon.telemetry.model.types import MachineInfo, SourceStatus
from gpumon.ui.widgets.fit_row import FitRow
from gpumon.ui.widgets.runs_label import RunsLabel, TextRun
from gpumon.untrusted import for_terminal

# Sizes in em, not px: the badge grows with the zoom (the window re-polishes styled widgets
# when the font changes, presentation.py); bold comes from the widget's font.
BADGE_STYLE = "color: white; background: {bg}; border-radius: 0.25em; padding: 0.15em 0.6em;"
NVML_BG = "#2e7d32"
SIM_BG = "#e65100"
NONE_BG = "#757575"
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
        self.line = FitRow(gap_chars=2.0)  # a new status never lays the window out
        machine = self.line.add(self.machine_label, cut_chars=12)
        status = self.line.add(self.status_line, right=True, cut_chars=8)
        self.line.set_order(steps=(status, status, machine, machine, status, status),
                            cuts=(status, machine))
        layout = QHBoxLayout(self)
        layout.setContentsMargins(6, 2, 6, 2)
        layout.addWidget(self.source_badge)
        layout.addWidget(self.code_badge)
        layout.addWidget(self.line, 1)
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
            self.machine_label.set_runs([b(machine.host_name, bold=True), *(
                run for words, v in facts if v for run in (b(words), b(_or_na(v), bold=True)))])
            return
        stack = [b(" · CUDA "), b(_or_na(machine.cuda_driver_version), bold=True),
                 b(" · NVML "), b(_or_na(machine.nvml_version), bold=True)]
        host = b(for_terminal(machine.host_name), bold=True)
        driver = b(_or_na(machine.driver_version), bold=True)
        self.machine_label.set_runs(
            [b(tr("Host") + " "), host, b(" · " + tr("Driver") + " "), driver, *stack],
            [[host, b(" · " + tr("Driver") + " "), driver, *stack],
             [host, b(" · "), driver, *stack]])

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
