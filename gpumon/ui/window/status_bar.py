"""The window's status bar shows only while it has something to say: a message ("Snapshot
copied…"), or one of its widgets shown (● REC while recording): an empty bar takes a line of
its own under the page, ~50 px at 300 %, that the graphs need.

A widget put in the bar counts while it is shown to its parent (its own show/hide, not the
bar's): the bar hides its normal widgets itself while a message shows, and shows them again
after; the size grip never counts."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QSizeGrip, QStatusBar, QWidget


class StatusBarShown(QObject):
    """Keeps ``bar`` visible exactly while it has a message or a shown widget."""

    def __init__(self, bar: QStatusBar) -> None:
        super().__init__(bar)
        self._bar = bar
        bar.messageChanged.connect(self.update)
        bar.installEventFilter(self)
        for child in self._widgets():
            child.installEventFilter(self)
        self.update()

    def _widgets(self) -> list[QWidget]:
        return [w for w in self._bar.findChildren(QWidget)
                if w.parentWidget() is self._bar and not isinstance(w, QSizeGrip)]

    def wanted(self) -> bool:
        """A message, or a widget in the bar that is not hidden itself."""
        return bool(self._bar.currentMessage()) or any(not w.isHidden() for w in self._widgets())

    def update(self, *_: object) -> None:
        wanted = self.wanted()
        if self._bar.isHidden() == wanted:
            self._bar.setVisible(wanted)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        kind = event.type()
        if obj is self._bar:
            if kind == QEvent.Type.ChildAdded:
                child = event.child()  # type: ignore[attr-defined]  # a QChildEvent
                if isinstance(child, QWidget):
                    child.installEventFilter(self)
        elif kind in (QEvent.Type.ShowToParent, QEvent.Type.HideToParent):
            self.update()
        return super().eventFilter(obj, event)
