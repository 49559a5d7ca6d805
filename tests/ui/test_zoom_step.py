"""A zoom step is answered by a frame that lays the window out at the new font (the menu bar,
tool bar, header and tab bar in their new places) and paints no graph, nor fits one to its
new size (reveal.py, plot.py). After it the graphs are restyled and unveiled a panel a frame,
and the window ends as a zoom applied at once left it. What the first frame holds is checked,
never timed (benchmarks/bench_response.py measures the time)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QEvent, QObject, QRectF
from PySide6.QtWidgets import QApplication, QLabel, QWidget

from gpumon.ui.widgets.plot import LitePlotWidget
from gpumon.ui.window.presentation import base_font_and_palette

pytestmark = pytest.mark.usefixtures("restore_app_look")


class Repaints(QObject):
    """Calls ``fn`` as ``window``'s next repaint begins: what that frame paints (its layouts
    are done; their requests come before the repaint's low-priority event). Called after the
    frame instead, ``fn`` could run after the work that follows it: on a loaded machine the
    frame took ~30 ms to paint, after_next_frame's 50 ms fallback fell due meanwhile, and the
    graphs had been unveiled before ``fn`` looked."""

    def __init__(self, window: QWidget, fn) -> None:
        super().__init__()
        self.window, self.fn = window, fn
        app = QApplication.instance()
        assert app is not None
        app.installEventFilter(self)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.UpdateRequest and obj is self.window:
            app = QApplication.instance()
            assert app is not None
            app.removeEventFilter(self)
            self.fn()
        return False


def _point_size(zoom: float) -> float:
    font, _ = base_font_and_palette()
    return font.pointSizeF() * zoom


def _settled(qtbot, w, zoom: float) -> None:
    """Every page at the zoom's font and every graph unveiled."""
    want = _point_size(zoom)
    pages = [w.tabs.widget(i) for i in range(w.tabs.count())]
    qtbot.waitUntil(lambda: all(abs(p.font().pointSizeF() - want) < 0.01 for p in pages)
                    and not any(p.veiled for p in w.findChildren(LitePlotWidget)),
                    timeout=5000)


def _fits_its_view(plot: LitePlotWidget) -> bool:
    return plot.plot_item.geometry() == QRectF(0, 0, plot.width(), plot.height())


def test_the_first_frame_of_a_zoom_step_is_laid_out_and_paints_no_graph(qtbot, make_window):
    w = make_window()
    qtbot.waitUntil(lambda: w.gpu_panel(3) is not None and w.snapshot_count >= 3, timeout=5000)
    w.page("Lesson")  # built, hidden behind the Monitor
    qtbot.wait(200)
    plots = [p for panel in w.gpu_grid.panels for p in panel.plots()]
    assert plots and all(_fits_its_view(p) for p in plots)
    before = [p.plot_item.geometry() for p in plots]
    sizes = {"menu": w.menuBar().size(), "tab bar": w.tabs.tabBar().size(),
             "page": w.monitor_page.size()}

    def look() -> dict[str, object]:
        return {"menu": w.menuBar().font().pointSizeF(),
                "tab bar": w.tabs.tabBar().font().pointSizeF(),
                "header": w.header.font().pointSizeF(),
                "panel": w.gpu_panel(0).font().pointSizeF(),
                "sizes": {"menu": w.menuBar().size(), "tab bar": w.tabs.tabBar().size(),
                          "page": w.monitor_page.size()},
                "graphs": [p.plot_item.geometry() for p in plots],
                "veiled": [p.veiled for p in plots]}

    noted: list[dict[str, object]] = []
    repaints = Repaints(w, lambda: noted.append(look()))
    try:
        w.presentation.set_zoom(2.0)
        qtbot.waitUntil(lambda: bool(noted), timeout=5000)
    finally:
        del repaints
    seen = noted[0]
    new = _point_size(2.0)
    # the window has the new font, laid out in its new places before this frame paints ...
    assert seen["menu"] == seen["tab bar"] == seen["header"] == seen["panel"] == \
        pytest.approx(new)
    changed = seen["sizes"]
    assert isinstance(changed, dict)
    assert all(changed[k] != sizes[k] for k in sizes), (changed, sizes)
    # ... and no graph is painted or fitted anew in it
    assert seen["graphs"] == before and all(seen["veiled"])

    _settled(qtbot, w, 2.0)
    assert all(_fits_its_view(p) for p in plots)  # fitted once unveiled
    assert [p.scene().font().pointSizeF() for p in plots] == [pytest.approx(new)] * len(plots)
    for plot in plots:  # restyled for the zoom as they were unveiled
        tick = plot.getPlotItem().getAxis("bottom").style["tickFont"]
        assert tick.pointSizeF() == pytest.approx(max(5.0, new * 0.9))
    # the hidden Lesson took it too, and a label with a style sheet inside a page as well
    assert w.lesson.narration.font().pointSizeF() == pytest.approx(new)
    note = w.findChild(QLabel, "processNote")
    assert note is not None and note.font().pointSizeF() == pytest.approx(new)


