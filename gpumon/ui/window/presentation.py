"""Presentation: zoom, themes and full screen (the about box and the shortcuts: about.py).

Zoom and theme apply to the whole application (``QApplication.setFont`` / ``setPalette``),
so menus, dialogs and tooltips follow, and to every pyqtgraph plot in the window, including
the GPU panels rebuilt after a source switch (``gpuPanelsChanged``). The base font and the
style's own palette are taken once, at the first Presentation, so 100 % and "light" are
exactly what Qt would show without gpumon touching anything.

A zoom step is answered in stages, so that the key shows on screen within 50 ms
(benchmarks/bench_response.py): the frame that answers it lays out the menu bar, tool bar,
header and tab bar at the new size, with the pages and the graphs' scenes held at their font
(font_stages.py) and the graphs veiled (reveal.py); after it the page on screen takes the
new font, then the graphs are restyled and unveiled a panel a frame, and the hidden pages
take the font a page a frame. Settled, the window is as a zoom applied at once leaves it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pyqtgraph as pg
import shiboken6
from PySide6.QtCore import QEvent, QObject, Signal, Slot
from PySide6.QtGui import QFont, QPalette
from PySide6.QtWidgets import QApplication, QWidget

from gpumon.ui.widgets.font_stages import FontStages, repolish_styled, with_children
from gpumon.ui.widgets.plot import LitePlotWidget
from gpumon.ui.widgets.reveal import Reveal, on_screen_first, reveal
from gpumon.ui.widgets.screen_fit import ScreenFit
from gpumon.ui.widgets.theme import THEMES, Theme, palette_for, style_plot
from gpumon.ui.window.settings import MAX_ZOOM, MIN_ZOOM, Settings

ZOOM_STEPS = (0.5, 0.67, 0.8, 0.9, 1.0, 1.1, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0)

_base: tuple[QFont, QPalette] | None = None


def base_font_and_palette() -> tuple[QFont, QPalette]:
    """The application font and the style's palette before gpumon changed either."""
    global _base
    if _base is None:
        app = QApplication.instance()
        assert isinstance(app, QApplication)
        _base = (QFont(app.font()), QPalette(app.style().standardPalette()))
    return QFont(_base[0]), QPalette(_base[1])


