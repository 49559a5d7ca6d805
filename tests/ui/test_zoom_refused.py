"""A zoom step the screen has no room for is taken back with a word in the status bar, never
a window larger than the screen (issue 57, item 2). The offscreen screen here is 800 x 800,
where 300 % fits; the room is made that of a 1920 x 1080 screen at 200 % desktop scale
(960 x 540 logical pixels), where the issue saw neither 200 % nor 300 % fit."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QSize
from qt_fixtures import settled

from gpumon.ui.window import presentation

pytestmark = [pytest.mark.usefixtures("restore_app_look"), pytest.mark.refuses_zoom]


def test_a_zoom_that_cannot_fit_is_refused_with_a_word(qtbot, make_window,
                                                       monkeypatch) -> None:
    monkeypatch.setattr(presentation, "room_for", lambda window: QSize(960, 540))
    w = make_window()
    qtbot.waitUntil(lambda: w.snapshot_count >= 2, timeout=5000)
    w.presentation.set_zoom(3.0)
    assert settled(lambda: w.presentation.zoom) == 3.0  # the Monitor squeezes: it fits
    w.show_tab("Lesson")  # its text and buttons do not, at 300 %
    # the page is built a frame later, and then the step is taken back (on a loaded machine
    # the frames come late: wait for the refusal before letting the layout settle)
    qtbot.waitUntil(lambda: w.presentation.zoom < 3.0, timeout=10000)
    zoom = settled(lambda: w.presentation.zoom)
    room = presentation.room_for(w)
    need = settled(lambda: w.layout().totalMinimumSize())
    assert room is not None
    assert need.width() <= room.width() and need.height() <= room.height(), (zoom, need, room)
    assert 1.0 <= zoom < 3.0  # 300 % does not fit 960 x 540
    said = w.statusBar().currentMessage()
    assert said.startswith("The screen has no room for 300 % ("), said
    assert f"back to {round(zoom * 100)} %" in said, said
    assert w.settings.zoom == zoom  # remembered as it is, not as it was asked
