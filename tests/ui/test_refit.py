"""Refit (gpumon/ui/widgets/refit.py): a widget fitted once after its font changes, with what
it measures laid out at the new font; any number of changes and queue() calls before the
event loop comes round are one fit; a widget deleted by then is not fitted."""

from __future__ import annotations

import shiboken6
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from gpumon.ui.widgets.refit import Refit


def _column(qtbot) -> tuple[QWidget, QLabel]:
    parent = QWidget()
    qtbot.addWidget(parent)
    label = QLabel("a few words of text", parent)
    QVBoxLayout(parent).addWidget(label)
    parent.show()
    qtbot.waitExposed(parent)
    return parent, label


def test_the_fit_comes_after_the_font_change_with_the_layout_at_the_new_font(qtbot):
    parent, label = _column(qtbot)
    layout = parent.layout()
    assert layout is not None
    seen: list[tuple[float, int]] = []
    Refit(parent, lambda: seen.append((label.font().pointSizeF(),
                                       layout.totalMinimumSize().width())))
    before = layout.totalMinimumSize().width()
    font = QFont(parent.font())
    font.setPointSizeF(font.pointSizeF() * 3)
    parent.setFont(font)
    assert seen == []  # not in the FontChange itself ...
    qtbot.waitUntil(lambda: bool(seen), timeout=2000)
    qtbot.wait(20)
    assert len(seen) == 1  # ... but once after it, with the child and the layout at 3x
    size, width = seen[0]
    assert size == font.pointSizeF()
    assert width > 2 * before


def test_changes_and_queued_fits_before_a_turn_are_one_fit(qtbot):
    parent, _ = _column(qtbot)
    calls: list[int] = []
    refit = Refit(parent, lambda: calls.append(1))
    for size in (12.0, 14.0, 16.0):  # three zoom steps faster than the event loop
        font = QFont(parent.font())
        font.setPointSizeF(size)
        parent.setFont(font)
        refit.queue()
    refit.queue(0, "a signal's arguments")  # a slot for any signal
    qtbot.waitUntil(lambda: bool(calls), timeout=2000)
    qtbot.wait(20)
    assert calls == [1]
    refit.queue()  # and a later one fits again
    qtbot.waitUntil(lambda: len(calls) == 2, timeout=2000)


def test_a_widget_deleted_before_the_turn_is_not_fitted(qtbot):
    parent = QWidget()
    calls: list[int] = []
    refit = Refit(parent, lambda: calls.append(1))
    refit.queue()
    shiboken6.delete(parent)  # its Refit, and the queued fit, go with it
    qtbot.wait(30)
    assert calls == []
