"""The GPU graphs as strip charts (strip.py): after hundreds of ticks that each painted only
the new strip, the picture is the one a full redraw from the same history paints, in both
themes, at 100 % and 200 % zoom and at a device pixel ratio of 2; a hidden graph is not
painted on a tick and is complete when shown; no graph is painted more often than its
curves move by a pixel; hover, theme, zoom and export still work."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6.QtGui import QColor, QImage
from PySide6.QtWidgets import QApplication, QTabWidget, QWidget

from gpumon.telemetry.decimate import anchored_peak_decimate
from gpumon.telemetry.history import History, capacity_for
from gpumon.telemetry.sampler import Sampler
from gpumon.telemetry.simulated import SimulatedSource
from gpumon.telemetry.types import GpuSample
from gpumon.ui.monitor import strip
from gpumon.ui.monitor.grid import GpuGrid
from gpumon.ui.monitor.panel import MEM_COLOR
from gpumon.ui.monitor.strip import StripChart, changed_from
from gpumon.ui.window.exports import save_plot

sys.path.insert(0, str(Path(__file__).parent))
import strip_shots as shots  # noqa: E402

TOLERANCE = 0.001  # of the pixels may differ: the leftmost block and the right edge's column


@pytest.fixture(autouse=True)
def _strip_charts_on() -> Iterator[None]:
    """Strip charts are off by default (strip.py says why); these tests turn them on."""
    before = strip.set_strip_charts(True)
    yield
    strip.set_strip_charts(before)


@pytest.mark.slow  # seconds of rendering, for a path that is off by default (strip.py)
@pytest.mark.parametrize("zoom", [1.0, 2.0])
@pytest.mark.parametrize("theme", ["light", "dark"])
def test_strip_chart_paints_what_a_full_redraw_paints(qtbot, theme, zoom) -> None:  # type: ignore[no-untyped-def]
    own, plain, counts = shots.strip_and_full(theme, zoom, ticks=300)
    # Each graph painted whole only while the first frames laid it out, then strips only.
    assert counts["full"] <= 8 and counts["strip"] >= 300, counts  # 300 ticks, 2 graphs
    assert own.fraction < TOLERANCE, own  # the same strip chart, repainted whole
    assert plain.fraction < TOLERANCE, plain  # curves painted by Qt as they were before


@pytest.mark.slow
def test_strip_chart_at_a_device_pixel_ratio_of_2(tmp_path) -> None:  # type: ignore[no-untyped-def]
    env = dict(os.environ, QT_SCALE_FACTOR="2", QT_QPA_PLATFORM="offscreen")
    for theme in ("light", "dark"):
        out = subprocess.run([sys.executable, str(Path(shots.__file__)), theme, "1.0"],
                             env=env, capture_output=True, text=True, timeout=120, check=True)
        result = json.loads(out.stdout.strip().splitlines()[-1])
        assert result["dpr"] == 2.0
        assert result["counts"]["full"] <= 8 and result["counts"]["strip"] >= 600, result
        for name in ("own", "plain"):
            d = result[name]
            assert d["pixels"] / d["total"] < TOLERANCE, (theme, name, d)


def test_a_slide_of_less_than_a_pixel_waits_and_whole_pixels_add_up(qtbot) -> None:  # type: ignore[no-untyped-def]
    panel = shots.make_panel("light", 1.0, 300.0, strips=True)
    qtbot.addWidget(panel)
    shots.run_ticks(panel, 300.0, 3, 1.0)
    mem = panel._strips[0]
    assert mem._pps > 0 and mem._t0 is not None
    t0, pps = mem._t0, mem._pps
    full, strips = mem.full_renders, mem.strip_renders

    def tick(px: float) -> None:
        t = t0 + px / pps
        panel.update_view(GpuSample(0, t), t, shots.history(t, 300.0))

    tick(0.3)  # under half a pixel: not drawn
    assert panel._t_ref == t0 and mem._pending == 0
    tick(0.8)  # the slides add up to one whole pixel
    assert panel._t_ref == pytest.approx(t0 + 1 / pps) and mem._pending == 1
    tick(4.2)  # and three more, not drawn yet
    assert panel._t_ref == pytest.approx(t0 + 4 / pps) and mem._pending == 4
    shots.repaint(panel)
    assert mem._pending == 0  # slid by four pixels and the edge painted, not the whole
    assert (mem.full_renders, mem.strip_renders) == (full, strips + 1)
    tick(-5.0)  # time went back: painted whole from there
    assert panel._t_ref == pytest.approx(t0 - 5 / pps)
    shots.repaint(panel)
    assert mem.full_renders == full + 1


def _fed_grid(qtbot, n_gpus: int = 2):  # type: ignore[no-untyped-def]
    """A grid on the first of two tabs, fed by a simulated source on a fake clock."""
    clock = [1_700_000_000.0]
    source = SimulatedSource(n_gpus, seed=0, clock=lambda: clock[0])
    sampler = Sampler(source, clock=lambda: clock[0], wall_clock=lambda: clock[0])
    sampler.open()
    history = History(capacity_for(300, 1.0))
    tabs = QTabWidget()
    qtbot.addWidget(tabs)
    grid = GpuGrid()
    tabs.addTab(grid, "graphs")
    tabs.addTab(QWidget(), "other")
    tabs.resize(900, 700)
    tabs.show()
    qtbot.waitExposed(tabs)

    def tick() -> None:
        clock[0] += 1.0
        snap = sampler.tick()
        history.append(snap)
        grid.set_gpus(snap.gpus, 300.0)
        grid.update_view(snap, history, 300.0)

    return tabs, grid, tick, sampler


def test_a_hidden_graph_is_not_painted_and_is_complete_when_shown(qtbot, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    painted: list[StripChart] = []
    original = StripChart.paint

    def counting(self, *args):  # type: ignore[no-untyped-def]
        painted.append(self)
        return original(self, *args)

    monkeypatch.setattr(StripChart, "paint", counting)
    tabs, grid, tick, sampler = _fed_grid(qtbot)
    for _ in range(60):
        tick()
        qtbot.wait(1)
    qtbot.waitUntil(lambda: len(painted) > 0, timeout=3000)
    tabs.setCurrentIndex(1)
    qtbot.wait(50)
    painted.clear()
    for _ in range(30):
        tick()
        qtbot.wait(1)
    assert painted == []  # 30 ticks, nothing painted
    panel = grid.panels[0]
    newest = panel._mem_curve.xData[-1]
    tabs.setCurrentIndex(0)
    qtbot.waitUntil(lambda: panel._mem_curve.xData[-1] != newest, timeout=3000)
    qtbot.wait(50)
    # Caught up: the newest sample is at "now" (within half a device pixel) ...
    mem = panel._strips[0]
    assert abs(panel._mem_curve.xData[-1]) <= 0.5 / mem._pps + 1e-9
    # ... and the picture is the one a full redraw paints.
    slid = shots.plots_image(panel)
    for s in panel._strips:
        s.invalidate()
    shots.repaint(panel)
    assert shots.diff(slid, shots.plots_image(panel)).fraction < TOLERANCE
    sampler.close()


@pytest.mark.parametrize("strips", [True, False])
def test_no_graph_is_painted_more_often_than_it_moves_a_pixel(qtbot, monkeypatch, strips) -> None:  # type: ignore[no-untyped-def]
    """0.1 s sampling, a 1-hour window: 1500 ticks move the curves by a few pixels. (The
    StripChart is painted whenever its graph is, strip charts on or off.)"""
    painted: list[StripChart] = []
    original = StripChart.paint

    def counting(self, *args):  # type: ignore[no-untyped-def]
        painted.append(self)
        return original(self, *args)

    monkeypatch.setattr(StripChart, "paint", counting)
    panel = shots.make_panel("light", 1.0, 3600.0, strips=strips)
    qtbot.addWidget(panel)
    t = shots.T0 + 1000.0
    panel.update_view(GpuSample(0, t), t, shots.history(t, 3600.0, 0.1))
    qtbot.waitExposed(panel)
    qtbot.wait(100)
    t += 20.0  # drawn once more at the laid-out width (the first draw preceded the layout)
    panel.update_view(GpuSample(0, t), t, shots.history(t, 3600.0, 0.1))
    qtbot.wait(20)
    painted.clear()
    mem = panel._strips[0]
    full = mem.full_renders
    for _ in range(1500):
        t += 0.1
        panel.update_view(GpuSample(0, t), t, shots.history(t, 3600.0, 0.1))
        QApplication.processEvents()
    moved_px = 150.0 * panel.pixels_per_s()
    assert 5 < moved_px < 30
    mem_paints = sum(1 for s in painted if s is mem)
    assert 0 < mem_paints <= moved_px + 2, (mem_paints, moved_px)
    assert mem.full_renders == full and (mem.strip_renders > 0) == strips


@pytest.mark.slow  # the same
def test_hover_theme_zoom_and_export_on_a_strip_chart(qtbot, tmp_path) -> None:  # type: ignore[no-untyped-def]
    panel = shots.make_panel("light", 1.0, 300.0, strips=True)
    qtbot.addWidget(panel)
    t = shots.run_ticks(panel, 300.0, 50, 1.0)
    mem = panel._strips[0]
    full = mem.full_renders
    # Hover: the crosshair is drawn over the image, which is not painted again.
    with qtbot.waitSignal(panel.hovered) as hovered:
        panel.hover_at(-100.0)
    assert hovered.args == [0, pytest.approx(panel._t_ref - 100.0)]
    shots.repaint(panel)
    assert mem.full_renders == full and all(line.isVisible() for line in panel._cross)
    panel.clear_hover()
    # Theme and zoom: new pens and fills paint the whole image once; then it slides again
    # and still paints what a full redraw paints.
    for theme, zoom in (("dark", 1.0), ("dark", 2.0), ("light", 1.0)):
        shots.style(panel, theme, zoom)
        shots.settle()  # the axes' fonts changed: laid out again
        shots.repaint(panel)
        assert mem.full_renders > full, (theme, zoom)
        pen = panel._mem_curve.opts["pen"]
        assert pen.widthF() == zoom  # thicker lines at 200 %
        for _ in range(20):
            t += 1.0
            panel.update_view(GpuSample(0, t), t, shots.history(t, 300.0))
            shots.repaint(panel)
        full, strips = mem.full_renders, mem.strip_renders
        slid = shots.plots_image(panel)
        assert strips > 0
        for s in panel._strips:
            s.invalidate()
        shots.repaint(panel)
        assert shots.diff(slid, shots.plots_image(panel)).fraction < TOLERANCE, (theme, zoom)
        full = mem.full_renders
    # Export: PNG through pyqtgraph's ImageExporter and SVG both have the curve.
    png = save_plot(panel.memory_plot, tmp_path / "memory.png")
    image = QImage(str(png)).convertToFormat(QImage.Format.Format_RGB32)
    blue = QColor(MEM_COLOR)
    hits = sum(1 for x in range(0, image.width(), 2) for y in range(0, image.height(), 2)
               if abs(QColor(image.pixel(x, y)).red() - blue.red()) < 30
               and abs(QColor(image.pixel(x, y)).blue() - blue.blue()) < 30
               and abs(QColor(image.pixel(x, y)).green() - blue.green()) < 30)
    assert hits > 50
    svg = save_plot(panel.memory_plot, tmp_path / "memory.svg").read_text()
    assert MEM_COLOR in svg.lower() and ("<path" in svg or "<polyline" in svg)
    assert mem.full_renders == full  # exports draw the curves themselves, not the cache


def test_curves_added_later_and_removed_are_painted_by_the_right_item(qtbot) -> None:  # type: ignore[no-untyped-def]
    panel = shots.make_panel("light", 1.0, 300.0, strips=True)
    qtbot.addWidget(panel)
    shots.run_ticks(panel, 300.0, 5, 1.0)
    mem = panel._strips[0]
    curve = panel.add_memory_series("torch_allocated_bytes", "torch", "#d62728")
    assert curve in mem._curves and curve.flags() & strip.NO_CONTENTS
    filled = pg.PlotCurveItem(fillLevel=0.0, brush=pg.mkBrush("#abcdef"), pen="#123456")
    panel.memory_plot.addItem(filled)  # a filled area: painted from the image too
    assert filled in mem._curves
    panel.memory_plot.removeItem(filled)
    assert filled not in mem._curves and not filled.flags() & strip.NO_CONTENTS


def test_changed_from_finds_where_a_slid_curve_differs() -> None:
    x = np.arange(-10.0, 1.0)
    y = np.arange(11.0)
    old = (x, y)
    # Slid by one second, one new sample: unchanged up to the old newest point.
    new = (x - 1.0, y)
    assert changed_from(old, (np.append(new[0][1:], 0.0), np.append(y[1:], 99.0)), 1.0,
                        -9.5) == -1.0
    assert changed_from(old, old, 0.0, -9.5) is None  # nothing changed
    y2 = y.copy()
    y2[5] = np.nan  # a gap where the curve was drawn: from the point before it
    assert changed_from(old, (x, y2), 0.0, -9.5) == x[4]
    assert changed_from(old, (x, y + 1), 0.0, -9.5) == -np.inf  # a new history: all of it
    assert changed_from(old, (x[:6], y[:6]), 0.0, -9.5) == x[5]  # shorter: from its end


def test_anchored_decimation_keeps_a_block_as_it_was_while_it_slides() -> None:
    t = np.arange(0.0, 3600.0) + 1_700_000_000.0
    y = np.random.default_rng(1).random(len(t))
    a = anchored_peak_decimate(t[:3000], y[:3000], 12.0)
    b = anchored_peak_decimate(t[5:3005], y[5:3005], 12.0)
    # The blocks both contain whole are decimated alike, though the data start moved.
    common = (a[0] >= t[24]) & (a[0] < t[2988])
    inb = np.isin(b[0], a[0][common])
    assert np.array_equal(a[1][common], b[1][inb])
    assert a[1].max() == y[:3000].max() and a[1].min() == y[:3000].min()  # the envelope
    assert (a[0][-1], a[1][-1]) == (t[2999], y[2999])  # the newest sample last
    assert len(a[0]) <= 2 * 3000 / 12 + 3
    raw = anchored_peak_decimate(t[:100], y[:100], 1.5)  # under two samples a block
    assert len(raw[0]) == 100 and np.array_equal(raw[1], y[:100])
