"""RunsLabel measures a shorter form that is the whole line's first runs and one more from
the whole line's prefix widths, and the first form that fits without measuring the rest: the
widths must still be each form's own width, in every case."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QFont

from gpumon.ui.widgets.runs_label import RunsLabel, TextRun, runs_width

ITEMS = [TextRun("Temp "), TextRun("45 °C", bold=True), TextRun(" · Power "),
         TextRun("120 / 700 W", bold=True), TextRun(" · SM "), TextRun("1980 MHz", bold=True)]
CUT = TextRun(" · …")


def _label(qtbot, width: int) -> RunsLabel:
    label = RunsLabel()
    qtbot.addWidget(label)
    label.resize(width, 24)
    return label


@pytest.mark.parametrize("forms", [
    [[*ITEMS[:4], CUT], [*ITEMS[:2], CUT]],  # the whole line's first runs and one more
    [[TextRun("45 °C", bold=True)], [TextRun("Temp "), TextRun("x" * 30)]],  # other runs
    [ITEMS[:3], [*ITEMS[:2], TextRun("Temp ", bold=True)]],  # a prefix and a run in bold
], ids=["cut items", "other runs", "prefix only"])
def test_every_form_measures_its_own_runs(qtbot, forms: list[list[TextRun]]) -> None:
    label = _label(qtbot, 2000)
    label.set_runs(ITEMS, forms)
    expected = [runs_width(form, label.font()) for form in (ITEMS, *forms)]
    assert label.form_widths() == pytest.approx(expected, abs=0.5)
    # new values, then a new font: measured again, the same way
    values = [TextRun("Temp "), TextRun("99 °C", bold=True), *ITEMS[2:]]
    label.set_runs(values, [[*values[:4], CUT]])
    assert label.form_widths() == pytest.approx(
        [runs_width(values, label.font()), runs_width([*values[:4], CUT], label.font())],
        abs=0.5)
    big = QFont(label.font())
    big.setPointSizeF(big.pointSizeF() * 2)
    label.setFont(big)
    assert label.form_width(1) == pytest.approx(runs_width([*values[:4], CUT], big), abs=0.5)


def test_the_shown_form_is_the_first_that_fits(qtbot) -> None:
    forms = [[*ITEMS[:4], CUT], [*ITEMS[:2], CUT]]
    label = _label(qtbot, 2000)
    label.set_runs(ITEMS, forms)
    widths = [runs_width(form, label.font()) for form in (ITEMS, *forms)]
    for k, width in enumerate(widths):
        label.resize(int(width) + 2, 24)
        assert label.shown_form() == k, (k, widths)
    label.resize(4, 24)
    assert label.shown_form() == len(forms)  # none fits: the last, cut with "…"
