"""The tabs ask for the room of the page in front, not of the largest page built: on an
800 x 500 screen (1600 x 1000 at 200 %) the Monitor with Activity and the event log at 100 %
needed 505 px once the Lesson had been opened, and the window was 7 px taller than the
screen with no zoom step left to take back."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QSizePolicy, QVBoxLayout, QWidget
from qt_fixtures import settled

from gpumon.ui.window.lazy_tabs import LazyTabs


def page(least_height: int) -> QWidget:
    widget = QWidget()
    label = QLabel("a page")
    label.setMinimumHeight(least_height)
    QVBoxLayout(widget).addWidget(label)
    return widget


def test_the_tabs_need_only_what_the_page_in_front_needs(qtbot) -> None:
    tabs = LazyTabs()
    qtbot.addWidget(tabs)
    small = page(50)
    tabs.add_keyed(small, "Monitor")
    tabs.add_lazy_page("Lesson", lambda: page(400))
    tabs.show()
    alone = settled(lambda: tabs.minimumSizeHint().height())
    tabs.setCurrentIndex(1)  # built a frame later
    qtbot.waitUntil(lambda: tabs.is_built("Lesson"))
    # the Lesson in front needs it (sized a turn of the event loop later)
    assert settled(lambda: tabs.minimumSizeHint().height()) >= alone + 300
    tabs.setCurrentIndex(0)
    assert settled(lambda: tabs.minimumSizeHint().height()) == alone
    assert small.sizePolicy().verticalPolicy() == QSizePolicy.Policy.Preferred  # its own again
    tabs.setCurrentIndex(1)
    assert settled(lambda: tabs.minimumSizeHint().height()) >= alone + 300
