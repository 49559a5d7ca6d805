"""Presentation: zoom, themes and full screen (the about box and the shortcuts: about.py).

The theme is chosen as "system" (the default: light or dark as the desktop is, following a
switch while the window is open; ``widgets/color_scheme.py``), "light" or "dark". Zoom and
theme apply to the whole application (``QApplication.setFont`` / ``setPalette``),
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

import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import shiboken6
from PySide6.QtCore import QEvent, QObject, QSize, QTimer, Signal, Slot
from PySide6.QtGui import QFont, QPalette
from PySide6.QtWidgets import (
    QApplication,
    QLabel,
    QMainWindow,
    QVBoxLayout,
    QWidget,
)

from gpumon.i18n import tr
from gpumon.ui.widgets.color_scheme import SystemScheme
from gpumon.ui.widgets.font_stages import FontStages, repolish_styled, with_children
from gpumon.ui.widgets.full_screen import FullScreen
from gpumon.ui.widgets.reveal import Reveal, on_screen_first, reveal
from gpumon.ui.widgets.screen_fit import ScreenFit, room_for
from gpumon.ui.widgets.theme import THEMES, Theme, note_style, palette_for, use_for_plots
from gpumon.ui.window.settings import MAX_ZOOM, MIN_ZOOM, Settings

if TYPE_CHECKING:
    from gpumon.ui.widgets.plot import LitePlotWidget

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

    #: take back a zoom step the screen has no room for (refuse_if_too_big); the tests that
    #: lay out a 1400 x 900 window on a smaller offscreen screen on purpose turn it off
    refuse_unfit = True
    zoomChanged = Signal(float)
    themeChanged = Signal(str)
    applied = Signal(object)  # Theme: after each apply, for widgets styled by their owner

    def __init__(self, window: QWidget, settings: Settings,
                 pages: Callable[[], Sequence[QWidget]] = tuple,
                 short: Callable[[], int] = int) -> None:
        """``window``: the top-level widget whose plots follow the theme and that goes full
        screen; ``pages()``: its parts that take a new zoom after the frame that answers the
        key (the tab pages); ``short()``: the pixels of height a page lacks beyond what its
        layout asks for (the Monitor's first row of graphs). Restyle new plots with
        ``restyle_plots``; style other widgets on ``applied``."""
        super().__init__(window)
        self._window = window
        self._settings = settings
        self._pages = pages
        self._short = short
        self._zoom = settings.zoom
        self._choice = settings.theme  # "system", "light" or "dark"
        self._system = SystemScheme(self)
        self._system.changed.connect(self._on_system_scheme)
        self._theme = self._resolved()
        self.full_screen = FullScreen(window)
        self._reveal: Reveal | None = None  # graphs coming into view after a zoom step
        self.screen_fit = ScreenFit(window)
        self.stages = FontStages(window)
        self.stages.shown.connect(self._on_pages_shown)
        self.stages.done.connect(self._on_pages_done)
        self._check_due = False  # a fit check is queued (refuse_if_too_big)
        self._refusing = False  # a step back from a zoom the screen has no room for
        self._asked = self._zoom
        window.installEventFilter(self)  # its layout changed (a tab, a dock): does it fit?
        self.apply()

    # -- state -----------------------------------------------------------------------------
    @property
    def zoom(self) -> float:
        return self._zoom

    @property
    def theme(self) -> Theme:
        """The theme shown: light or dark (for "system", as the desktop is now)."""
        return self._theme

    @property
    def choice(self) -> str:
        """The theme chosen: "system", "light" or "dark"."""
        return self._choice

    def _resolved(self) -> Theme:
        if self._choice == "system":
            return THEMES["dark" if self._system.dark else "light"]
        return THEMES[self._choice]

    # -- actions ---------------------------------------------------------------------------
    def set_zoom(self, zoom: float) -> None:
        zoom = round(min(MAX_ZOOM, max(MIN_ZOOM, float(zoom))), 3)
        if zoom == self._zoom:
            return
        self.screen_fit.before_zoom()
        if not self._refusing:
            self._asked = zoom  # what the user chose: said if it is taken back
        self._zoom = zoom
        self._settings.zoom = zoom
        if self._window.isVisible():
            # the frame that answers the key lays out the frame around the pages and paints
            # no graph; the pages, then the graphs a panel at a time, follow (module doc)
            plots = self._plots()
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
        """Choose "system", "light" or "dark" (another name: ValueError, a programming
        error)."""
        if name == self._choice:
            return
        self._settings.theme = name
        self._choice = name
        theme = self._resolved()
        if theme is not self._theme:
            self._theme = theme
            self.apply()
        self.themeChanged.emit(name)

    @Slot(bool)
    def _on_system_scheme(self, _dark: bool) -> None:
        """The desktop switched between light and dark: "system" follows it (a window
        already closed does not: it would set the application's font and palette)."""
        theme = self._resolved()
        if theme is not self._theme and self._window.isVisible():
            self._theme = theme
            self.apply()

    @Slot()
    def toggle_full_screen(self) -> None:
        self.full_screen.toggle()

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
        with self._system.own_change():
            if self._theme.window is not None and app.style().name().lower() != "fusion":
                app.setStyle("Fusion")  # native styles ignore much of a custom dark palette
            app.setPalette(palette_for(self._theme, base_palette))
        use_for_plots(self._theme)
        self.restyle_plots()
        self.applied.emit(self._theme)

    @Slot()
    def restyle_plots(self) -> None:
        for plot in self._plots():
            self._style_plot(plot)

    def _plots(self) -> list[LitePlotWidget]:
        """The window's graphs. Their module is loaded with the first of them (it loads
        pyqtgraph, which the window's first frame does not wait for): none before."""
        plot = sys.modules.get("gpumon.ui.widgets.plot")
        return [] if plot is None else self._window.findChildren(plot.LitePlotWidget)

    def _style_plot(self, plot: LitePlotWidget) -> None:
        from gpumon.ui.widgets.plot_style import style_plot  # with the first graph (above)

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
        """Every page has it: fit the window for the last time (back home at 100 %), and
        step back where the screen is too small for this zoom."""
        self.screen_fit.after_zoom(self._zoom)
        if self.refuse_unfit:
            QTimer.singleShot(0, self, self.refuse_if_too_big)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        # at 100 % too: a page that needed more grew the window, and it goes back on its
        # screen once the page in front needs less (refuse_if_too_big fits it)
        if (event.type() == QEvent.Type.LayoutRequest and watched is self._window
                and not self._check_due and self.refuse_unfit):
            self._check_due = True
            QTimer.singleShot(0, self, self.refuse_if_too_big)
        return super().eventFilter(watched, event)

    def too_big(self) -> tuple[QSize, QSize] | None:
        """(what the window needs: its layout, and the height a page lacks; the room its
        screen has, frame left out) when the window cannot fit its screen at this zoom;
        None when it can."""
        layout, room = self._window.layout(), room_for(self._window)
        if layout is None or room is None:
            return None
        need = layout.totalMinimumSize()
        short = self._short()  # in the window's height now (not its least): as tall again
        if short > 0:
            need.setHeight(max(need.height(), self._window.height() + short))
        if need.width() <= room.width() and need.height() <= room.height():
            return None
        return need, room

    @Slot()
    def refuse_if_too_big(self) -> None:
        """A zoom step the screen has no room for is taken back, with a word in the status
        bar: at 125 % or 150 % desktop scale a 1080 px screen has 864 or 720 px, and the
        Playground needed 894 at 300 % (its bottom was off the screen). Checked after each
        step and whenever the window's layout changes (a tab shown, a dock opened)."""
        self._check_due = False
        if not self._window.isVisible() or any(p.isVisible() for p in self.stages.held()):
            return  # the page in sight has not taken the zoom's font yet: checked after
        found = self.too_big()
        if found is None or self._zoom <= 1.0:
            screen = self._window.screen()  # it fits: on its screen (a dock may have grown
            if screen is not None and not screen.availableGeometry().contains(  # it)
                    self._window.frameGeometry()):
                self.screen_fit.fit()
            return
        (need, room), refused = found, self._zoom
        back = max(1.0, next((z for z in reversed(ZOOM_STEPS) if z < refused - 1e-6), 1.0))
        self._refusing = True
        try:
            self.set_zoom(back)
        finally:
            self._refusing = False
        if isinstance(self._window, QMainWindow):
            self._window.statusBar().showMessage(tr(
                "The screen has no room for {zoom} % ({width} × {height} px needed, "
                "{free_width} × {free_height} free): back to {back} %.",
                zoom=round(self._asked * 100), width=need.width(), height=need.height(),
                free_width=room.width(), free_height=room.height(), back=round(back * 100)),
                10000)

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


def keep_note_styled(note: QWidget, presentation: Presentation) -> None:
    """Style a note on a page for the theme now and at every theme change (a fixed light
    blue behind the dark theme's near-white text could not be read)."""
    def restyle(theme: Theme) -> None:
        if shiboken6.isValid(note):
            note.setStyleSheet(note_style(theme))

    restyle(presentation.theme)
    presentation.applied.connect(restyle)


def note_over_page(page: QWidget, text: str, name: str, presentation: Presentation) -> QWidget:
    """``page`` with ``text`` as a styled, wrapped note over its content (where its code runs,
    what a window reads): for a page whose layout is a column."""
    note = QLabel(text)
    note.setObjectName(name)
    note.setWordWrap(True)
    keep_note_styled(note, presentation)
    layout = page.layout()
    if isinstance(layout, QVBoxLayout):
        layout.insertWidget(0, note)
    return page
