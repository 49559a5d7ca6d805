"""Axes whose tick labels thin out instead of overlapping, and the time axis's labels.

pyqtgraph picks a major tick spacing from the axis length alone and always draws every
major label, so at 300 % zoom a 60 px tall utilization axis stacked "20 40 60 80" on top of
each other. ``ThinAxis`` widens the spacing (to the next 1-2-5 step) until one label and a
gap fit between two ticks, measured with the axis' own tick font; the grid follows.

The time axis (``TimeAxis``) counts seconds back from now and says so on its labels
("−200 s" … "now"), so it needs no separate axis title (no height taken from the plots).
pyqtgraph centres each label on its tick and drops one that would stick out past the axis,
so "now" at the time axis's right end was never drawn, nor a 0 at the foot of a graph (at
300 % a small graph kept no label at all): ``ThinAxis`` draws the first and last major
labels it dropped moved inside the axis, on their ticks as far as they can be, and leaves
out a neighbour they would touch.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QFont, QFontMetricsF, QPainter, QPixmap
from PySide6.QtWidgets import QStyleOptionGraphicsItem, QWidget

from gpumon.i18n import N_, tr

LABEL_GAP = 0.35  # free space between two stacked labels, in label heights
KEPT_IMAGES = 3  # an axis keeps its picture at this many sizes (the Monitor's, the Playground's)
NOW_TEXT = N_("now")  # translated where a tick is labelled
TITLE_NUDGE = 5  # pyqtgraph puts a vertical axis's title this far outside it (resizeEvent)


def next_nice(step: float) -> float:
    """The smallest 1, 2 or 5 × 10^k strictly greater than ``step`` (> 0)."""
    exp = math.floor(math.log10(step))
    for k in (exp, exp + 1):
        for m in (1.0, 2.0, 5.0):
            nice = m * 10.0 ** k
            if nice > step * (1 + 1e-9):
                return nice
    return 10.0 ** (exp + 2)  # not reached: 1 × 10^(exp+1) > step always holds


def thinned_spacing(spacing: float, px_per_unit: float, label_px: float) -> float:
    """``spacing`` widened in 1-2-5 steps until ticks lie at least ``label_px`` apart."""
    if spacing <= 0 or px_per_unit <= 0 or not math.isfinite(px_per_unit):
        return spacing
    for _ in range(60):  # 20 decades: far more than any axis here needs
        if spacing * px_per_unit >= label_px:
            return spacing
        spacing = next_nice(spacing)
    return spacing


def time_label(value: float) -> str:
    """A time tick: seconds relative to now, with the unit ("-30 s"), and 0 as "now"."""
    if abs(value) < 1e-9:
        return tr(NOW_TEXT)
    return f"{value:g} s".replace("-", "\u2212")  # a real minus sign, as wide as "+"


class ThinAxis(pg.AxisItem):
    """An AxisItem whose major ticks are never closer than one tick label plus a gap, and
    that keeps its picture at its last few sizes.

    pyqtgraph draws an axis (ticks, labels and the grid across the plot) again whenever its
    size changes. The GPU panels change size each time the Playground borrows them and gives
    them back: drawing their 32 axes again was ~130 ms of the ~340 ms that going back to the
    Monitor took here. Each axis keeps its picture, as a pixmap, for ``KEPT_IMAGES`` sizes,
    keyed by what it shows (size, range, fonts, pens, grid): back at a size it had, it is
    one copy of pixels. (``tickPen``, ``setTicks`` and the like are not used here; they
    would need a new look too.)
    """

    # Each change of what the axis looks like (pens, fonts, label, grid, style) counts one
    # more look; a picture is kept for a size, a range and a look (reading the pens' colours
    # for a key at each paint cost more than a third of the paint it saved).
    _look = 0

    def _new_look(self) -> None:
        self._look = self._look + 1

    def setPen(self, *args: Any, **kwargs: Any) -> None:
        self._new_look()
        super().setPen(*args, **kwargs)

    def setTextPen(self, *args: Any, **kwargs: Any) -> None:
        self._new_look()
        super().setTextPen(*args, **kwargs)

    def setTickFont(self, font: QFont | None) -> None:
        self._new_look()
        super().setTickFont(font)

    def setLabel(self, *args: Any, **kwargs: Any) -> None:
        self._new_look()
        super().setLabel(*args, **kwargs)

    def setStyle(self, **kwargs: Any) -> None:
        self._new_look()
        super().setStyle(**kwargs)

    def setGrid(self, grid: int | float | bool) -> None:
        self._new_look()
        super().setGrid(grid)

    def boundingRect(self) -> QRectF:
        """pyqtgraph's bounding rect, kept while the axis's look, its geometry and its
        view's geometry stay. Qt asks for it about six times each time a plot paints: with
        the grid on, pyqtgraph maps both geometries into the axis every time, and that was
        a sixth of the Monitor tab's paint time (8 GPUs, constant readings, cProfile)."""
        # The view only where pyqtgraph's rect reads it (the grid on): an axis without a grid
        # is asked for its rect while its plot is being destroyed, and its view may be gone.
        view = self.linkedView() if self.grid is not False else None
        key = (self._look, self.geometry(), None if view is None else view.geometry())
        cached: tuple[object, QRectF] | None = getattr(self, "_bounds", None)
        if cached is None or cached[0] != key:
            cached = self._bounds = (key, super().boundingRect())
        return QRectF(cached[1])

    def _updateWidth(self) -> None:
        """pyqtgraph leaves 0.8 of the title's height for a vertical axis's title ("GiB")
        and draws the title 5 px outside the axis, so a title more than 25 px high (200 %
        zoom) lay over the widest tick numbers: leave it its whole height, and a pixel."""
        super()._updateWidth()
        if (self.orientation in ("left", "right") and self.isVisible()
                and self.fixedWidth is None and self.style["showValues"]
                and self.label.isVisible()):
            height = self.label.boundingRect().height()
            more = (height - TITLE_NUDGE + 1) - 0.8 * height
            if more > 0:
                width = self.maximumWidth() + math.ceil(more)
                self.setMaximumWidth(width)
                self.setMinimumWidth(width)

    def _image_key(self, rect: QRectF) -> tuple[object, ...]:
        return (round(rect.x(), 2), round(rect.y(), 2), round(rect.width()),
                round(rect.height()), tuple(self.range), self._look, self.logMode, self.scale,
                self.autoSIPrefixScale)

    def paint(self, p: QPainter, opt: QStyleOptionGraphicsItem,
              widget: QWidget | None = None) -> None:
        rect = self.boundingRect()
        if rect.width() < 1 or rect.height() < 1:
            return
        images: OrderedDict[tuple[object, ...], QPixmap] | None = getattr(self, "_images",
                                                                          None)
        if images is None:
            images = OrderedDict()
            self._images = images
        key = self._image_key(rect)
        image = images.get(key)
        if image is None:
            ratio = p.device().devicePixelRatioF() if p.device() is not None else 1.0
            image = QPixmap(math.ceil(rect.width() * ratio), math.ceil(rect.height() * ratio))
            image.setDevicePixelRatio(ratio)
            image.fill(Qt.GlobalColor.transparent)
            painter = QPainter(image)
            painter.translate(-rect.topLeft())
            super().paint(painter, opt, widget)
            painter.end()
            images[key] = image
            while len(images) > KEPT_IMAGES:
                images.popitem(last=False)
        else:
            images.move_to_end(key)
        p.drawPixmap(rect.topLeft(), image)

    def _tick_metrics(self) -> QFontMetricsF:
        font = self.style.get("tickFont")
        return QFontMetricsF(font if isinstance(font, QFont) else self.font())

    def label_extent(self, min_val: float, max_val: float) -> float:
        """Pixels one label needs along the axis, with the gap: its height on a vertical
        axis, the widest of the end labels on a horizontal one."""
        fm = self._tick_metrics()
        if self.orientation in ("left", "right"):
            return fm.height() * (1.0 + LABEL_GAP)
        widest = max(fm.horizontalAdvance(s) for s in self.end_labels(min_val, max_val))
        return widest + fm.horizontalAdvance("0")  # a digit's width between two labels

    def end_labels(self, min_val: float, max_val: float) -> list[str]:
        """The labels of the range's ends, the widest a label on this axis can be."""
        span = abs(max_val - min_val) or 1.0
        return [s for s in self.tickStrings([min_val, max_val], 1.0, span / 4) if s]

    def tickSpacing(self, minVal: float, maxVal: float,
                    size: float) -> list[tuple[float, float]]:
        levels: list[tuple[float, float]] = super().tickSpacing(minVal, maxVal, size)
        if not levels or size <= 0 or maxVal == minVal:
            return levels
        px_per_unit = size / abs(maxVal - minVal)
        major = levels[0][0]
        wide = thinned_spacing(major, px_per_unit, self.label_extent(minVal, maxVal))
        if wide == major:
            return levels
        # The minor level keeps the grid as fine as before, but it must not carry labels
        # closer than the major ones could: a fifth of a 1-2-5 step carries none.
        minor = levels[1][0] if len(levels) > 1 else wide / 5
        return [(wide, 0.0), (min(minor, wide / 5), 0.0)]

    def generateDrawSpecs(self, p: QPainter) -> Any:
        """pyqtgraph's specs, with the first and last major labels moved inside the axis
        where pyqtgraph dropped them for sticking out past its ends."""
        specs = super().generateDrawSpecs(p)
        if (specs is None or not self.style["showValues"]
                or self.orientation not in ("bottom", "left")):
            return specs
        axis_spec, tick_specs, text_specs = specs
        flags = ((Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop)
                 if self.orientation == "bottom"
                 else (Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter))
        gap = self._tick_metrics().horizontalAdvance("0")
        return axis_spec, tick_specs, with_end_labels(
            text_specs, self._ends(p, text_specs), flags | Qt.TextFlag.TextDontClip, gap)

    def _ends(self, p: QPainter, drawn: list[TextSpec]) -> list[EndLabel]:
        """The first and last major ticks' labels that pyqtgraph left out, each placed on
        its tick but moved inside the axis."""
        low, high = sorted(float(v) for v in self.range)
        bounds = self.mapRectFromParent(self.geometry())
        horizontal = self.orientation == "bottom"
        length = bounds.width() if horizontal else bounds.height()
        if length <= 0 or high <= low:
            return []
        levels = self.tickSpacing(low, high, length)
        major = levels[0][0] if levels else 0.0
        if major <= 0:
            return []
        shown = {text for _, _, text in drawn}
        ends = []
        scale = self.autoSIPrefixScale * self.scale
        offset = max(0, self.style["tickLength"]) + self.style["tickTextOffset"][
            1 if horizontal else 0]
        for value, at_high in ((math.ceil(low / major - 1e-9) * major, False),
                               (math.floor(high / major + 1e-9) * major, True)):
            text = self.tickStrings([value], scale, major)[0]
            if not low - 1e-9 <= value <= high + 1e-9 or not text or text in shown:
                continue
            size = p.boundingRect(QRectF(0, 0, 100, 100), Qt.AlignmentFlag.AlignCenter, text)
            w, h = size.width(), size.height() * 0.8  # as pyqtgraph measures its labels
            at = (value - low) / (high - low)
            if horizontal:
                x = min(max(bounds.left() + at * bounds.width() - w / 2, bounds.left()),
                        bounds.right() - w)
                rect = QRectF(x, bounds.top() + offset, w, h)
            else:
                y = min(max(bounds.bottom() - at * bounds.height() - h / 2, bounds.top()),
                        bounds.bottom() - h)
                rect = QRectF(bounds.right() - offset - w, y, w, h)
            ends.append((rect, text, at_high))
        return ends


