"""The Help menu's boxes: About gpumon (the versions of everything) and the keyboard shortcuts.

Both are non-modal boxes that close on Close or Esc and delete themselves; ``show_about`` and
``show_shortcuts`` return the box so tests can read and close it.
"""

from __future__ import annotations

import math
import platform
from collections.abc import Sequence
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QSize, Qt, qVersion
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFrame,
    QLabel,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from gpumon import __version__
from gpumon.i18n import N_, tr
from gpumon.text.smi_text import source_words
from gpumon.ui.widgets.close_keys import close_on_keys
from gpumon.ui.widgets.screen_fit import keep_on_screen, within_room

if TYPE_CHECKING:
    from gpumon.playground.data.devices import DeviceOption
    from gpumon.playground.data.outcome import LoadStatus
    from gpumon.telemetry.model.types import Snapshot

# (keys as shown, what they do): the Help menu and docs/user-guide.md show this same list.
SHORTCUTS: tuple[tuple[str, str], ...] = (
    ("Space", N_("Pause / resume sampling (not while typing in a text field)")),
    ("Ctrl++ / Ctrl+=", N_("Zoom in (fonts, graph labels, curve widths)")),
    ("Ctrl+-", N_("Zoom out")),
    ("Ctrl+0", N_("Reset the zoom to 100 %")),
    ("F11", N_("Full screen on / off")),
    ("Ctrl+1 / 2 / 3", N_("Monitor / Playground / Lesson (the code line or Run takes the "
                          "focus)")),
    ("Ctrl+Shift+C", N_("Copy the current snapshot as nvidia-smi-like text")),
    ("Ctrl+S", N_("Save a graph as PNG or SVG")),
    ("Ctrl+R", N_("Start / stop recording (replayable, or CSV)")),
    ("Ctrl+E", N_("Export the visible time window to CSV")),
    ("I / T / K", N_("On a process's row: interrupt / terminate / kill it (asks first)")),
    ("Alt+← / Alt+→", N_("Lesson: previous / next step (Space never turns the page)")),
    ("Alt+S", N_("Lesson: the next step that does not need two GPUs")),
    ("Alt+M", N_("Lesson: open or close a step's More (what a class can skip)")),
    ("Esc / Ctrl+W", N_("Close a window of its own: a process, the topology, about")),
    ("F1", N_("About gpumon (versions of everything)")),
    ("Ctrl+Q", N_("Quit")),
)

#: What the kernel said about its torch: its load answer (None before one came) and devices.
TorchFacts = tuple["LoadStatus | None", "Sequence[DeviceOption]"]


def torch_text(status: LoadStatus | None) -> str:
    """The About box's PyTorch line, from the kernel's answer to "load": the window never
    imports torch, so it never looks for it in its own process."""
    if status is None:
        return tr("not loaded yet (it loads with the first playground action)")
    if not status.ok or status.torch_version is None:
        return tr("not usable: {why}", why=status.message)
    if status.cuda_version:
        return tr("{version} (built for CUDA {cuda})", version=status.torch_version,
                  cuda=status.cuda_version)
    return tr("{version} (CPU-only build)", version=status.torch_version)


def versions(snap: Snapshot | None,
             torch: TorchFacts = (None, ())) -> list[tuple[str, str]]:
    """(component, version) for the about box; PyTorch's version, build and devices as the
    playground's kernel reported them once it loaded torch (``torch``)."""
    import numpy
    import pyqtgraph
    import PySide6

    status, devices = torch
    machine = snap.machine if snap is not None else None

    def fact(value: str | None) -> str:
        if machine is None:
            return tr("no snapshot yet")
        return value or "N/A"

    source = tr("no snapshot yet") if machine is None else source_words(machine.source_name) + (
        " " + tr("(simulated values)") if machine.simulated or snap is not None and snap.simulated
        else "")
    return [
        ("gpumon", __version__),
        ("Python", f"{platform.python_version()} ({platform.python_implementation()})"),
        ("Qt / PySide6", f"{qVersion()} / {PySide6.__version__}"),
        ("pyqtgraph", str(pyqtgraph.__version__)),
        ("NumPy", str(numpy.__version__)),
        ("PyTorch", torch_text(status)),
        *([(tr("PyTorch devices"), "; ".join(d.label for d in devices if d.available))]
          if devices and status is not None and status.ok else []),
        (tr("Source"), source),
        (tr("NVIDIA driver"), fact(machine.driver_version if machine else None)),
        (tr("CUDA (driver)"), fact(machine.cuda_driver_version if machine else None)),
        ("NVML", fact(machine.nvml_version if machine else None)),
    ]


