"""Light and dark themes: a QPalette for the widgets and colours for the pyqtgraph plots.

A theme is plain data. ``palette_for`` builds the QPalette; ``plot_style.style_plot`` restyles
a plot for a theme. ``use_for_plots(theme)`` makes the theme's colours pyqtgraph's defaults for
the graphs made from then on: the window's first frame comes before pyqtgraph is loaded (the
first graphs come with the first snapshot), so ``plot.py`` asks ``plot_defaults()`` as it
loads it.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from PySide6.QtGui import QColor, QPalette


@dataclass(frozen=True)
class Theme:
    """Colours of one theme; ``None`` palette colours mean "the style's own palette"."""

    name: str
    plot_bg: str
    plot_fg: str  # axes, tick labels, grid (drawn with the axis pen at low alpha)
    muted: str  # secondary text (hover readout)
    banner_text: str  # text on the light orange "no data" banner
    note_bg: str = "#e3f2fd"  # a note on the page (the cluster window's Playground note)
    note_border: str = "#90caf9"
    note_text: str = "#1a1a1a"
    window: str | None = None
    base: str | None = None
    alt_base: str | None = None
    text: str | None = None
    button: str | None = None
    highlight: str | None = None
    link: str | None = None
    disabled_text: str | None = None


LIGHT = Theme("light", plot_bg="#ffffff", plot_fg="#333333", muted="#333333",
              banner_text="#222222")
DARK = Theme("dark", plot_bg="#16181c", plot_fg="#c9cdd4", muted="#b8bcc4",
             banner_text="#222222", note_bg="#1d3348", note_border="#3f6c96",
             note_text="#e4e6ea", window="#25272b", base="#1b1d21", alt_base="#2a2d32",
             text="#e4e6ea", button="#2f3237", highlight="#3d7bd9", link="#7fb0ff",
             disabled_text="#7b7f86")
THEMES: dict[str, Theme] = {t.name: t for t in (LIGHT, DARK)}


def palette_for(theme: Theme, base: QPalette) -> QPalette:
    """``base`` (the style's standard palette) with the theme's colours set on it."""
    pal = QPalette(base)
    if theme.window is None:
        return pal
    r = QPalette.ColorRole
    colours = {
        r.Window: theme.window, r.WindowText: theme.text, r.Base: theme.base,
        r.AlternateBase: theme.alt_base, r.Text: theme.text, r.Button: theme.button,
        r.ButtonText: theme.text, r.ToolTipBase: theme.alt_base, r.ToolTipText: theme.text,
        r.Highlight: theme.highlight, r.HighlightedText: "#ffffff", r.Link: theme.link,
        r.PlaceholderText: theme.disabled_text, r.BrightText: "#ff6b6b",
        r.Light: "#3a3d43", r.Midlight: "#33363b", r.Mid: "#2a2c30", r.Dark: "#141518",
        r.Shadow: "#000000",
    }
    for role, colour in colours.items():
        if colour is not None:
            pal.setColor(role, QColor(colour))
    grey = QColor(theme.disabled_text or "#808080")
    for role in (r.WindowText, r.Text, r.ButtonText):
        pal.setColor(QPalette.ColorGroup.Disabled, role, grey)
    return pal


def is_dark(palette: QPalette) -> bool:
    """True for a dark theme: the window colour is darker than mid-grey."""
    return palette.color(QPalette.ColorRole.Window).lightness() < 128


def note_style(theme: Theme) -> str:
    """A note on a page (where the playground runs, what a machine cannot give): light blue
    in the light theme, dark blue with light text in the dark one."""
    return (f"background: {theme.note_bg}; color: {theme.note_text};"
            f" border: 1px solid {theme.note_border}; padding: 4px;")


_plot_theme: Theme | None = None  # the theme of the graphs made from now on; None: pyqtgraph's


def use_for_plots(theme: Theme) -> None:
    """Graphs made from now on take ``theme``'s background and foreground by default."""
    global _plot_theme
    _plot_theme = theme
    pg = sys.modules.get("pyqtgraph")  # not loaded: plot.py sets them as it loads it
    if pg is not None:
        pg.setConfigOptions(**plot_defaults())


def plot_defaults() -> dict[str, str]:
    """pyqtgraph's configuration options for the theme of ``use_for_plots`` (none before it)."""
    t = _plot_theme
    return {} if t is None else {"background": t.plot_bg, "foreground": t.plot_fg}
