"""A fixed field for a label whose text changes every tick, so that a new reading repaints
the label and never lays its panel out again.

``QLabel.setText`` always calls ``updateGeometry()``, which invalidates the layout of the
label's parent: with the readouts straight in a GpuPanel's layout, every tick posted a
LayoutRequest to every panel and Qt laid out all its widgets again (size hints of the labels
and graphs, geometry of each), one of the five equal parts of an idle window's cost. In a
``Field`` that request reaches the field, which has no layout, and stops there; the panel's
layout sees only the field, whose size hints change with the font (the zoom), never with the
text. The label fills the field, so it is elided and painted exactly as before.

    layout.addWidget(Field(label))
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QSize
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QLabel, QWidget


class Field(QWidget):
    """Holds ``label`` at its own size; takes the label's size policy and hints."""

    def __init__(self, label: QLabel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.label = label
        label.setParent(self)
        self.setSizePolicy(label.sizePolicy())
        self.setObjectName(f"{label.objectName() or 'label'}Field")

    def sizeHint(self) -> QSize:
        return self.label.sizeHint()

    def minimumSizeHint(self) -> QSize:
        return self.label.minimumSizeHint()

    def resizeEvent(self, event: QResizeEvent) -> None:
        self.label.setGeometry(self.rect())

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() in (QEvent.Type.FontChange, QEvent.Type.StyleChange):
            self.updateGeometry()  # a new font: new hints, the panel lays out once

