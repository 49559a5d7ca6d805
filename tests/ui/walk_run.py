"""The walk: every tab and every window of gpumon at each zoom, as a new user opens them, in
one language on one screen. Run as a program (``tests/ui/test_walk.py`` starts it), because
the screen's size and scale are chosen before Qt starts: ``QT_QPA_PLATFORM`` names an
offscreen screen of the size asked for, ``QT_SCALE_FACTOR`` the desktop's scale.

    python tests/ui/walk_run.py --lang zh_CN --zooms 1,2,3 [--shots DIR]

It prints one JSON line: per place ("300 % · Monitor", "200 % · process window") the texts
cut (``text_fit.cut_texts``), any window whose frame leaves the screen's available area,
the graphs left without room, and any axis title over its tick numbers (``axis_rects``). A
place is each tab with View ▸ Activity on and the event log open as well as without, each of
the Playground's forms, the process window, the topology, the about box and the shortcuts,
the Open cluster dialog.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
SECOND_LOOK_MS = 500  # a window with a problem is looked at again this much later
sys.path[:0] = [str(HERE), str(HERE.parent), str(HERE.parents[1])]

from axis_rects import title_overlaps  # noqa: E402
from PySide6.QtCore import QPoint, QRect  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402
from PySide6.QtWidgets import QApplication, QScrollArea, QWidget  # noqa: E402
from qt_fixtures import settled  # noqa: E402
from text_fit import cut_texts  # noqa: E402

from gpumon import i18n  # noqa: E402
from gpumon.telemetry.sources.simulated import SimulatedSource  # noqa: E402
from gpumon.ui.widgets.plot import LitePlotWidget  # noqa: E402
from gpumon.ui.widgets.screen_fit import room_for  # noqa: E402

Report = dict[str, list[str]]


def outside(window: QWidget) -> list[str]:
    """The window, frame included, beyond its screen's available area (and smaller than
    its own minimum: a layout squeezed below what it needs)."""
    screen = window.screen()
    area = screen.availableGeometry() if screen is not None else QRect()
    frame = window.frameGeometry()
    found = []
    if not area.contains(frame):
        found.append(f"{window.objectName() or type(window).__name__} {frame.getRect()} "
                     f"outside the available area {area.getRect()}")
    layout = window.layout()
    if layout is not None and window.isVisible():
        need = layout.totalMinimumSize()
        if need.width() > window.width() + 1 or need.height() > window.height() + 1:
            found.append(f"{window.objectName() or type(window).__name__} is "
                         f"{window.width()}x{window.height()}, its layout needs "
                         f"{need.width()}x{need.height()}")
    return found


def in_sight(widget: QWidget) -> QRect:
    """The part of ``widget`` (its own coordinates) that its parents leave in view: its rect
    cut by each ancestor's up to the window (``visibleRegion()`` is empty offscreen)."""
    seen = widget.rect()
    parent = widget.parentWidget()
    while parent is not None:
        # the parent's rect in the widget's coordinates: mapTo() maps only up to an ancestor
        # (parent.mapTo(widget) warns and returns the parent's place in the window instead)
        seen = seen.intersected(QRect(-widget.mapTo(parent, QPoint(0, 0)), parent.size()))
        if parent.isWindow():
            break
        parent = parent.parentWidget()
    return seen


def starved_graphs(root: QWidget) -> list[str]:
    """Graphs shown with no room to draw in: a plot fewer than three lines of text high, one
    cut to less by something that does not scroll, or a scrolled page whose graphs are all
    in sight by less (a page showing only the panels' headers). A graph that a page's
    bottom edge cuts is one scroll away, as long as another of that page is in sight."""
    out = []
    pages: dict[int, list[tuple[LitePlotWidget, QRect]]] = {}
    for plot in root.findChildren(LitePlotWidget):
        seen = in_sight(plot)
        if not plot.isVisible() or seen.isEmpty():
            continue
        least = 3 * plot.fontMetrics().height()
        page = scrolled_by(plot)
        if plot.height() < least or page is None and seen.height() < least:
            out.append(f"graph {_name(plot)}: {plot.height()} px high, {seen.height()} px in "
                       "sight")
        elif page is not None:
            pages.setdefault(id(page), []).append((plot, seen))
    for plots in pages.values():
        plot, seen = max(plots, key=lambda p: p[1].height())
        if seen.height() < 3 * plot.fontMetrics().height():
            out += [f"graph {_name(p)}: {p.height()} px high, {s.height()} px in sight"
                    for p, s in plots]
    return out


def scrolled_by(widget: QWidget) -> QScrollArea | None:
    """The scroll area that ``widget`` is in, if any (up to its window)."""
    parent = widget.parentWidget()
    while parent is not None and not parent.isWindow():
        if isinstance(parent, QScrollArea):
            return parent
        parent = parent.parentWidget()
    return None


def _name(plot: QWidget) -> str:
    parent = plot.parent()
    return plot.objectName() or (parent.objectName() if parent is not None else "") or "graph"


def sideways(root: QWidget) -> list[str]:
    """A page (not a table) that scrolls sideways: its content is wider than the window."""
    return [f"{area.objectName() or 'a scroll area'} scrolls sideways"
            for area in root.findChildren(QScrollArea)
            if area.isVisible() and area.horizontalScrollBar().isVisible()]


