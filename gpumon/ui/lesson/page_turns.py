"""The lesson's Previous and Next buttons, kept away from the space bar.

A click on Next left the keyboard focus on it, so the next Space (meant to run the step,
or to pause) pressed it again: step 6 went back to 5, and three steps went by unseen. So the
two buttons take no focus, a Space that reaches them anyway (a program focused them) is
eaten, and turning the page hands the focus to Run, whose Space runs the step. Alt+Left and
Alt+Right turn the page from the keyboard, while the focus is on the page.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QKeyEvent, QKeySequence, QShortcut
from PySide6.QtWidgets import QPushButton, QWidget

KEYS = ("Alt+Left", "Alt+Right")  # previous, next: a browser's back and forward


class PageTurns(QObject):
    """Wires ``previous`` and ``next_`` to ``turn(-1)`` / ``turn(+1)`` on ``page``."""

    def __init__(self, page: QWidget, previous: QPushButton, next_: QPushButton,
                 turn: Callable[[int], None]) -> None:
        super().__init__(page)
        self.buttons = (previous, next_)
        for button, by, keys in ((previous, -1, KEYS[0]), (next_, 1, KEYS[1])):
            button.setFocusPolicy(Qt.FocusPolicy.NoFocus)
            button.installEventFilter(self)
            button.clicked.connect(lambda _=False, by=by: turn(by))
            key = QShortcut(QKeySequence(keys), page)
            key.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            key.activated.connect(lambda by=by: turn(by))
            button.setToolTip(QKeySequence(keys).toString(
                QKeySequence.SequenceFormat.NativeText))

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if (watched in self.buttons and isinstance(event, QKeyEvent)
                and event.key() == Qt.Key.Key_Space):
            return True  # neither pressed nor released: the button never clicks
        return super().eventFilter(watched, event)
