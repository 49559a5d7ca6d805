"""The playground's log of outcomes, newest first, each entry coloured by device.

Each entry shows the code (selectable, with a copy button and a context menu), then the
result or torch's error exactly as written, the operands' devices, the plain-words
explanation, the duration and the memory before/after. Entries are widgets in a scroll area;
beyond ``MAX_ENTRIES`` the oldest are dropped so a long session stays light.
"""

from __future__ import annotations

import html

from PySide6.QtCore import QEvent, QPoint, Qt, Signal
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QMenu,
    QScrollArea,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from gpumon.i18n import tr
from gpumon.playground.data.outcome import Outcome
from gpumon.ui.playground.style import (
    LIGHT_TONES,
    MONO,
    Tones,
    outcome_color,
    outcome_html,
    outcome_plain,
    outcome_tag,
    tones,
)
from gpumon.ui.widgets.theme import is_dark

MAX_ENTRIES = 1000


def _copy(text: str) -> None:
    clipboard = QGuiApplication.clipboard()
    if clipboard is not None:
        clipboard.setText(text)


class OutcomeEntry(QFrame):
    """One outcome: a coloured chip with its device, the code, and the rich-text body."""

    def __init__(self, outcome: Outcome, number: int, parent: QWidget | None = None,
                 t: Tones = LIGHT_TONES) -> None:
        super().__init__(parent)
        self.outcome = outcome
        self.setObjectName("outcomeEntry")
        color = outcome_color(outcome)
        self.color = color
        self.setAccessibleName(tr("outcome {number}: {code}", number=number, code=outcome.code))

        chip = QLabel(outcome_tag(outcome))
        chip.setObjectName("outcomeTag")
        chip.setStyleSheet(f"color: white; background: {color}; padding: 1px 6px;"
                           " border-radius: 3px; font-weight: bold;")
        self.tag = chip
        self.code_label = QLabel()
        self.code_label.setObjectName("outcomeCode")
        self.code_label.setTextFormat(Qt.TextFormat.RichText)
        self.code_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.code_label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.code_label.setToolTip(outcome.code)
        copy = QToolButton()
        copy.setObjectName("copyCodeButton")
        copy.setText(tr("Copy"))
        copy.setToolTip(tr("Copy the code to the clipboard"))
        copy.setAccessibleName(tr("Copy code"))
        copy.setAutoRaise(True)
        copy.clicked.connect(lambda: _copy(self.outcome.code))
        self.copy_button = copy
        number_label = self.number_label = QLabel(f"#{number}")

        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        top.setSpacing(6)
        top.addWidget(chip)
        top.addWidget(self.code_label, 1)
        top.addWidget(number_label)
        top.addWidget(copy)

        self.body = QLabel()
        self.body.setObjectName("outcomeBody")
        self.body.setTextFormat(Qt.TextFormat.RichText)
        self.body.setWordWrap(True)
        self.body.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 4, 6, 4)
        layout.setSpacing(2)
        layout.addLayout(top)
        layout.addWidget(self.body)

        self.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.customContextMenuRequested.connect(self._menu)
        for label in (self.code_label, self.body):
            label.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
            label.customContextMenuRequested.connect(
                lambda pos, w=label: self._menu(w.mapTo(self, pos)))

        self.tones = t
        self.restyle(t)

    def changeEvent(self, event: QEvent) -> None:
        """The zoom: this entry's style sheet styles its labels and button, which then keep
        their old font (the code and body stayed 9 pt at 200 %): polish them again."""
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:
            for child in (self.code_label, self.body, self.copy_button):
                child.style().unpolish(child)
                child.style().polish(child)

    def restyle(self, t: Tones) -> None:
        """Colours for a light or dark palette; the chip keeps its device colour."""
        self.tones = t
        tint = t.error_bg if not self.outcome.ok else t.entry_bg
        self.setStyleSheet(
            f"QFrame#outcomeEntry {{ border: 1px solid {t.border}; border-left: 6px solid "
            f"{self.color}; background: {tint}; border-radius: 2px; }}"
            f" QFrame#outcomeEntry QLabel {{ color: {t.text}; }}"
            f" QFrame#outcomeEntry QToolButton {{ color: {t.muted}; }}")
        # code-line cells: keep their lines and indentation (rich text collapses both)
        code = html.escape(self.outcome.code).replace(" ", "&nbsp;").replace("\n", "<br>")
        shown = f'<span style="{MONO} color:{t.text}"><b>{code}</b></span>'  # code: English
        self.code_label.setText(shown)
        self.number_label.setStyleSheet(f"color: {t.faint};")
        self.body.setText(outcome_html(self.outcome, t))

    def plain_text(self) -> str:
        return outcome_plain(self.outcome)

    def _menu(self, pos: QPoint) -> None:
        menu = QMenu(self)
        menu.addAction(tr("Copy code"), lambda: _copy(self.outcome.code))
        if self.outcome.error is not None:
            err = self.outcome.error
            menu.addAction(tr("Copy error"), lambda: _copy(f"{err.type_name}: {err.message}"))
        elif self.outcome.preview:
            menu.addAction(tr("Copy result"), lambda: _copy(self.outcome.preview))
        menu.addAction(tr("Copy entry"), lambda: _copy(self.plain_text()))
        menu.popup(self.mapToGlobal(pos))


