"""The code line: Python typed by the user, run in the playground kernel.

Enter runs what is typed, Shift+Enter starts a new line, Up/Down (on the first/last line)
walk the history, Esc or the Stop button interrupts the running code. ``torch``, ``nn``
and ``F`` are already imported in the kernel. The logic of the history is the Qt-free
:class:`History`; :class:`CodeBar` is the widget row.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QFont, QFontDatabase, QKeyEvent
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPlainTextEdit, QPushButton, QWidget

from gpumon.i18n import N_, tr

PLACEHOLDER = N_("x = torch.ones(2, 3, device='cuda:0')   (Enter runs · Shift+Enter new line)")


LINES = 3  # the box's height in lines; longer code scrolls


def monospace(base: QFont) -> QFont:
    """``base`` in the system's fixed-width family; its size still follows the zoom (only
    the family is set on the widget, so the size is inherited from the window)."""
    font = QFont(base)
    font.setFamily(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont).family())
    font.setStyleHint(QFont.StyleHint.Monospace)
    return font


class History:
    """Lines run so far; ``back``/``forward`` move through them like a shell's history."""

    def __init__(self) -> None:
        self.items: list[str] = []
        self._pos = 0  # len(items): the line being typed

    def add(self, text: str) -> None:
        if text.strip() and (not self.items or self.items[-1] != text):
            self.items.append(text)
        self._pos = len(self.items)

    def back(self) -> str | None:
        """The previous entry, or None at the oldest."""
        if self._pos == 0:
            return None
        self._pos -= 1
        return self.items[self._pos]

    def forward(self) -> str | None:
        """The next entry; ``""`` past the newest; None when already there."""
        if self._pos >= len(self.items):
            return None
        self._pos += 1
        return self.items[self._pos] if self._pos < len(self.items) else ""


class CodeEdit(QPlainTextEdit):
    """The text box: Enter submits, Shift+Enter newline, Up/Down history."""

    submitted = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("codeLine")
        self.setAccessibleName(tr("Python code line"))
        self.setPlaceholderText(tr(PLACEHOLDER))
        self.setFont(monospace(self.font()))
        self.setTabChangesFocus(True)
        self.history = History()
        self._fit_height()

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:  # the window's zoom changed
            self._fit_height()

    def _fit_height(self) -> None:
        self.setFixedHeight(self.fontMetrics().lineSpacing() * LINES + 14)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        key, mods = event.key(), event.modifiers()
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and \
                not mods & Qt.KeyboardModifier.ShiftModifier:
            self.submit()
            return
        cursor = self.textCursor()
        if key == Qt.Key.Key_Up and cursor.blockNumber() == 0:
            self._show(self.history.back())
            return
        if key == Qt.Key.Key_Down and cursor.blockNumber() == self.blockCount() - 1:
            self._show(self.history.forward())
            return
        super().keyPressEvent(event)

    def submit(self) -> None:
        """Run what is typed (nothing when it is blank)."""
        text = self.toPlainText()
        if not text.strip():
            return
        self.history.add(text)
        self.clear()
        self.submitted.emit(text)

    def set_code(self, text: str) -> None:
        """Put ``text`` in the line to edit (a form's code), cursor at the end."""
        self.setPlainText(text)
        self.moveCursor(self.textCursor().MoveOperation.End)
        self.setFocus()

    def _show(self, text: str | None) -> None:
        if text is not None:
            self.setPlainText(text)
            self.moveCursor(self.textCursor().MoveOperation.End)


class CodeBar(QWidget):
    """``>>>`` prompt, the code edit, Run and Stop."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("codeBar")
        self.edit = CodeEdit()
        self.run_button = QPushButton(tr("Run"))
        self.run_button.setObjectName("codeRun")
        self.run_button.setToolTip(tr("Run the code in the playground's kernel (Enter)"))
        self.stop_button = QPushButton(tr("Stop"))
        self.stop_button.setObjectName("stopButton")
        self.stop_button.setAccessibleName(tr("Stop the running code"))
        self.stop_button.setToolTip(tr("Interrupt the running code (Esc). If it does not stop "
                                       "within 2 s, the kernel is restarted and its workspace "
                                       "is lost."))
        self.stop_button.setEnabled(False)
        prompt = QLabel(">>>")
        prompt.setFont(monospace(prompt.font()))
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(prompt, 0, Qt.AlignmentFlag.AlignTop)
        layout.addWidget(self.edit, 1)
        buttons = QWidget()
        column = QHBoxLayout(buttons)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(self.run_button)
        column.addWidget(self.stop_button)
        layout.addWidget(buttons, 0, Qt.AlignmentFlag.AlignTop)
        self.run_button.clicked.connect(self.edit.submit)
