"""The window a teacher projects: 1400×900 at 100 % and 300 %, on the issue's machine (two
H200 and an RTX 4090, from the fake NVML through the real nvidia-ml-py, one H200 with an
uncorrected ECC error and XIDs 79 and 48, its clocks held down by the power cap).

At 300 % the Monitor keeps two GPU panels whose graphs are at least 120 px tall, the table
rows of those GPUs whole, the driver stack in the header and no empty status bar; no panel
header is cut while its line has room, and the health mark always shows; the event log
does not open by itself and never takes more than a quarter of the height; the time axis
ends in "now". Screenshots go where GPUMON_SHOTS points, to look at.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, QRect, Qt
from PySide6.QtGui import QFontMetrics, QImage, QPainter
from PySide6.QtWidgets import QApplication, QWidget

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "telemetry"))

from fakenvml import FakeNvml, use_fake_nvml
from qt_fixtures import monitor_fitted, settled

from gpumon import i18n
from gpumon.telemetry.nvml.source import NvmlSource
from gpumon.ui.window.main_window import MainWindow
from gpumon.ui.window.settings import Settings
from gpumon.units import GIB

pytestmark = pytest.mark.usefixtures("restore_app_look")
WAIT_MS = 10000
GRAPH_MIN_PX = 120
ZOOMS = (1.0, 3.0)



@pytest.fixture
def classroom(fake_lib: Path) -> Iterator[FakeNvml]:
    """The issue's machine: H200 ×2 and an RTX 4090; GPU 1 unwell."""
    with use_fake_nvml(fake_lib) as f:
        f.set_gpu_count(3)
        for gpu, (name, total) in enumerate((("NVIDIA H200", 141), ("NVIDIA H200", 141),
                                             ("NVIDIA GeForce RTX 4090", 24))):
            f.set_name(gpu, name)
            f.set_value(gpu, "mem_total", total * GIB)
        f.set_value(2, "ecc_mode", 0)
        f.set_value(2, "display_active", 1)
        f.set_value(1, "ecc_dbe_vol", 1)
        f.set_value(1, "clock_events", 0x4)  # the power cap
        f.add_xid(1, 79)
        f.add_xid(1, 48, 100)
        yield f


def open_window(qtbot, zoom: float) -> MainWindow:
    """A 1400×900 window at ``zoom`` (set before it is made, as a remembered zoom is)."""
    settings = Settings.memory()
    settings.zoom = zoom
    w = MainWindow(NvmlSource, 0.2, window_s=60, settings=settings)
    qtbot.addWidget(w)
    w.resize(1400, 900)
    w.show()
    qtbot.waitExposed(w)
    qtbot.waitUntil(lambda: w.gpu_panel(2) is not None and w.snapshot_count >= 3,
                    timeout=WAIT_MS)
    qtbot.waitUntil(lambda: w.event_log.count() >= 2, timeout=WAIT_MS)  # XIDs 79 and 48
    qtbot.waitUntil(lambda: monitor_fitted(w), timeout=WAIT_MS)
    return w


def shot(widget: QWidget, name: str) -> None:
    where = os.environ.get("GPUMON_SHOTS")
    if where:
        widget.grab().save(str(Path(where) / name))


def on_screen(widget: QWidget, inside: QWidget) -> bool:
    """``widget`` wholly inside ``inside``'s rect (a scroll area's viewport, say)."""
    top_left = widget.mapTo(inside, QPoint(0, 0))
    return inside.rect().contains(QRect(top_left, widget.size()))


@pytest.mark.parametrize("zoom", ZOOMS)
def test_two_panels_with_graphs_and_their_table_rows_whole(qtbot, classroom, zoom):
    w = open_window(qtbot, zoom)
    shot(w, f"classroom-{round(zoom * 100)}.png")
    viewport = w.gpu_grid.viewport()
    whole = [p for p in w.gpu_grid.panels if on_screen(p, viewport)]
    assert len(whole) >= 2, [(p.index, p.geometry(), viewport.size()) for p in w.gpu_grid.panels]
    for panel in whole:
        for graph in (panel.memory_widget, panel.util_widget):
            assert graph.height() >= GRAPH_MIN_PX, (zoom, panel.index, graph.height())
    table = w.smi_table
    rows = {int(table.model().index(r, 0).data()): r for r in range(table.model().rowCount())}
    for panel in whole:
        r = rows[panel.index]
        top = table.rowViewportPosition(r)
        assert top >= 0 and top + table.rowHeight(r) <= table.viewport().height(), (
            zoom, panel.index, top, table.rowHeight(r), table.viewport().height())
    # the header keeps the driver stack; nothing empty below the page
    shown = " ".join(w.header.shown_lines())  # at 300 % on two lines
    assert "CUDA 12.4" in shown and "NVML 12.550.54.15" in shown, shown
    assert "Host " in shown and "Driver " in shown, shown
    for machine in (w.header.machine_label, w.header.stack_label):
        assert machine.isHidden() or (
            machine.width() >= machine.form_widths()[machine.shown_form()] - 1)
    assert not w.statusBar().isVisible()
    assert not w.event_dock.isVisible()  # two events, and the graphs keep their room