class OutcomeLog(QScrollArea):
    """Every outcome, newest at the top; ``entries()`` in that order."""

    countChanged = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("outcomeLog")
        self.setAccessibleName(tr("Playground log of outcomes, newest first"))
        self.setWidgetResizable(True)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        body = QWidget()
        body.setObjectName("outcomeLogBody")
        self._layout = QVBoxLayout(body)
        self._layout.setContentsMargins(2, 2, 2, 2)
        self._layout.setSpacing(4)
        self._empty = QLabel(tr("Outcomes appear here, newest first. Each shows the code, the "
                                "result and where it lives, or the error exactly as torch "
                                "wrote it."))
        self._empty.setWordWrap(True)
        self._empty.setObjectName("outcomesHint")
        self._layout.addWidget(self._empty)
        self._layout.addStretch(1)
        self.setWidget(body)
        self._entries: list[OutcomeEntry] = []  # newest first
        self._number = 0
        self.tones = tones(is_dark(self.palette()))
        self._empty.setStyleSheet(f"color: {self.tones.faint}; padding: 8px;")

    def changeEvent(self, event: QEvent) -> None:
        """A theme switch (a new application palette) restyles every entry."""
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            t = tones(is_dark(self.palette()))
            if t != self.tones:
                self.tones = t
                self._empty.setStyleSheet(f"color: {t.faint}; padding: 8px;")
                for entry in self._entries:
                    entry.restyle(t)

    def add(self, outcome: Outcome) -> OutcomeEntry:
        """Put ``outcome`` at the top and scroll there."""
        self._number += 1
        entry = OutcomeEntry(outcome, self._number, t=self.tones)
        self._empty.hide()
        self._layout.insertWidget(0, entry)
        self._entries.insert(0, entry)
        if len(self._entries) > MAX_ENTRIES:
            old = self._entries.pop()
            self._layout.removeWidget(old)
            old.deleteLater()
        self.verticalScrollBar().setValue(0)
        self.countChanged.emit(len(self._entries))
        return entry

    def room_for(self, cards: int) -> int:
        """The log's height that shows the newest ``cards`` results whole at its width (0
        with none)."""
        shown = self._entries[:cards]
        if not shown:
            return 0
        m = self._layout.contentsMargins()
        width = self.viewport().width() - m.left() - m.right()
        heights = [e.heightForWidth(width) if e.hasHeightForWidth() else e.sizeHint().height()
                   for e in shown]
        return (sum(heights) + self._layout.spacing() * (len(shown) - 1) + m.top() + m.bottom()
                + 2 * self.frameWidth())

    def entries(self) -> list[OutcomeEntry]:
        """The entries shown, newest first."""
        return list(self._entries)

    def outcomes(self) -> list[Outcome]:
        return [e.outcome for e in self._entries]

    def count(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        for entry in self._entries:
            self._layout.removeWidget(entry)
            entry.deleteLater()
        self._entries.clear()
        self._empty.show()
        self.countChanged.emit(0)
