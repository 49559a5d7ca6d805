"""A tab widget whose pages can be built the first time they are shown or asked for.

Start-up then pays neither for building the Playground and Lesson pages nor for importing
their modules (torch's engine, the lesson's steps). A tab is found by its key, the English
title ("Playground"); what the tab shows is the key in the chosen language.

A page shown for the first time is built on the next turn of the event loop, after the frame
that shows its tab selected and its placeholder ("Opening the Playground…"): built at once,
the first Ctrl+2 answered on screen after ~220 ms (the Playground's modules and widgets).
``built`` says when a page is there; ``page(title)`` still builds at once when asked.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from PySide6.QtCore import Qt, QTimer, Signal, Slot
from PySide6.QtWidgets import QLabel, QSizePolicy, QTabWidget, QVBoxLayout, QWidget

from gpumon.i18n import tr
from gpumon.ui.widgets.next_frame import after_next_frame


class LazyTabs(QTabWidget):
    """``add_lazy_page(title, build)``: the tab holds an empty placeholder until ``build()``
    makes the page, when the tab is first shown or ``page(title)`` asks for it."""

    built = Signal(str)  # the key of a page just built

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._lazy: dict[str, tuple[QWidget, Callable[[], QWidget]]] = {}
        self.currentChanged.connect(self._build_shown_page)  # before any page connects
        self.currentChanged.connect(self._queue_sizing)
        self._sizing_queued = False
        self._policies: dict[QWidget, QSizePolicy] = {}  # of the pages out of sight

    def add_lazy_page(self, title: str, build: Callable[[], QWidget]) -> int:
        """A tab whose page ``build()`` makes later; returns its index."""
        placeholder = QWidget()
        placeholder.setObjectName(f"lazyPage_{title}")
        note = QLabel(tr("Opening the {page} page…", page=tr(title)))
        note.setAlignment(Qt.AlignmentFlag.AlignCenter)
        note.setEnabled(False)  # the palette's muted text
        QVBoxLayout(placeholder).addWidget(note)
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

    def pages(self) -> list[QWidget]:
        """Every tab's page (a placeholder for one not built yet)."""
        pages = (self.widget(i) for i in range(self.count()))
        return [page for page in pages if page is not None]

    def index_of(self, title: str) -> int:
        """The index of tab ``title`` (-1: none), built or not."""
        return next((i for i in range(self.count()) if self.key(i) == title), -1)

    def show_key(self, title: str, then: Callable[[], None] | None = None) -> None:
        """Bring tab ``title`` in front and call ``then`` once its page is there (at once,
        or a turn later for a page shown the first time)."""
        index = self.index_of(title)
        if index < 0:
            return
        self.setCurrentIndex(index)
        if then is None:
            return
        if self.is_built(title):
            then()
            return

        def once_built(key: str) -> None:
            if key == title:
                self.built.disconnect(once_built)
                if self.currentIndex() == self.index_of(title):
                    then()

        self.built.connect(once_built)

    def is_built(self, title: str) -> bool:
        """False while tab ``title`` still holds its placeholder."""
        return title not in self._lazy

    @Slot(int)
    def _build_shown_page(self, index: int) -> None:
        """A placeholder came in front: build its page once it has been painted."""
        widget = self.widget(index)
        for title, (placeholder, _) in list(self._lazy.items()):
            if placeholder is widget:
                after_next_frame(self, partial(self._build_if_shown, title))
                return

    @Slot()
    def _queue_sizing(self) -> None:
        """Size by the page in front on the next turn of the event loop: never while a page
        or the tabs are being deleted (a page removed in its destructor changes the current
        tab), and once for several changes."""
        if not self._sizing_queued:
            self._sizing_queued = True
            QTimer.singleShot(0, self, self._size_by_shown_page)

    @Slot()
    def _size_by_shown_page(self) -> None:
        """The pages out of sight ask for no room (an ignored size policy): the tabs are as
        small as the page in front allows, not as the largest page built. On an 800 x 500
        screen (1600 x 1000 at 200 %) the Monitor with Activity and the event log at 100 %
        fitted, but once the Lesson had been opened it needed 505 px, the window was 7 px
        taller than the screen, and no zoom step was left to take back."""
        self._sizing_queued = False
        shown = self.currentWidget()
        for page in self.pages():
            if page is shown:
                if page in self._policies:
                    page.setSizePolicy(self._policies.pop(page))
            elif page not in self._policies:
                self._policies[page] = page.sizePolicy()
                page.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Ignored)
        for page in [p for p in self._policies if p not in self.pages()]:
            del self._policies[page]  # a placeholder replaced by its page

    def _build_if_shown(self, title: str) -> None:
        lazy = self._lazy.get(title)
        if lazy is not None and self.currentWidget() is lazy[0]:
            self.page(title)

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
        self._queue_sizing()  # (signals were blocked)
        if was_current:
            self.currentChanged.emit(index)
        self.built.emit(title)
        return page
