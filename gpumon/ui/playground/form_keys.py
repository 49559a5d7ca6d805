"""What the playground's forms do besides building actions: Enter in a field presses that
form's button, a malformed value is explained under its field across the whole form, and
device combos offer names with a note ("cuda:0 — not available here").

Enter: a field runs the first button on its own row or below it (row-major), unless the
form names another (the Create form's shape runs ``torch.zeros(shape)``): the button can be
six Tabs away from the field.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QAbstractSpinBox,
    QComboBox,
    QLabel,
    QLineEdit,
    QPushButton,
    QWidget,
)

from gpumon.i18n import N_, tr
from gpumon.playground.data.form_text import AS_IS
from gpumon.ui.playground.reflow import FormGrid

NOTE_SEPARATOR = " — "  # between a device's name and its note in a combo item
ENTER_KEYS = (Qt.Key.Key_Return, Qt.Key.Key_Enter)
AS_IS_SHOWN = N_("(as is)")  # a modifier combo's first item, shown for form_text.AS_IS


class FieldProblem(ValueError):
    """A value the form cannot turn into an action; ``field`` is where it was typed."""

    def __init__(self, field: QWidget, message: str) -> None:
        super().__init__(message)
        self.field = field


def device_text(combo: QComboBox) -> str:
    """The device a combo names: its text without a note ("cuda:0 — not available here")."""
    return combo.currentText().split(NOTE_SEPARATOR, 1)[0].strip()


def modifier(combo: QComboBox) -> str:
    """A modifier combo's choice for ``ref_for``: ``AS_IS`` for its (translated) first item,
    else the code it shows (``.cpu()``, ``.to('cuda:0')``)."""
    text = combo.currentText()
    return AS_IS if text == tr(AS_IS_SHOWN) else text


class EnterRuns(QObject):
    """An event filter: Return / Enter in a field clicks the button it is mapped to."""

    def __init__(self, parent: QObject) -> None:
        super().__init__(parent)
        self._buttons: dict[QObject, QPushButton] = {}

    def wire(self, rows: Sequence[Sequence[QWidget | str]],
             overrides: Mapping[QWidget, QPushButton] | None = None) -> None:
        """Map every field in ``rows`` (a form's grid, row by row) to its button."""
        overrides = overrides or {}
        flat = [(r, cell) for r, row in enumerate(rows) for cell in row]
        for r, cell in flat:
            if not isinstance(cell, (QLineEdit, QComboBox, QAbstractSpinBox)):
                continue
            button = overrides.get(cell) or next(
                (c for rr, c in flat if rr >= r and isinstance(c, QPushButton)), None)
            if button is None:
                continue
            target: QWidget = cell
            if isinstance(cell, QComboBox) and cell.lineEdit() is not None:
                target = cell.lineEdit()  # type: ignore[assignment]  # not None: checked
            self._buttons[target] = button
            target.installEventFilter(self)
            if target is not cell:
                self._buttons[cell] = button
                cell.installEventFilter(self)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if (event.type() == QEvent.Type.KeyPress and isinstance(event, QKeyEvent)
                and event.key() in ENTER_KEYS
                and not event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier):
            button = self._buttons.get(obj)
            if button is not None and button.isEnabled():
                button.click()
                return True
        return super().eventFilter(obj, event)


class FieldErrors:
    """One error label, shown in the row reserved under the field that was wrong, across
    every column of the form (it used to sit in the label column and push the form aside)."""

    def __init__(self, label: QLabel) -> None:
        self.label = label
        self._places: dict[QWidget, tuple[FormGrid, int]] = {}

    def reserve(self, field: QWidget, grid: FormGrid, row: int) -> None:
        """Errors about ``field`` show in ``grid``'s (empty) row ``row``."""
        self._places[field] = (grid, row)

    def show(self, message: str, field: QWidget | None) -> None:
        place = self._places.get(field) if field is not None else None
        if place is None and self._places:
            place = next(iter(self._places.values()))
        if place is not None:
            grid, row = place
            grid.place_across(self.label, row)
        self.label.setText(message)
        self.label.show()

    def hide(self) -> None:
        self.label.hide()