def about_text(snap: Snapshot | None, torch: TorchFacts = (None, ())) -> str:
    import html  # here: the About box is rare, and html.entities is a large import

    rows = "".join(f"<tr><td><b>{html.escape(k)}</b>&nbsp;&nbsp;</td>"
                   f"<td>{html.escape(v)}</td></tr>" for k, v in versions(snap, torch))
    intro = html.escape(tr("A live monitor for NVIDIA GPUs, with a PyTorch device playground "
                           "for teaching."))
    return f"<h3>gpumon</h3><p>{intro}</p><table>{rows}</table>"


def show_about(parent: QWidget, snap: Snapshot | None,
               torch: TorchFacts = (None, ())) -> InfoBox:
    """Open (not exec) the about box and return it, so tests can read and close it."""
    return _open_box(parent, "aboutDialog", tr("About gpumon"), about_text(snap, torch))


def shortcuts_html() -> str:
    import html

    rows = "".join(f"<tr><td><b>{html.escape(k)}</b>&nbsp;&nbsp;&nbsp;</td>"
                   f"<td>{html.escape(tr(v))}</td></tr>" for k, v in SHORTCUTS)
    title = html.escape(tr("Keyboard shortcuts"))
    return f"<h3>{title}</h3><table>{rows}</table>"


def show_shortcuts(window: QWidget) -> InfoBox:
    return _open_box(window, "shortcutsDialog", tr("Keyboard shortcuts"), shortcuts_html())


class InfoBox(QDialog):
    """The about box and the list of shortcuts: rich text that scrolls where the screen is
    too small for it (at 300 % the list of shortcuts, in a message box, was 3078 px high),
    a Close button; as large as its text, within the screen with its frame."""

    def __init__(self, parent: QWidget, name: str, title: str, text: str) -> None:
        super().__init__(parent)
        self.setObjectName(name)
        self.setWindowTitle(title)
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.browser = QTextBrowser(self)
        self.browser.setOpenLinks(False)
        self.browser.setFrameShape(QFrame.Shape.NoFrame)
        self.browser.setHtml(text)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        layout = self._layout = QVBoxLayout(self)
        icon = parent.windowIcon()
        if not icon.isNull():
            picture = QLabel(self)
            picture.setPixmap(icon.pixmap(64, 64))
            layout.addWidget(picture)
        layout.addWidget(self.browser, 1)
        layout.addWidget(buttons)
        close_on_keys(self)
        self._fit()

    def text(self) -> str:
        """The text shown (plain, for tests and the clipboard)."""
        return self.browser.toPlainText()

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:  # a zoom step while it is open
            self._fit()

    def _fit(self) -> None:
        doc = self.browser.document().clone(self)  # measured apart: the browser wraps its own
        doc.setDefaultFont(self.browser.font())
        doc.setTextWidth(1e6)  # unwrapped: its widest line (a table's idealWidth at -1 is
        fm = self.fontMetrics()  # its narrowest)
        width = math.ceil(doc.idealWidth()) + 2 * fm.height()
        doc.setTextWidth(width)
        chrome = self._layout.totalSizeHint() - self.browser.sizeHint()  # icon, buttons
        want = QSize(max(width, 30 * fm.averageCharWidth()) + chrome.width(),
                     math.ceil(doc.size().height()) + fm.height() + chrome.height())
        doc.deleteLater()
        self.resize(within_room(self, want))


def _open_box(parent: QWidget, name: str, title: str, text: str) -> InfoBox:
    box = InfoBox(parent, name, title, text)
    box.setWindowModality(Qt.WindowModality.NonModal)
    box.show()
    keep_on_screen(box)
    return box
