"""Which texts a window shows cut: a label, button, tab, list or menu narrower than its text,
or partly hidden by a scroll area or splitter around it (text width against widget width).

Lines elided on purpose (``RunsLabel``: "…" and the whole line in a tooltip) are listed
apart by :func:`elided_texts`; a widget scrolled wholly out of view is not cut.
"""

from __future__ import annotations

from PySide6.QtWidgets import (
    QAbstractButton,
    QComboBox,
    QGroupBox,
    QLabel,
    QMenuBar,
    QTabBar,
    QToolBar,
    QWidget,
)

from gpumon.ui.widgets.runs_label import RunsLabel


def _shown(w: QWidget) -> bool:
    return w.isVisible() and w.width() > 0 and w.height() > 0


def _clipped(w: QWidget, need: int) -> bool:
    """An ancestor (a scroll area, a splitter) hides part of the first ``need`` px."""
    visible = w.visibleRegion().boundingRect()
    return not visible.isEmpty() and visible.width() + 1 < min(w.width(), need)


def _narrow(w: QWidget, need: int) -> bool:
    return w.width() + 1 < need or _clipped(w, need)


def _labels(root: QWidget) -> list[str]:
    cut = []
    for label in root.findChildren(QLabel):
        if not _shown(label) or not label.text() or isinstance(label, RunsLabel):
            continue
        if label.wordWrap():
            need = label.heightForWidth(label.width())  # it takes off the padding itself
            if label.height() + 1 < need or _clipped(label, label.width()):
                cut.append(f"label {label.text()[:50]!r}: {label.height()} px high, needs {need}")
        elif _narrow(label, label.minimumSizeHint().width()):
            cut.append(f"label {label.text()[:50]!r}: {label.width()} px wide, needs "
                       f"{label.minimumSizeHint().width()}")
    return cut


def _buttons_and_lists(root: QWidget) -> list[str]:
    cut = []
    for button in root.findChildren(QAbstractButton):
        if _shown(button) and button.text() and _narrow(button, button.minimumSizeHint().width()):
            cut.append(f"button {button.text()!r}: {button.width()} px wide, needs "
                       f"{button.minimumSizeHint().width()}")
    for box in root.findChildren(QComboBox):
        if _shown(box) and _narrow(box, box.minimumSizeHint().width()):
            cut.append(f"list {box.currentText()!r}: {box.width()} px wide, needs "
                       f"{box.minimumSizeHint().width()}")
    for group in root.findChildren(QGroupBox):
        if _shown(group) and group.title():
            need = group.fontMetrics().horizontalAdvance(group.title())
            if _narrow(group, need):
                cut.append(f"group {group.title()!r}: {group.width()} px wide, needs {need}")
    return cut


def _bars(root: QWidget) -> list[str]:
    cut = []
    for bar in root.findChildren(QTabBar):
        if not _shown(bar):
            continue
        visible = bar.visibleRegion().boundingRect()
        for i in range(bar.count()):
            rect = bar.tabRect(i)
            need = bar.fontMetrics().horizontalAdvance(bar.tabText(i).replace("&", ""))
            if rect.width() < need or visible.intersected(rect).width() + 1 < rect.width():
                cut.append(f"tab {bar.tabText(i)!r}: {rect.width()} px, needs {need}")
    for menubar in root.findChildren(QMenuBar):
        for action in menubar.actions():
            g = menubar.actionGeometry(action)
            if action.isVisible() and (g.isEmpty() or g.right() > menubar.width()):
                cut.append(f"menu {action.text()!r} is not shown whole")
    for toolbar in root.findChildren(QToolBar):
        if not _shown(toolbar):
            continue
        for action in toolbar.actions():
            widget = toolbar.widgetForAction(action)
            if action.isVisible() and not action.isSeparator() and widget is not None \
                    and not widget.isVisible():
                cut.append(f"toolbar item {action.text() or widget.objectName()!r} went to the "
                           "overflow menu")
    return cut


def cut_texts(root: QWidget) -> list[str]:
    """One line per text under ``root`` that does not fit the widget showing it."""
    return _labels(root) + _buttons_and_lists(root) + _bars(root)


def elided_texts(root: QWidget) -> list[str]:
    """The lines shown with "…" on purpose (the whole line is in their tooltip)."""
    return [label.text() for label in root.findChildren(RunsLabel)
            if _shown(label) and label.is_elided()]
