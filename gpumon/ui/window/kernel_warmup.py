"""When the playground's kernel starts: no torch until it is wanted.

A monitor-only session never starts the kernel (a process that imports torch: about 226 MB
of memory). The kernel starts, and imports torch, when the pointer rests on the Playground
or Lesson tab (the half second before a click is most of an import's head start), when one
of those tabs is first shown, or right after the window's first frame if the last session
used the playground (:attr:`Settings.playground_used`, as it was when the window was made),
so a teacher still gets a warm kernel. Each start waits for the frame (``after_next_frame``):
the kernel client's first import and the process start took tens of ms, and the frame that
shows the window, or answers the tab's key, comes first.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, QTimer, Slot

from gpumon.ui.widgets.next_frame import after_next_frame
from gpumon.ui.window.lazy_tabs import LazyTabs
from gpumon.ui.window.settings import Settings

#: The tabs whose pages use the kernel (LazyTabs keys).
KERNEL_TABS = frozenset({"Playground", "Lesson"})
#: How long the pointer rests on such a tab before the kernel starts.
HOVER_MS = 150


class KernelWarmup(QObject):
    """Starts the window's kernel when a kernel tab is hovered or shown; remembers use."""

    def __init__(self, tabs: LazyTabs, settings: Settings, start: Callable[[], None],
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._tabs = tabs
        self._settings = settings
        self._start = start  # the window's kernel_link.load (the link made on first use)
        self._prewarm = settings.playground_used  # the last session's, before this one's
        self._hover = QTimer(self)
        self._hover.setSingleShot(True)
        self._hover.setInterval(HOVER_MS)
        self._hover.timeout.connect(self.start_kernel)
        bar = tabs.tabBar()
        bar.setMouseTracking(True)
        bar.installEventFilter(self)
        tabs.currentChanged.connect(self._on_tab_shown)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        kind = event.type()
        if kind == QEvent.Type.MouseMove:
            bar = self._tabs.tabBar()
            index = bar.tabAt(event.position().toPoint())  # type: ignore[attr-defined]
            if index >= 0 and self._tabs.key(index) in KERNEL_TABS:
                if not self._hover.isActive():
                    self._hover.start()
            else:
                self._hover.stop()
        elif kind == QEvent.Type.Leave:
            self._hover.stop()
        return False

    @property
    def start_due(self) -> bool:
        """Whether the pointer rests on a kernel tab and the kernel starts when it stays."""
        return self._hover.isActive()

    @Slot()
    def start_kernel(self) -> None:
        """Start the kernel and its ``import torch`` (nothing if it runs or is loading)."""
        self._start()

    def window_shown(self) -> None:
        """The window is shown: the last session's user gets the kernel after its frame."""
        if self._prewarm:
            self._prewarm = False
            after_next_frame(self._tabs, self.start_kernel)

    @Slot(int)
    def _on_tab_shown(self, index: int) -> None:
        if self._tabs.key(index) in KERNEL_TABS:
            self._settings.playground_used = True
            after_next_frame(self._tabs, self.start_kernel)
