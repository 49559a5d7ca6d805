"""A tab widget whose pages can be built the first time they are shown or asked for.

Start-up then pays neither for building the Playground and Lesson pages nor for importing
their modules (torch's engine, the lesson's steps). A tab is found by its key, the English
title ("Playground"); what the tab shows is the key in the chosen language.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Slot
from PySide6.QtWidgets import QTabWidget, QWidget

from gpumon.i18n import tr


class LazyTabs(QTabWidget):
    """``add_lazy_page(title, build)``: the tab holds an empty placeholder until ``build()``
    makes the page, when the tab is first shown or ``page(title)`` asks for it."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._lazy: dict[str, tuple[QWidget, Callable[[], QWidget]]] = {}
        self.currentChanged.connect(self._build_shown_page)  # before any page connects

    def add_lazy_page(self, title: str, build: Callable[[], QWidget]) -> int:
        """A tab whose page ``build()`` makes later; returns its index."""
        placeholder = QWidget()
        placeholder.setObjectName(f"lazyPage_{title}")
        self._lazy[title] = (placeholder, build)
        return self.add_keyed(placeholder, title)

    def add_keyed(self, widget: QWidget, key: str, index: int | None = None) -> int:
        """Add (or insert at ``index``) a tab labelled ``tr(key)`` and found by ``key``."""
        at = self.addTab(widget, tr(key)) if index is None else \
            self.insertTab(index, widget, tr(key))
        self.tabBar().setTabData(at, key)
        return at

    def key(self, index: int) -> str:
        """The key of tab ``index`` (its label, for a tab added without one)."""
        data = self.tabBar().tabData(index)
        return data if isinstance(data, str) else self.tabText(index)

    def page(self, title: str) -> QWidget | None:
        """The page of tab ``title``, built now if it was lazy and not built yet."""
        lazy = self._lazy.pop(title, None)
        if lazy is not None:
            return self._replace_placeholder(*lazy, title)
        for i in range(self.count()):
            if self.key(i) == title:
                return self.widget(i)
        return None

    @Slot(int)
    def _build_shown_page(self, index: int) -> None:
        widget = self.widget(index)
        for title, (placeholder, _) in list(self._lazy.items()):
            if placeholder is widget:
                self.page(title)
                return

    def _replace_placeholder(self, placeholder: QWidget, build: Callable[[], QWidget],
                             title: str) -> QWidget:
        """Build the page and put it where its placeholder was; if that tab was the current
        one, ``currentChanged`` fires again for it, so the page's own slots see it shown."""
        page = build()
        index = self.indexOf(placeholder)
        was_current = self.currentWidget() is placeholder
        current = self.currentIndex()
        self.blockSignals(True)
        try:
            self.add_keyed(page, title, index)
            self.removeTab(index + 1)
            self.setCurrentIndex(index if was_current else current)
        finally:
            self.blockSignals(False)
        placeholder.deleteLater()
        if was_current:
            self.currentChanged.emit(index)
        return page