def test_steps_faster_than_frames_end_at_the_last_zoom(qtbot, make_window):
    w = make_window()
    qtbot.waitUntil(lambda: w.gpu_panel(3) is not None and w.snapshot_count >= 3, timeout=5000)
    plots = [p for panel in w.gpu_grid.panels for p in panel.plots()]
    for zoom in (1.25, 1.5, 1.75):  # three keys before one frame
        w.presentation.set_zoom(zoom)
    assert all(p.veiled for p in plots)
    _settled(qtbot, w, 1.75)
    assert all(_fits_its_view(p) for p in plots)
    for zoom in (1.5, 1.0):  # and back, one step landing while the last one is on its way
        w.presentation.set_zoom(zoom)
        qtbot.wait(1)
    _settled(qtbot, w, 1.0)
    assert w.gpu_panel(0).font().pointSizeF() == pytest.approx(_point_size(1.0))
    assert all(_fits_its_view(p) for p in plots)
    tick = plots[0].getPlotItem().getAxis("bottom").style["tickFont"]
    assert tick.pointSizeF() == pytest.approx(max(5.0, _point_size(0.9)))


def _fonts(w) -> dict[str, tuple[float, bool]]:
    """Every widget's font (size, bold), by its path of class and object names."""
    out: dict[str, tuple[float, bool]] = {}

    def walk(widget: QWidget, path: str) -> None:
        for i, child in enumerate(c for c in widget.children() if isinstance(c, QWidget)):
            here = f"{path}/{i}:{type(child).__name__}:{child.objectName()}"
            out[here] = (round(child.font().pointSizeF(), 2), child.font().bold())
            walk(child, here)

    walk(w, "")
    return out


def test_a_zoom_step_on_screen_ends_with_the_fonts_of_a_zoom_applied_at_once(qtbot, make_window):
    """Every widget, hidden ones too (the no-driver banner's labels, the Lesson's), has the
    font it has when the zoom reaches the window at once (a hidden window veils no graph)."""
    w = make_window()
    qtbot.waitUntil(lambda: w.gpu_panel(3) is not None and w.snapshot_count >= 3, timeout=5000)
    w.page("Lesson")
    w.presentation.set_zoom(2.0)
    _settled(qtbot, w, 2.0)
    on_screen = _fonts(w)
    w.hide()
    w.presentation.set_zoom(1.0)
    w.presentation.set_zoom(2.0)
    qtbot.waitUntil(lambda: w.gpu_panel(0).font().pointSizeF() == pytest.approx(
        _point_size(2.0)), timeout=3000)
    qtbot.wait(100)
    at_once = _fonts(w)
    assert on_screen == at_once
    banner = w.banner.findChild(QLabel, "bannerMessage")
    assert banner is not None and banner.font().pointSizeF() == pytest.approx(_point_size(2.0))