class Presentation(QObject):
    """Owns zoom, theme and full screen for one window; remembers them in ``settings``."""

    zoomChanged = Signal(float)
    themeChanged = Signal(str)
    applied = Signal(object)  # Theme: after each apply, for widgets styled by their owner

    def __init__(self, window: QWidget, settings: Settings,
                 pages: Callable[[], Sequence[QWidget]] = tuple) -> None:
        """``window``: the top-level widget whose plots follow the theme and that goes full
        screen; ``pages()``: its parts that take a new zoom after the frame that answers the
        key (the tab pages). Restyle new plots with ``restyle_plots``; style other widgets on
        ``applied``."""
        super().__init__(window)
        self._window = window
        self._settings = settings
        self._pages = pages
        self._zoom = settings.zoom
        self._theme = THEMES[settings.theme]
        self._was_maximized = False
        self._reveal: Reveal | None = None  # graphs coming into view after a zoom step
        self.screen_fit = ScreenFit(window)
        self.stages = FontStages(window)
        self.stages.shown.connect(self._on_pages_shown)
        self.stages.done.connect(self._on_pages_done)
        self.apply()

    # -- state -----------------------------------------------------------------------------
    @property
    def zoom(self) -> float:
        return self._zoom

    @property
    def theme(self) -> Theme:
        return self._theme

    # -- actions ---------------------------------------------------------------------------
    def set_zoom(self, zoom: float) -> None:
        zoom = round(min(MAX_ZOOM, max(MIN_ZOOM, float(zoom))), 3)
        if zoom == self._zoom:
            return
        self.screen_fit.before_zoom()
        self._zoom = zoom
        self._settings.zoom = zoom
        if self._window.isVisible():
            # the frame that answers the key lays out the frame around the pages and paints
            # no graph; the pages, then the graphs a panel at a time, follow (module doc)
            plots = self._window.findChildren(LitePlotWidget)
            self.stages.hold_scenes(plot.scene() for plot in plots)
            self._reveal = reveal(on_screen_first(plots), self, self._reveal,
                                  prepare=self._style_plot, wait=True)
            self.stages.hold(self._pages())
            self.apply(staged=True)
            _lay_out_now()
        else:
            self.apply()
            self.screen_fit.after_zoom(zoom)
        self.zoomChanged.emit(zoom)

    @Slot()
    def zoom_in(self) -> None:
        self.set_zoom(next((z for z in ZOOM_STEPS if z > self._zoom + 1e-6), MAX_ZOOM))

    @Slot()
    def zoom_out(self) -> None:
        self.set_zoom(next((z for z in reversed(ZOOM_STEPS) if z < self._zoom - 1e-6),
                           MIN_ZOOM))

    @Slot()
    def reset_zoom(self) -> None:
        self.set_zoom(1.0)

    def set_theme(self, name: str) -> None:
        theme = THEMES[name]  # KeyError for an unknown name: a programming error
        if theme is self._theme:
            return
        self._theme = theme
        self._settings.theme = name
        self.apply()
        self.themeChanged.emit(name)

    @Slot()
    def toggle_full_screen(self) -> None:
        w = self._window
        if w.isFullScreen():
            w.showMaximized() if self._was_maximized else w.showNormal()
        else:
            self._was_maximized = w.isMaximized()
            w.showFullScreen()

    # -- applying ----------------------------------------------------------------------------
    def apply(self, staged: bool = False) -> None:
        """Font and palette on the application, then every plot and themed widget;
        ``staged`` (a zoom step): the font only, the held pages and the veiled graphs
        later (module doc)."""
        app = QApplication.instance()
        assert isinstance(app, QApplication)
        base_font, base_palette = base_font_and_palette()
        font = QFont(base_font)
        font.setPointSizeF(_point_size(base_font) * self._zoom)
        app.setFont(font)
        # the held pages are polished again when they take the font (font_stages.py)
        styled = [w for w in with_children(self._window) if w.styleSheet()]
        repolish_styled(w for w in styled if not self.stages.holds(w))
        if staged:  # no colour changed; the graphs are restyled as they are unveiled
            self.applied.emit(self._theme)  # (the banner's sheet sets its labels' fonts)
            return
        if self._theme.window is not None and app.style().name().lower() != "fusion":
            app.setStyle("Fusion")  # native styles ignore much of a custom dark palette
        app.setPalette(palette_for(self._theme, base_palette))
        pg.setConfigOptions(background=self._theme.plot_bg, foreground=self._theme.plot_fg)
        self.restyle_plots()
        self.applied.emit(self._theme)

    @Slot()
    def restyle_plots(self) -> None:
        for plot in self._window.findChildren(LitePlotWidget):
            self._style_plot(plot)

    def _style_plot(self, plot: LitePlotWidget) -> None:
        self.stages.release_scene(plot.scene())
        base_font, _ = base_font_and_palette()
        style_plot(plot, self._theme, self._zoom, _point_size(base_font))

    @Slot()
    def _on_pages_shown(self) -> None:
        """The page on screen has the zoom's font: fit the window (once that font has been
        laid out), unveil its graphs."""
        self.screen_fit.after_zoom(self._zoom)
        if self._reveal is not None and shiboken6.isValid(self._reveal):
            self._reveal.start()

    @Slot()
    def _on_pages_done(self) -> None:
        """Every page has it: fit the window for the last time (back home at 100 %)."""
        self.screen_fit.after_zoom(self._zoom)


def _lay_out_now() -> None:
    """Give the widgets the new font and lay them out before the next repaint. Posted while
    the event loop handles other posted events, the font's layout requests came after a
    repaint already asked for: the frame that answered a zoom key showed the new font in
    the old places (an empty menu bar, a cut tool bar), and the next frame laid them out."""
    QApplication.sendPostedEvents(None, QEvent.Type.ApplicationFontChange)
    QApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)


def _point_size(font: QFont) -> float:
    pt = font.pointSizeF()
    return pt if pt > 0 else 9.0  # a pixel-sized font has no point size
