"""A one-line input dialog whose OK checks the text: a refused text says why in the dialog,
which stays open with the text kept for mending (File ▸ Open cluster…, Add machine…)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

from PySide6.QtWidgets import QInputDialog, QLabel, QLineEdit, QWidget

from gpumon.ui.widgets.close_keys import close_on_keys

T = TypeVar("T")


class CheckedInput(QInputDialog, Generic[T]):
    """``check`` turns the text into the value (``self.value`` once accepted) or raises
    ValueError, whose text is the sentence shown under the prompt."""

    def __init__(self, parent: QWidget | None, name: str, title: str, prompt: str,
                 check: Callable[[str], T]) -> None:
        super().__init__(parent)
        self.setObjectName(name)
        self.setWindowTitle(title)
        self.setInputMode(QInputDialog.InputMode.TextInput)
        self.setTextEchoMode(QLineEdit.EchoMode.Normal)
        self._prompt, self._check = prompt, check
        self.setLabelText(prompt)
        for label in self.findChildren(QLabel):  # the prompt and a reason: lines, not a strip
            label.setWordWrap(True)
        self.setMinimumWidth(40 * self.fontMetrics().averageCharWidth())
        self.value: T | None = None
        close_on_keys(self)

    def done(self, result: int) -> None:
        if result == QInputDialog.DialogCode.Accepted:
            try:
                self.value = self._check(self.textValue())
            except ValueError as exc:
                self.setLabelText(f"{self._prompt}\n\n{exc}")
                return  # stays open, the text kept for mending
        super().done(result)
