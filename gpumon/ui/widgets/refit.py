"""Fit a widget again once a new font has reached it and what it measures.

A zoom step sends each widget a FontChange. A fit that measures more than the widget's own
font (its children's size hints, a layout's minimum, a combo's size hint, which the combo's
own handler drops after an event filter has seen the event) measures old sizes there, before
the new font has been laid out.
``Refit(widget, fit)`` calls ``fit`` once the event loop has handled what is posted now
(the new font's layout requests; a 0 ms timer, so still before the next repaint:
next_frame.py), after each FontChange of ``widget`` and each ``queue()``; any number of them
before that is one call (three zoom steps faster than a frame fit once). The Refit is a
child of ``widget``: a widget deleted by then is not fitted.

A fit that needs only the widget's own font (its ``fontMetrics``) is done at once in its
``changeEvent``; work that may wait until the frame that answers the key is painted uses
``after_next_frame``.

    self._refit = Refit(self, self._fit_widths)   # and self._refit.queue() for new rows
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QWidget


class Refit(QObject):
    """Calls ``fit`` once after ``widget``'s font changes or ``queue()`` (see the module
    doc)."""

    def __init__(self, widget: QWidget, fit: Callable[[], object]) -> None:
        super().__init__(widget)
        self._widget = widget
        self._fit = fit
        self._due = False
        widget.installEventFilter(self)

    def queue(self, *_: object) -> None:
        """Fit once what is posted now has been handled (a slot for any signal)."""
        if not self._due:
            self._due = True
            QTimer.singleShot(0, self, self._run)

    def _run(self) -> None:
        self._due = False
        self._fit()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self._widget and event.type() == QEvent.Type.FontChange:
            self.queue()
        return super().eventFilter(watched, event)