def left_edge(widget: QWidget, panel: QWidget) -> int:
    return widget.mapTo(panel, QPoint(0, 0)).x()


@pytest.mark.parametrize("zoom", (1.0, 2.0, 3.0))
def test_no_header_is_cut_while_its_line_has_room(qtbot, classroom, zoom):
    """The title gives up nothing while room lies unused between it and the health words
    ("● healthy" took 60 % of the line, a bus id showed as "000000…"); the health mark
    always shows, inside its panel (at 200 % GPU 1's ✖ was pushed out of it)."""
    w = open_window(qtbot, zoom)
    for panel in w.gpu_grid.panels:
        title, held, mark = panel.title, panel.health.held, panel.health.mark
        right_of_title = left_edge(title, panel) + title.width()
        others = [lab for lab in (held, mark) if lab.isVisible()]
        unused = min(left_edge(lab, panel) for lab in others) - right_of_title
        gap = title.fontMetrics().averageCharWidth()
        if title.is_elided():
            assert title.full_width() > title.width() + unused - gap, (
                zoom, panel.index, title.text(), title.width(), unused)
        for lab in others:  # the health words end at the line's end, inside the panel
            rect = QRect(lab.mapTo(panel, QPoint(0, 0)), lab.size())
            assert QRect(QPoint(0, 0), panel.size()).contains(rect), (zoom, panel.index, rect)
        glyph = mark.fontMetrics().horizontalAdvance(mark.text()[0])
        assert mark.width() >= glyph, (zoom, panel.index)  # at least the symbol, never cut
    unwell = w.gpu_panel(1)
    assert unwell is not None and unwell.health.mark.text() == "✖ error"
    assert unwell.health.held.isVisible()  # "clocks held down: power cap" or its reasons
    shot(unwell, f"classroom-header-{round(zoom * 100)}.png")


