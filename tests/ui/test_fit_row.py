"""One line shared by priority (fit_row.py), labels with shorter forms (runs_label.py), and
the grid's columns (grid.columns_for): the arithmetic, and a header line in a panel."""

from __future__ import annotations

from gpumon.telemetry.model.health import Health, Level
from gpumon.telemetry.model.types import GpuInfo
from gpumon.ui.monitor.grid import columns_for, rows_height
from gpumon.ui.monitor.panel_header import PanelHeader
from gpumon.ui.monitor.panel_labels import item_forms, short_bus_id, title_forms
from gpumon.ui.widgets.fit_row import Piece, fit
from gpumon.ui.widgets.runs_label import RunsLabel, TextRun


def test_fit_takes_shorter_forms_in_order_then_cuts() -> None:
    title, held, mark = Piece((300, 200, 150), 60), Piece((200, 100), 40), Piece((100, 20))
    steps, cuts = (2, 0, 0, 1), (1, 0)
    assert fit(1000, [title, held, mark], steps, cuts, 10) == [(0, 300), (0, 200), (0, 100)]
    # the mark's word goes first, then the title's bus id (two steps), then the held words'
    assert fit(540, [title, held, mark], steps, cuts, 10) == [(0, 300), (0, 200), (1, 20)]
    assert fit(450, [title, held, mark], steps, cuts, 10) == [(1, 200), (0, 200), (1, 20)]
    assert fit(300, [title, held, mark], steps, cuts, 10) == [(2, 150), (1, 100), (1, 20)]
    # then the held words are cut down to their least, then the title
    assert fit(250, [title, held, mark], steps, cuts, 10) == [(2, 150), (1, 60), (1, 20)]
    assert fit(150, [title, held, mark], steps, cuts, 10) == [(2, 70), (1, 40), (1, 20)]
    # a hidden piece takes no room and no gap
    assert fit(330, [title, Piece(()), mark], steps, cuts, 10) == [(0, 300), (0, 0), (1, 20)]


def test_a_label_paints_the_first_form_that_fits(qtbot) -> None:
    label = RunsLabel()
    qtbot.addWidget(label)
    label.set_runs([TextRun("● healthy", bold=True)], [[TextRun("●", bold=True)]])
    wide, narrow = label.form_widths()
    label.resize(int(wide) + 2, 20)
    assert label.shown_form() == 0 and not label.is_elided()
    label.resize(int(narrow) + 2, 20)
    assert label.shown_form() == 1 and label.is_elided() and label.shown_text() == "●"
    assert label.text() == "● healthy"  # what a screen reader and the tooltip get


def test_title_and_readout_forms() -> None:
    info = GpuInfo(1, "NVIDIA H200", "GPU-1", "00000000:17:00.0", simulated=True)
    assert short_bus_id("00000000:17:00.0") == "17:00.0"
    assert short_bus_id("0001:17:00.0") == "0001:17:00.0"  # a real domain stays
    forms = ["".join(r.text for r in form) for form in title_forms(info)]
    assert forms == ["GPU 1 · NVIDIA H200 17:00.0 [SIMULATED]", "GPU 1 · NVIDIA H200 [SIMULATED]"]
    runs = [TextRun("Temp "), TextRun("40 °C", bold=True), TextRun(" · Power "),
            TextRun("100", bold=True), TextRun(" · Fan "), TextRun("30 %", bold=True)]
    assert ["".join(r.text for r in f) for f in item_forms(runs)] == [
        "Temp 40 °C · Power 100 · …", "Temp 40 °C · …"]  # whole items, never "Mem 26…"


def test_the_header_keeps_its_mark_and_gives_the_title_the_room(qtbot) -> None:
    header = PanelHeader(GpuInfo(1, "NVIDIA GeForce RTX 4090", "GPU-1", "00000000:2D:00.0"))
    qtbot.addWidget(header)
    header.health.show_health("clocks held down: power cap", Health(Level.ERROR, ("x",)),
                              "power cap")
    header.show()
    for width in (900, 500, 380, 300, 200):
        header.resize(width, 30)
        header.place()
        title, held, mark = header.title, header.health.held, header.health.mark
        assert mark.geometry().right() <= width and mark.width() >= mark.form_widths()[-1] - 1
        assert title.x() == 0 and title.geometry().right() < held.x() < mark.x()
    header.resize(900, 30)
    header.place()
    assert not header.title.is_elided() and header.health.mark.shown_text() == "✖ error"


def test_more_columns_where_the_rows_then_fit() -> None:
    def height(width: int) -> int:
        return 200 if width >= 420 else 220  # narrower panels stack their readings

    assert columns_for(8, 1380, 310) == 3  # the square root when no height is given
    assert columns_for(8, 1380, 310, 480, height) == 4  # 3 rows do not fit, 2 rows do
    assert columns_for(8, 1380, 310, 900, height) == 3  # 3 rows fit: as before
    assert columns_for(8, 680, 310, 480, height) == 2  # no room for more: it scrolls
    assert rows_height(8, 4, 1380, height) == 2 * 220 + 6 + 4