TextSpec = tuple[QRectF, Any, str]  # pyqtgraph's (rect, alignment flags, text) of a label
EndLabel = tuple[QRectF, str, bool]  # a label moved inside the axis, its text, at the high end


def with_end_labels(specs: list[TextSpec], ends: list[EndLabel], flags: Any, gap: float
                    ) -> list[TextSpec]:
    """``specs`` (pyqtgraph's tick labels) with the labels of ``ends`` added (each moved
    inside an end of the axis); a label one of them would touch (closer than ``gap``) or
    repeat is left out; of two ends that touch, the high one ("now") stays."""
    kept = list(specs)
    placed: list[EndLabel] = []
    for rect, text, high in sorted(ends, key=lambda e: not e[2]):  # the high end first
        wide = rect.adjusted(-gap, -gap, gap, gap)
        if any(other.intersects(wide) for other, _, _ in placed):
            continue
        placed.append((rect, text, high))
        kept = [s for s in kept if s[2] != text and not s[0].intersects(wide)]
    return kept + [(rect, flags, text) for rect, text, _ in placed]


class TimeAxis(ThinAxis):
    """The bottom axis of a GPU graph: seconds before the newest sample, labelled in "s",
    with "now" and the window's start drawn inside its ends (see the module doc)."""

    def tickStrings(self, values: list[float], scale: float,
                    spacing: float) -> list[str]:
        return [time_label(v * scale) for v in values]

    def setTickFont(self, font: QFont | None) -> None:
        """The font, and room under the graph for a whole line of it: pyqtgraph reserves
        0.8 of the labels' height, which cut the foot of "现在" ("now") at 300 %."""
        super().setTickFont(font)
        metrics = QFontMetricsF(font if font is not None else self.font())
        self.setStyle(autoExpandTextSpace=False, tickTextHeight=math.ceil(metrics.height()))
