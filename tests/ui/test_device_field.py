"""The playground's device field shows its longest item whole ("cuda:0 — 本机不可用", once cut
to "a:0 — 本机不可用"), and its list shows every item uncut (the middle was elided), at 100 %
and 300 %, in Chinese and in English."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QComboBox

from gpumon import i18n
from gpumon.playground.data.device_offer import offered
from gpumon.playground.data.devices import DeviceOption

pytestmark = pytest.mark.usefixtures("restore_app_look")


def _shows_whole(combo: QComboBox, text: str) -> bool:
    """Whether the line edit shows all of ``text``: with the cursor at its end, the edit has
    not scrolled (the end lies as far from the start as the text is wide)."""
    edit = combo.lineEdit()
    assert edit is not None
    combo.setEditText(text)
    edit.setCursorPosition(0)
    start = edit.cursorRect().center().x()
    edit.setCursorPosition(len(text))
    end = edit.cursorRect().center().x()
    return abs((end - start) - edit.fontMetrics().horizontalAdvance(text)) <= 1 \
        and end < edit.width()


@pytest.mark.parametrize("language", [i18n.CHINESE, i18n.ENGLISH])
@pytest.mark.parametrize("zoom", [1.0, 3.0])
def test_the_device_field_and_its_list_show_the_longest_item_whole(
        qtbot, make_window, zoom: float, language: str) -> None:
    i18n.set_language(language)
    w = make_window()
    panel = w.playground
    w.tabs.setCurrentWidget(panel)
    qtbot.waitUntil(panel.isVisible, timeout=3000)
    forms = panel.forms
    w.presentation.set_zoom(zoom)
    forms.set_devices(offered([DeviceOption("cpu", "cpu — main memory")], 2))
    combo = forms.device_combos[0]  # the Create tab's, on the tab shown
    longest = max((combo.itemText(i) for i in range(combo.count())), key=len)
    assert longest.startswith("cuda:") and ("本机不可用" in longest) == (language == i18n.CHINESE)
    qtbot.waitUntil(lambda: combo.width() >= combo.minimumWidth(), timeout=3000)
    QApplication.processEvents()
    assert _shows_whole(combo, longest), (combo.width(), longest)
    combo.showPopup()
    view = combo.view()
    qtbot.waitUntil(view.isVisible, timeout=3000)
    assert view.textElideMode() == Qt.TextElideMode.ElideNone
    assert view.viewport().width() >= view.sizeHintForColumn(0)  # every item whole
    combo.hidePopup()
