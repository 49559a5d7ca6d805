"""Lesson step 1's nvidia-smi box in Chinese keeps its right border straight in the window:
the monospaced font has no Chinese glyphs, and the fallback's were not two columns wide, so
rows with 主机 or 进程： ended short of the border (the text itself is padded by terminal
columns and lines up in a terminal)."""

from __future__ import annotations

import dataclasses

import pytest
from PySide6.QtGui import QTextDocument

from gpumon.playground.lesson.results import StepResult
from gpumon.playground.lesson.steps import LESSON
from gpumon.telemetry.sources.simulated import SimulatedSource
from gpumon.text.smi_text import render

pytestmark = pytest.mark.usefixtures("restore_app_look")


def _right_ends(doc: QTextDocument) -> dict[str, float]:
    """Each box row of ``doc`` (starting and ending in | or +) and the x where it ends."""
    ends: dict[str, float] = {}
    block = doc.begin()
    while block.isValid():
        text = block.text().rstrip()
        layout = block.layout()
        if len(text) > 1 and text[0] in "|+" and text[-1] in "|+" and layout.lineCount():
            ends[text] = layout.lineAt(0).cursorToX(len(text))[0]
        block = block.next()
    return ends


def _straight(doc: QTextDocument) -> bool:
    ends = _right_ends(doc)
    return len(ends) > 10 and max(ends.values()) - min(ends.values()) < 0.5


def test_step_one_box_keeps_its_right_border_in_chinese_at_100_and_300(
        qtbot, make_window, chinese) -> None:
    w = make_window()
    page = w.lesson
    w.tabs.setCurrentWidget(page)
    qtbot.waitUntil(page.isVisible, timeout=3000)
    source = SimulatedSource(2, seed=1)
    source.open()
    snap = source.sample()
    source.close()
    text = render(dataclasses.replace(snap, processes=snap.processes[:3]))
    assert "主机" in text and "进程：" in text
    page._show_result(StepResult(1, LESSON[0], (), smi_text=text))
    doc = page.output.document()
    qtbot.waitUntil(lambda: len(_right_ends(doc)) > 10, timeout=3000)
    ends = _right_ends(doc)
    host = next(row for row in ends if "主机" in row)
    assert ends[host] == pytest.approx(ends[text.splitlines()[1]], abs=0.5), ends
    assert _straight(doc), ends
    w.presentation.set_zoom(3.0)  # the spacing is in pixels: set again for the new font
    qtbot.waitUntil(lambda: _straight(doc) and max(_right_ends(doc).values()) > 2.5 * max(
        ends.values()), timeout=3000)
