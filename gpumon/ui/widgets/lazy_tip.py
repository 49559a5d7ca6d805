"""A tooltip whose text is made when it is about to be shown, not on every reading.

A GPU panel's tooltip lists a dozen readings (memory free, PCIe, encoder …), each through
``tr()`` and a formatter: made on every tick for every panel it was a fifth of the window's
snapshot handling (``py-spy``, 8 GPUs at 1 s), for a text that is read only while the pointer
rests on the panel's title. ``LazyTip`` watches the widgets for the tooltip event and sets
their text from ``text()`` just before Qt shows it.

    LazyTip(lambda: describe(latest), title, readouts)
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QWidget


class LazyTip(QObject):
    """Sets ``text()`` as the tooltip of each of ``widgets`` when one is about to show it."""

    def __init__(self, text: Callable[[], str], *widgets: QWidget) -> None:
        super().__init__(widgets[0])
        self._text = text
        self._widgets = widgets
        for widget in widgets:
            widget.installEventFilter(self)

    def refresh(self) -> str:
        """Set the tooltips now (and return their text): for a caller that reads them."""
        text = self._text()
        for widget in self._widgets:
            if widget.toolTip() != text:
                widget.setToolTip(text)
        return text

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ToolTip:
            self.refresh()  # QWidget.event then shows the text just set
        return False