@pytest.mark.parametrize("zoom", ZOOMS)
def test_event_log_opens_on_the_badge_and_keeps_a_quarter(qtbot, classroom, zoom):
    w = open_window(qtbot, zoom)
    assert not w.event_dock.isVisible()  # it used to open on the first event, over 40 %
    badge = w.health.badge
    assert badge.isVisible() and badge.text().startswith(f"▲ {w.event_log.count()} events: ")
    last = w.event_log.lines()[-1]
    assert badge.text().endswith(last) and last in badge.toolTip()  # cut, the tooltip has it
    assert badge.geometry().right() <= w.controls.width()  # in the toolbar, not behind »
    qtbot.mouseClick(badge, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: w.event_dock.isVisible()
                    and w.event_dock.height() <= w.height() // 4 + 1, timeout=WAIT_MS)
    title = w.event_dock.titleBarWidget()
    assert title is not None
    app_px = QFontMetrics(QApplication.font()).height()
    assert title.fontMetrics().height() >= app_px - 1  # the title zooms with the window
    assert title.height() >= app_px
    shot(w, f"classroom-log-{round(zoom * 100)}.png")


@pytest.mark.parametrize("zoom", ZOOMS)
def test_the_time_axis_ends_in_now(qtbot, classroom, zoom):
    w = open_window(qtbot, zoom)
    for panel in w.gpu_grid.panels[:2]:
        for plot in (panel.memory_plot, panel.util_plot):
            axis = plot.getAxis("bottom")
            image = QImage(8, 8, QImage.Format.Format_ARGB32)
            painter = QPainter(image)
            _, _, texts = axis.generateDrawSpecs(painter)
            painter.end()
            assert texts, (zoom, panel.index)
            last = max(texts, key=lambda t: t[0].right())
            assert last[2] == "now", [t[2] for t in texts]
            assert axis.boundingRect().contains(last[0])
            assert all("-" not in t[2] for t in texts)  # "−200 s": a real minus


@pytest.mark.parametrize("language", ["en", "zh_CN"])
def test_eight_gpus_at_100_percent_show_every_panel_and_table_row(qtbot, language):
    """nvitop shows 8 GPUs on a 200×50 terminal; gpumon showed 6 of 8 panels and 5 of 8 table
    rows in a 1400×900 window, and 4 panels in 2 columns in Chinese: now every panel (four to
    a row) and every row is on screen in both."""
    from gpumon.telemetry.sources.simulated import SimulatedSource

    i18n.set_language(i18n.CHINESE if language == "zh_CN" else i18n.ENGLISH)

    w = MainWindow(lambda: SimulatedSource(8, seed=1), 0.2, window_s=60,
                   settings=Settings.memory())
    qtbot.addWidget(w)
    w.resize(1400, 900)
    w.show()
    qtbot.waitExposed(w)
    qtbot.waitUntil(lambda: w.gpu_panel(7) is not None and w.snapshot_count >= 3
                    and monitor_fitted(w), timeout=WAIT_MS)
    viewport = w.gpu_grid.viewport()
    assert all(on_screen(p, viewport) for p in w.gpu_grid.panels), [
        (p.index, p.geometry()) for p in w.gpu_grid.panels]
    assert all(p.memory_widget.height() >= GRAPH_MIN_PX for p in w.gpu_grid.panels)
    assert len({p.geometry().top() for p in w.gpu_grid.panels}) == 2  # two rows of four
    table = w.smi_table
    last = table.model().rowCount() - 1
    assert last == 7
    assert table.rowViewportPosition(last) + table.rowHeight(last) <= table.viewport().height()
    shot(w, f"eight-gpus-100-{language}.png")


def test_the_status_bar_shows_only_with_something_to_say(qtbot, classroom):
    w = open_window(qtbot, 1.0)
    assert not w.statusBar().isVisible()
    w.statusBar().showMessage("Snapshot copied as nvidia-smi-like text.", 200)
    assert w.statusBar().isVisible()
    qtbot.waitUntil(lambda: not w.statusBar().isVisible(), timeout=3000)
    w.files.rec_label.show()  # recording: the REC mark keeps it
    assert w.statusBar().isVisible()
    w.files.rec_label.hide()
    assert not w.statusBar().isVisible()


def test_health_tooltips_show_while_another_window_is_active(qtbot, classroom):
    """Qt shows tooltips in the active window only, unless the window says otherwise: the
    reasons of a ✖ did not show until the window was clicked."""
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QToolTip

    w = open_window(qtbot, 1.0)
    other = QWidget()
    qtbot.addWidget(other)
    other.show()
    other.activateWindow()
    qtbot.waitUntil(lambda: not w.isActiveWindow(), timeout=3000)
    mark = w.gpu_panel(1).health.mark
    QTest.mouseMove(mark, QPoint(4, 4))
    qtbot.wait(50)  # not awaiting: a pause between two moves, as a hand makes
    QTest.mouseMove(mark, QPoint(6, 5))
    qtbot.waitUntil(QToolTip.isVisible, timeout=3000)
    assert "uncorrected ECC" in QToolTip.text() or "XID" in QToolTip.text(), QToolTip.text()
    QToolTip.hideText()


def test_the_playground_at_300_percent_keeps_stop_the_code_line_and_the_results(
        qtbot, kernel_fork_server):
    """Stop showed as "S" (scrolled away with the column), the results list lay below the
    window's edge."""
    from gpumon.telemetry.sources.simulated import SimulatedSource

    settings = Settings.memory()
    settings.zoom = 3.0
    w = MainWindow(lambda: SimulatedSource(3, seed=1), 0.5, settings=settings)
    qtbot.addWidget(w)
    w.resize(1400, 900)
    w.show()
    qtbot.waitExposed(w)
    w.show_tab("Playground")
    panel = w.playground
    qtbot.waitUntil(lambda: panel.splitter.sizes()[0] > 0, timeout=WAIT_MS)
    settled(lambda: (panel.splitter.sizes(), panel.log.visibleRegion().boundingRect()))
    window = QRect(QPoint(0, 0), w.size())
    for widget in (panel.code_bar.run_button, panel.code_bar.stop_button):
        assert widget.visibleRegion().boundingRect() == widget.rect(), widget.objectName()
        assert window.contains(QRect(widget.mapTo(w, QPoint(0, 0)), widget.size()))
    edit = panel.code_bar.edit
    assert edit.width() >= edit.fontMetrics().horizontalAdvance("x" * 40)  # a line of code
    log = panel.log
    seen = log.visibleRegion().boundingRect()
    assert seen.height() >= 3 * log.fontMetrics().lineSpacing(), (seen, log.size())
    assert window.contains(QRect(log.mapTo(w, seen.topLeft()), seen.size()))
    shot(w, "playground-300.png")
    w.close()
