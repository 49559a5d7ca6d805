"""A new application font reaches a window's pages after the frame that answers the key.

``QApplication.setFont`` (a zoom step) gives every widget of the window the new font in the
frame that answers the key, and lays it out again: 50-160 ms for the Monitor of 8 GPUs at
0.1 s here, before anything changed on screen. ``FontStages.hold(parts)`` keeps ``parts``
(the tab pages) at the font they have now while the application's changes, so that frame
lays out at the new size only what is around them: the menu bar, the tool bar, the header,
the tab bar. Medians of 14 steps up to 300 % and back, 8 GPUs, every page built, graphs
veiled: ~20 ms to that frame with the pages held, ~43 ms without. After that frame the
parts on screen take the new font together, in one turn; then the hidden ones, one a frame
(next_frame.py). A held part that comes into view (its tab chosen) takes it at once.
``hold_scenes`` does the same for the graphs' scenes, each until it is restyled.

    stages.hold(pages)   # before QApplication.setFont
"""

from __future__ import annotations

from collections.abc import Iterable

import shiboken6
from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QApplication, QGraphicsScene, QWidget

from gpumon.ui.widgets.next_frame import after_next_frame

# Every property of the font set on the part (QFont::AllPropertiesResolved, and any property a
# later Qt adds): nothing of the application's new font reaches the part or its children.
EVERY_PROPERTY = 0xFFFF_FFFF


def repolish_styled(widgets: Iterable[QWidget]) -> None:
    """Widgets with a style sheet keep the font they had when it was applied (a SIMULATED
    badge stayed 9 pt at 300 %): polish them again so they take the font they inherit."""
    for widget in widgets:
        if widget.styleSheet():
            style = widget.style()
            style.unpolish(widget)
            style.polish(widget)


def with_children(widget: QWidget) -> list[QWidget]:
    """``widget`` and every widget under it."""
    return [widget, *widget.findChildren(QWidget)]


class FontStages(QObject):
    """Holds parts of ``window`` at their font and gives them the inherited one a frame
    later (see the module doc). ``shown``: the parts on screen have it; ``done``: all have."""

    shown = Signal()
    done = Signal()

    def __init__(self, window: QWidget) -> None:
        super().__init__(window)
        self._window = window
        self._held: list[QWidget] = []
        self._shown_due = False  # ``shown`` not yet emitted for the latest hold
        self._active = False  # ``done`` not yet emitted for the latest hold
        self._queued = False
        self._holding: QWidget | None = None  # the part being held now
        self._scenes: set[QGraphicsScene] = set()  # graphs' scenes held at their font

    def held(self) -> list[QWidget]:
        """The parts still at the font they were held at (each a widget alive)."""
        self._held = [p for p in self._held if shiboken6.isValid(p)]
        return list(self._held)

    def holds(self, widget: QWidget) -> bool:
        """True when ``widget`` is a held part or lies under one."""
        held = self.held()
        w: QWidget | None = widget
        while w is not None:
            if w in held:
                return True
            w = w.parentWidget()
        return False

    def hold(self, parts: Iterable[QWidget]) -> None:
        """Keep ``parts`` at the font they have now (a part held already keeps the font it
        was held at; one with a font of its own is left alone); they take the application's
        after the next frame."""
        held = self.held()
        for part in parts:
            if part in held or part.testAttribute(Qt.WidgetAttribute.WA_SetFont):
                continue
            font = QFont(part.font())
            font.setResolveMask(EVERY_PROPERTY)
            part.installEventFilter(self)
            self._holding = part
            try:
                part.setFont(font)  # the same font: its FontChange is dropped (eventFilter)
            finally:
                self._holding = None
            self._held.append(part)
        self._shown_due = self._active = True
        if not self._queued:
            self._queued = True
            after_next_frame(self._window, self._next)

    def hold_scenes(self, scenes: Iterable[QGraphicsScene]) -> None:
        """Keep graphs' scenes at their font until ``release_scene``: their items took the
        new font and were laid out again in the frame that answers the key (~4 ms for 16
        graphs). The application's font change is kept from them (eventFilter), which
        costs nothing, where setting the same font again on the scene cost as much."""
        self._scenes = {s for s in self._scenes if shiboken6.isValid(s)}
        for scene in scenes:
            if scene not in self._scenes:
                scene.installEventFilter(self)
                self._scenes.add(scene)

    def release_scene(self, scene: QGraphicsScene) -> None:
        """The application's font on a scene held by ``hold_scenes``."""
        if scene in self._scenes:
            self._scenes.discard(scene)
            scene.removeEventFilter(self)
            if scene.font() != QApplication.font():
                QApplication.sendEvent(scene, QEvent(QEvent.Type.ApplicationFontChange))

    def finish(self) -> None:
        """Every held part takes its inherited font now."""
        for part in self.held():
            self._release(part)
        self._end()

    def _next(self) -> None:
        """One turn: the parts on screen, or else one hidden part."""
        self._queued = False
        held = self.held()
        on_screen = [p for p in held if p.isVisible()]
        for part in on_screen or held[:1]:
            self._release(part)
        if self._shown_due:
            self._shown_due = False
            self.shown.emit()
        if self.held():
            self._queued = True
            after_next_frame(self._window, self._next)
        else:
            self._end()

    def _end(self) -> None:
        if not self._active:
            return
        self._active = False
        if self._shown_due:
            self._shown_due = False
            self.shown.emit()
        self.done.emit()

    def _release(self, part: QWidget) -> None:
        if part in self._held:
            self._held.remove(part)
        part.removeEventFilter(self)
        part.setFont(QFont())  # no property of its own: it inherits the font again
        repolish_styled(with_children(part))

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ApplicationFontChange and obj in self._scenes:
            return True  # a held scene (hold_scenes)
        if event.type() == QEvent.Type.FontChange and obj is self._holding:
            return True  # nothing changed but the font's mask: the Monitor page fitted its
            # parts again on it, in the frame that answers the key
        if event.type() == QEvent.Type.Show and isinstance(obj, QWidget) and obj in self._held:
            self._release(obj)  # its tab was chosen: it is painted with the new font
        return False