def look(window: QWidget, shots: Path | None, name: str) -> list[str]:
    """Everything wrong with one window as it stands (laid out first) and still wrong a
    moment later: on a loaded machine a look once caught a wrapped label one line high
    while its relayout was still to come (``SECOND_LOOK_MS``)."""
    found = _look_once(window, shots, name)
    if found:
        QTest.qWait(SECOND_LOOK_MS)
        found = _look_once(window, shots, name)  # what the window settled to
    return found


def _look_once(window: QWidget, shots: Path | None, name: str) -> list[str]:
    app = QApplication.instance()
    settled(lambda: (window.frameGeometry(), window.layout().totalMinimumSize()
                     if window.layout() is not None else None, app.font().pointSizeF()))
    window.grab()  # a first paint: axes widen for the labels they draw, and lay out again
    settled(lambda: window.frameGeometry())
    if shots is not None:
        window.grab().save(str(shots / (name.replace(" ", "_").replace("%", "pct")
                                       .replace("·", "-") + ".png")))
    # the graphs in sight: one scrolled out of view is laid out when it comes into it
    plots = [p for p in window.findChildren(LitePlotWidget)
             if p.isVisible() and not in_sight(p).isEmpty()]
    return (outside(window) + cut_texts(window) + starved_graphs(window) + sideways(window)
            + title_overlaps(plots))


def walk(lang: str, zooms: list[float], shots: Path | None) -> Report:
    from gpumon.ui.window.about import show_about, show_shortcuts
    from gpumon.ui.window.main_window import MainWindow
    from gpumon.ui.window.open_cluster import UrlDialog

    i18n.set_language(lang)
    w = MainWindow(lambda: SimulatedSource(4, seed=1), 0.5)
    room = room_for(w)  # as launch.py opens it: 1400 x 900, or the screen's free area
    if room is not None:
        w.resize(w.size().boundedTo(room))
    w.show()
    w.presentation.screen_fit.fit()  # again once shown, with its frame (launch.py does)
    settled(lambda: w.snapshot_count >= 3, most_passes=100_000)
    report: Report = {}
    activity = w.menus.actions["actionActivity"]
    for zoom in zooms:
        w.presentation.set_zoom(zoom)
        w.statusBar().clearMessage()
        pct = f"{round(zoom * 100)} %"
        for page in range(w.tabs.count()):
            w.tabs.setCurrentIndex(page)
            key = w.tabs.key(page)
            if key == "Playground":  # its forms list the devices once torch is in
                settled(lambda: bool(w.kernel_link.device_options), most_passes=1_000_000)
            found = look(w, shots, f"{lang} {pct} {key}")
            report[f"{pct} · {key}" + refused(w, zoom)] = found
            if key == "Playground":  # each of its forms (the Model form was cut at 100 %)
                report.update(each_form(w, shots, f"{lang} {pct}", f"{pct} · {key}"))
        w.tabs.setCurrentIndex(0)
        activity.setChecked(True)
        w.event_dock.show()
        found = look(w, shots, f"{lang} {pct} Monitor activity log")
        report[f"{pct} · Monitor with Activity and the event log" + refused(w, zoom)] = found
        activity.setChecked(False)
        w.event_dock.hide()
        windows: list[tuple[str, Callable[[], QWidget]]] = [
            ("process window", lambda: w.open_process_view(w.process_table.proxy.index(0, 0))),
            ("topology", w.topology.open),
            ("about", lambda: show_about(w, w.latest_snapshot)),
            ("shortcuts", lambda: show_shortcuts(w)),
            ("cluster address", lambda: _shown(UrlDialog(w))),
        ]
        for name, open_it in windows:
            window = open_it()
            report[f"{pct} · {name}"] = look(window, shots, f"{lang} {pct} {name}")
            window.close()
    w.presentation.set_zoom(1.0)
    w.close()
    return report


def each_form(w: QWidget, shots: Path | None, shot: str, place: str) -> Report:
    """The Playground with each of its forms in front (the first one is looked at with the
    page)."""
    forms = w.playground.forms  # type: ignore[attr-defined]
    report: Report = {}
    for i in range(1, forms.count()):
        forms.setCurrentIndex(i)
        name = forms.tabText(i)
        report[f"{place}, form {name}"] = look(w, shots, f"{shot} Playground form {i}")
    forms.setCurrentIndex(0)
    return report


def refused(w: QWidget, zoom: float) -> str:
    """", refused: back to 200 %" where the window took a zoom step back (the screen had no
    room for it), said in its status bar; "" where it kept the zoom asked for."""
    shown = w.presentation.zoom  # type: ignore[attr-defined]
    if abs(shown - zoom) < 1e-6:
        return ""
    said = "" if w.statusBar().currentMessage() else ", without a word"  # type: ignore[attr-defined]
    return f", refused: back to {round(shown * 100)} %{said}"


def _shown(dialog: QWidget) -> QWidget:
    dialog.show()
    return dialog


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lang", default="en")
    parser.add_argument("--zooms", default="1,2,3")
    parser.add_argument("--shots", type=Path, default=None)
    args = parser.parse_args()
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    app = QApplication(sys.argv[:1])
    from gpumon.ui.window import gcguard

    gcguard.install()
    if args.shots is not None:
        args.shots.mkdir(parents=True, exist_ok=True)
    report = walk(args.lang, [float(z) for z in args.zooms.split(",")], args.shots)
    print(json.dumps({"screen": app.primaryScreen().availableGeometry().getRect(),
                      "problems": {k: v for k, v in report.items() if v}}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
