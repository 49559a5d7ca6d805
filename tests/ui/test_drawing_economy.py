"""What keeps a tick's redraw cheap (benchmarks/bench_drawing.py measures it): cached axes,
an opaque fill, peak downsampling to the pixel, cheap readout labels, and the grid spreading
the curve redraws of a long window over several ticks."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QColor, QImage
from qt_fixtures import first_curve, settled

from gpumon.telemetry.model.types import GpuInfo, GpuSample
from gpumon.ui.monitor.grid import GpuGrid
from gpumon.ui.monitor.panel import MEM_COLOR, GpuPanel
from gpumon.ui.monitor.panel_plots import FILL_ALPHA
from gpumon.ui.widgets.plot_style import opaque_fill, style_plot
from gpumon.ui.widgets.runs_label import RunsLabel, TextRun
from gpumon.ui.widgets.theme import DARK, LIGHT
from gpumon.units import GIB

INFO = GpuInfo(0, "Test GPU", "GPU-0000", "00000000:01:00.0", mem_total_bytes=16 * GIB)
WINDOW_S = 3600.0


def _shown_panel(qtbot, series):
    panel = GpuPanel(INFO)
    qtbot.addWidget(panel)
    panel.set_window(WINDOW_S)
    panel.resize(700, 300)
    panel.show()
    qtbot.waitExposed(panel)
    panel.update_view(GpuSample(0, 0.0), 0.0, series)
    qtbot.waitUntil(lambda: panel.util_plot.getViewBox().width() > 0, timeout=3000)  # laid out
    return panel


def _ramp(t_now: float):
    def series(_gpu: int, _key: str) -> tuple[np.ndarray, np.ndarray]:
        t = np.arange(t_now - WINDOW_S, t_now + 1.0)
        return t, (t % 97) * GIB / 10
    return series


def test_a_curve_redraw_does_not_repaint_the_axes(qtbot, monkeypatch) -> None:
    painted: list[str] = []
    original = pg.AxisItem.paint

    def counting(self, *args):
        painted.append(self.orientation)
        return original(self, *args)

    monkeypatch.setattr(pg.AxisItem, "paint", counting)
    panel = _shown_panel(qtbot, _ramp(0.0))
    # Drawn into the cache: twice for the memory plot's left axis, which narrows once its tick
    # labels are measured (52.6 -> 37.9 px). Wait until no axis has painted for 200 ms, not
    # for a count of paints, which the relayout can outlast on a busy machine.
    for _ in range(25):  # at most 5 s
        before = len(painted)
        qtbot.wait(200)  # not awaiting: 200 ms in which no axis paints
        if len(painted) >= 4 and len(painted) == before:
            break
    else:
        raise AssertionError(f"the axes kept repainting: {painted}")
    # One tick drawn at once before counting: a relayout still pending on a busy machine (the
    # axis narrowing) happens in it, not in the ticks counted.
    panel.update_view(GpuSample(0, 30.0), 30.0, _ramp(30.0))
    panel.memory_widget.viewport().repaint()
    panel.util_widget.viewport().repaint()
    settled(lambda: len(painted))  # a relayout it posted paints now, not in the ticks counted
    painted.clear()
    for t in (60.0, 120.0, 180.0):  # each tick moves the curves by more than a pixel
        panel.update_view(GpuSample(0, t), t, _ramp(t))
        panel.memory_widget.viewport().repaint()
        panel.util_widget.viewport().repaint()
    assert painted == []


def test_memory_fill_is_opaque_and_blended_for_the_theme(qtbot) -> None:
    assert opaque_fill("#000000", 0.25, "#ffffff") == QColor("#bfbfbf")
    panel = GpuPanel(INFO)
    qtbot.addWidget(panel)
    fill = first_curve(panel.memory_widget).opts["brush"]
    brush = pg.mkBrush(fill)
    assert brush.color().alpha() == 255
    assert brush.color() == opaque_fill(MEM_COLOR, FILL_ALPHA, LIGHT.plot_bg)
    style_plot(panel.memory_widget, DARK, 1.0, 9.0)
    dark = pg.mkBrush(first_curve(panel.memory_widget).opts["brush"]).color()
    assert dark == opaque_fill(MEM_COLOR, FILL_ALPHA, DARK.plot_bg) and dark.alpha() == 255
    assert dark != brush.color()


def test_peak_downsampling_draws_about_two_points_a_pixel_and_keeps_the_peaks(qtbot) -> None:
    t = np.arange(-WINDOW_S, 1.0)
    v = np.full(t.shape, 1.0)
    v[1234] = 90.0  # a one-sample spike must still show

    def series(_gpu: int, key: str) -> tuple[np.ndarray, np.ndarray]:
        return t, (v * GIB if key.startswith("mem") else v)

    panel = _shown_panel(qtbot, series)
    panel.update_view(GpuSample(0, 0.0), 0.0, series)
    x, y = first_curve(panel.util_widget).getData()
    width = panel.util_plot.getViewBox().width()
    assert x is not None and y is not None
    assert len(x) <= 2.5 * width, (len(x), width)  # pyqtgraph's default drew ~10 a pixel
    assert y.max() == 90.0


def test_runs_label_reads_as_plain_text_and_paints_its_runs(qtbot) -> None:
    label = RunsLabel()
    qtbot.addWidget(label)
    label.resize(300, 24)
    sets: list[str] = []
    original = label.setText
    label.setText = lambda text: (sets.append(text), original(text))  # type: ignore[method-assign]
    runs = [TextRun("■■■", color="#ff0000"), TextRun(" GPU "), TextRun("42 %", bold=True)]
    label.set_runs(runs)
    label.set_runs(list(runs))  # the same runs: nothing set, nothing repainted
    assert sets == ["■■■ GPU 42 %"] and label.text() == "■■■ GPU 42 %"
    image = label.grab().toImage().convertToFormat(QImage.Format.Format_RGB32)
    reds = sum(1 for x in range(image.width()) for y in range(image.height())
               if QColor(image.pixel(x, y)).red() > 200 and QColor(image.pixel(x, y)).green() < 60)
    assert reds > 10  # the coloured swatch was painted in its colour


@dataclass
class FakePanel:
    """What GpuGrid._due reads from a panel: its lag and its pixels per second."""

    index: int
    px_per_s: float
    drawn_at: float | None = None

    def curve_lag(self, t: float) -> float:
        if self.drawn_at is None:
            return float("inf")
        return (t - self.drawn_at + 0.02) * self.px_per_s

    def pixels_per_s(self) -> float:
        return self.px_per_s


def _run_ticks(panels: list[FakePanel], ticks: int, dt: float = 1.0
               ) -> tuple[list[int], list[float]]:
    """Per tick: how many panels redrew; and every lag (px) at which a panel redrew."""
    counts, lags = [], []
    for n in range(1, ticks + 1):
        t = n * dt
        due = GpuGrid._due(panels, t, dt)  # type: ignore[arg-type]
        counts.append(len(due))
        for p in panels:
            if p.index in due:
                if p.drawn_at is not None:
                    lags.append(p.curve_lag(t))
                p.drawn_at = t
    return counts, lags


def test_a_long_window_spreads_the_redraws_over_the_ticks() -> None:
    # 8 panels, 1 hour on 180 px at 1 s: 0.05 px a tick, half a pixel every 10 ticks.
    panels = [FakePanel(i, 180 / 3600) for i in range(8)]
    counts, lags = _run_ticks(panels, 200)
    assert counts[0] == 8  # the first draw: every panel
    assert max(counts[20:]) == 1  # then one panel a tick at most, not all eight together
    assert sum(counts[20:]) >= 8 * 180 / 11  # each still redrawn about every 10 ticks
    assert max(lags) < 1.0  # and never a whole pixel behind


def test_a_short_window_redraws_every_panel_every_tick() -> None:
    # 5 minutes on 180 px at 1 s: 0.6 px a tick, every panel is due on every tick.
    panels = [FakePanel(i, 180 / 300) for i in range(8)]
    counts, _ = _run_ticks(panels, 30)
    assert counts == [8] * 30


def test_due_takes_the_most_behind_first_and_never_leaves_a_pixel_behind() -> None:
    panels = [FakePanel(0, 0.05, drawn_at=0.0), FakePanel(1, 0.05, drawn_at=-5.0),
              FakePanel(2, 0.05, drawn_at=-30.0), FakePanel(3, 0.05, drawn_at=9.5)]
    # At t=10 the lags are 0.5, 0.75, 2.0 and 0.03 px, and the curves' speed needs one
    # redraw a tick: the panel a pixel behind takes it; without it, the most behind does.
    assert GpuGrid._due(panels, 10.0, 1.0) == {2}  # type: ignore[arg-type]
    assert GpuGrid._due(panels[:2] + panels[3:], 10.0, 1.0) == {1}  # type: ignore[arg-type]
    panels[0].drawn_at = -20.0  # two panels a pixel behind: both, whatever the budget
    assert GpuGrid._due(panels, 10.0, 1.0) == {0, 2}  # type: ignore[arg-type]
    assert GpuGrid._due(panels, 10.0, 0.0) == {0, 1, 2}  # first tick: every due panel


def test_runs_label_shows_plain_text_set_directly(qtbot) -> None:
    label = RunsLabel()
    qtbot.addWidget(label)
    label.resize(200, 24)
    label.set_runs([TextRun("runs", bold=True)])
    label.setText("plain words")  # QLabel's own setText still works and wins
    image = label.grab().toImage().convertToFormat(QImage.Format.Format_RGB32)
    background = QColor(image.pixel(0, 0))
    inked = [x for x in range(200) for y in range(24) if QColor(image.pixel(x, y)) != background]
    words = label.fontMetrics().horizontalAdvance("plain words")
    assert label.text() == "plain words" and max(inked) >= words - 4  # not the short "runs"
