"""A zoom step is answered by a frame that lays out only what is around the pages (the menu
bar, tool bar, header and tab bar): no widget of a page gets the new font before that frame,
and no graph is fitted to its new size in it (font_stages.py, plot.py). After it the page on
screen, its graphs a panel a frame, and the hidden pages follow, and the window ends as a
zoom applied at once left it. The amount of work in the first frame is counted, never timed
(benchmarks/bench_response.py measures the time)."""

from __future__ import annotations

import pytest
import shiboken6
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
    pages had taken the new font before ``fn`` looked (a CI run failed on it)."""

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


class FontChanges(QObject):
    """Notes the widgets of ``widgets`` that get a FontChange event, until ``stop()``."""

    def __init__(self, widgets: list[QWidget]) -> None:
        super().__init__()
        self.widgets, self.got = widgets, list[str]()
        for widget in widgets:
            widget.installEventFilter(self)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.FontChange:
            self.got.append(f"{type(obj).__name__}:{obj.objectName()}")
        return False

    def stop(self) -> None:
        for widget in self.widgets:
            if shiboken6.isValid(widget):
                widget.removeEventFilter(self)


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


def test_the_first_frame_of_a_zoom_step_leaves_the_pages_and_graphs_alone(qtbot, make_window):
    w = make_window()
    qtbot.waitUntil(lambda: w.gpu_panel(3) is not None and w.snapshot_count >= 3, timeout=5000)
    w.page("Lesson")  # built, hidden behind the Monitor
    plots = [p for panel in w.gpu_grid.panels for p in panel.plots()]
    qtbot.waitUntil(lambda: all(_fits_its_view(p) for p in plots), timeout=3000)
    assert plots
    pages = [w.tabs.widget(i) for i in range(w.tabs.count())]
    before = [p.plot_item.geometry() for p in plots]
    page_size = w.monitor_page.size()

    def look() -> dict[str, object]:
        return {"menu": w.menuBar().font().pointSizeF(),
                "tab bar": w.tabs.tabBar().font().pointSizeF(),
                "header": w.header.font().pointSizeF(),
                "panel": w.gpu_panel(0).font().pointSizeF(),
                "table": w.smi_table.font().pointSizeF(),
                "page size": w.monitor_page.size(),
                "graphs": [p.plot_item.geometry() for p in plots],
                "scenes": [p.scene().font().pointSizeF() for p in plots],
                "veiled": [p.veiled for p in plots]}

    changes = FontChanges([x for page in pages for x in (page, *page.findChildren(QWidget))])
    noted: list[tuple[dict[str, object], list[str]]] = []
    repaints = Repaints(w, lambda: noted.append((look(), list(changes.got))))
    try:
        w.presentation.set_zoom(2.0)
        qtbot.waitUntil(lambda: bool(noted), timeout=5000)
    finally:
        changes.stop()
        del repaints
    seen, font_changes = noted[0]
    old, new = _point_size(1.0), _point_size(2.0)
    # the frame around the pages has the new font; the page shrank under it ...
    assert seen["menu"] == seen["tab bar"] == seen["header"] == pytest.approx(new)
    assert seen["page size"] != page_size
    # ... but no widget of a page was given the new font, and no graph was fitted anew
    assert font_changes == []
    assert seen["panel"] == seen["table"] == pytest.approx(old)
    assert seen["graphs"] == before and all(seen["veiled"])
    assert seen["scenes"] == [pytest.approx(old)] * len(plots)  # nor a graph's items

    _settled(qtbot, w, 2.0)
    assert w.gpu_panel(0).font().pointSizeF() == pytest.approx(new)
    assert all(_fits_its_view(p) for p in plots)  # fitted once unveiled
    assert [p.scene().font().pointSizeF() for p in plots] == [pytest.approx(new)] * len(plots)
    for plot in plots:  # restyled for the zoom as they were unveiled
        tick = plot.getPlotItem().getAxis("bottom").style["tickFont"]
        assert tick.pointSizeF() == pytest.approx(max(5.0, new * 0.9))
    # the hidden Lesson took it too, and a label with a style sheet inside a page as well
    assert w.lesson.narration.font().pointSizeF() == pytest.approx(new)
    note = w.findChild(QLabel, "processNote")
    assert note is not None and note.font().pointSizeF() == pytest.approx(new)
    assert w.presentation.stages.held() == []


def test_a_held_page_takes_the_font_before_its_tab_is_painted(qtbot, make_window):
    w = make_window()
    qtbot.waitUntil(lambda: w.snapshot_count >= 1, timeout=5000)
    lesson = w.page("Lesson")
    assert lesson is not None
    w.presentation.set_zoom(2.0)
    # what the event loop does first after the key: the new font reaches the window
    QApplication.sendPostedEvents(None, QEvent.Type.ApplicationFontChange)
    assert w.menuBar().font().pointSizeF() == pytest.approx(_point_size(2.0))
    assert lesson in w.presentation.stages.held()  # until a frame or two later ...
    assert lesson.font().pointSizeF() == pytest.approx(_point_size(1.0))
    w.show_tab("Lesson")  # ... unless its tab is chosen first
    assert lesson not in w.presentation.stages.held()
    assert lesson.font().pointSizeF() == pytest.approx(_point_size(2.0))
    _settled(qtbot, w, 2.0)


def test_steps_faster_than_frames_end_at_the_last_zoom(qtbot, make_window):
    w = make_window()
    qtbot.waitUntil(lambda: w.gpu_panel(3) is not None and w.snapshot_count >= 3, timeout=5000)
    for zoom in (1.25, 1.5, 1.75):  # three keys before one frame
        w.presentation.set_zoom(zoom)
    assert w.gpu_panel(0).font().pointSizeF() == pytest.approx(_point_size(1.0))
    _settled(qtbot, w, 1.75)
    plots = [p for panel in w.gpu_grid.panels for p in panel.plots()]
    assert all(_fits_its_view(p) for p in plots)
    for zoom in (1.5, 1.0):  # and back, one step landing while the last one is on its way
        w.presentation.set_zoom(zoom)
        qtbot.wait(1)  # not awaiting: the next key comes while this step is on its way
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


def test_a_staged_zoom_ends_with_the_fonts_of_a_zoom_applied_at_once(qtbot, make_window):
    """Every widget, hidden ones too (the no-driver banner's labels, the Lesson's), has the
    font it has when the zoom reaches the window at once (a hidden window is not staged)."""
    w = make_window()
    qtbot.waitUntil(lambda: w.gpu_panel(3) is not None and w.snapshot_count >= 3, timeout=5000)
    w.page("Lesson")
    w.presentation.set_zoom(2.0)
    _settled(qtbot, w, 2.0)
    staged = _fonts(w)
    w.hide()
    w.presentation.set_zoom(1.0)
    w.presentation.set_zoom(2.0)
    qtbot.waitUntil(lambda: w.gpu_panel(0).font().pointSizeF() == pytest.approx(
        _point_size(2.0)), timeout=3000)
    qtbot.waitUntil(lambda: _fonts(w) == staged, timeout=3000)  # every font, as staged
    banner = w.banner.findChild(QLabel, "bannerMessage")
    assert banner is not None and banner.font().pointSizeF() == pytest.approx(_point_size(2.0))
