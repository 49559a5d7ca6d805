"""The cluster overview: machines as rows, GPUs as cells coloured by utilization, memory as a bar.

A heatmap, the way people read a rack at a glance. One widget paints every cell itself
(no widget per GPU) and only the rows inside the exposed rectangle, so 64 machines x 8 GPUs
cost a few milliseconds per frame; sizes follow the font, so zoom scales it. A click on a
row asks for that machine's panels (``hostActivated``).
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QEvent, QPoint, QRect, QSize, Qt, Signal
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontMetrics,
    QHelpEvent,
    QMouseEvent,
    QPainter,
    QPaintEvent,
)
from PySide6.QtWidgets import QLabel, QScrollArea, QToolTip, QVBoxLayout, QWidget

from gpumon.i18n import ntr, sentences, tr
from gpumon.telemetry.model.health import Level, assess, held_down
from gpumon.telemetry.model.readouts import duplicate_note
from gpumon.telemetry.model.types import GpuInfo, GpuSample, HostView
from gpumon.ui.monitor.health_mark import MARKS
from gpumon.units import format_bytes
from gpumon.untrusted import for_terminal

# Utilization 0..100 % -> a ramp from cool blue-grey through green and amber to red
# (ColorBrewer-like steps, readable by people with red-green colour blindness by lightness).
_RAMP = ((0, (222, 235, 247)), (25, (158, 202, 225)), (50, (116, 196, 118)),
         (75, (253, 174, 97)), (100, (215, 48, 39)))
LOST_COLOR = QColor(90, 90, 90)
NA_COLOR = QColor(235, 235, 235)
MEM_COLOR = QColor(40, 40, 120)
_COLORS = [QColor(0, 0, 0)] * 101


def util_color(pct: float | None) -> QColor:
    """The cell colour for a utilization (None: not reported)."""
    if pct is None or pct != pct:
        return NA_COLOR
    return _COLORS[max(0, min(100, round(pct)))]


def _build_colors() -> None:
    for pct in range(101):
        for (p0, c0), (p1, c1) in zip(_RAMP, _RAMP[1:], strict=False):
            if p0 <= pct <= p1:
                f = (pct - p0) / (p1 - p0)
                _COLORS[pct] = QColor(*(round(a + (b - a) * f) for a, b in zip(c0, c1,
                                                                                 strict=True)))
                break


_build_colors()


def cell_text(host: str, info: GpuInfo | None, sample: GpuSample | None) -> str:
    """A cell's tooltip: ``host · GPU i · name`` and its numbers, or why it is lost."""
    name = for_terminal(info.name) if info is not None else "GPU"
    index = sample.index if sample is not None else (info.index if info else 0)
    head = f"{host} · GPU {index} · {name}"
    if info is not None and info.duplicates:  # the fleet counts this GPU twice
        head += "\n" + duplicate_note(info)
    if sample is None:
        return head
    if sample.lost:
        return f"{head}\n" + tr("LOST: {why}", why=sample.message)
    util = "N/A" if sample.gpu_util_pct is None else f"{sample.gpu_util_pct:.0f} %"
    total = sample.mem_total_bytes or (info.mem_total_bytes if info else None)
    text = f"{head}\n" + tr("utilization {util}\nmemory {used} of {total}", util=util,
                             used=format_bytes(sample.mem_used_bytes),
                             total=format_bytes(total))
    health = assess(sample)  # the exporter's numbers as they are (no first reading here)
    lines = [held_down(sample.clocks_event_reasons), *health.reasons]
    if health.level != Level.OK:
        lines.insert(0, health.word)
    return "\n".join([text, *(line for line in lines if line)])


def mark_side(cell: QRect) -> int:
    """The side of the health mark's square in a cell's top-right corner, in pixels."""
    return max(11, cell.height() * 4 // 5)


def _mark_html(level: Level) -> str:
    """The health mark as the cells and the GPU panels show it, for the legend."""
    symbol, colour = MARKS[level]
    return f'<span style="color:{colour}; font-weight:bold">{symbol}</span>'


class HeatmapView(QWidget):
    """Paints the rows; its height is rows x row height, so a scroll area holds it."""

    hostActivated = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("clusterHeatmap")
        self.setMouseTracking(False)
        self.hosts: tuple[HostView, ...] = ()
        self._columns = 1
        self.frames = 0  # paint events so far (benchmarks and tests read it)

    # -- geometry from the font -------------------------------------------------------------
    def row_height(self) -> int:
        return QFontMetrics(self.font()).height() + 10

    def cell_width(self) -> int:
        """Room for "100%" and, right of it, the health mark's square (the text stays put
        whether a mark is there or not)."""
        side = mark_side(QRect(0, 0, 1, self.row_height() - 6))
        return QFontMetrics(self.font()).horizontalAdvance("100%") + 10 + side

    def label_width(self) -> int:
        return QFontMetrics(self.font()).horizontalAdvance("M" * 14)

    def sizeHint(self) -> QSize:
        return QSize(self.label_width() + self._columns * (self.cell_width() + 3) + 8,
                     max(1, len(self.hosts)) * self.row_height())

    def minimumSizeHint(self) -> QSize:
        return QSize(self.sizeHint().width(), self.sizeHint().height())

    def set_hosts(self, hosts: Sequence[HostView]) -> None:
        """New readings: repaint the visible rows (and relayout when the shape changed)."""
        hosts = tuple(hosts)
        columns = max((len(h.gpus) for h in hosts), default=1) or 1
        reshape = len(hosts) != len(self.hosts) or columns != self._columns
        self.hosts, self._columns = hosts, columns
        if reshape:
            self.setMinimumSize(self.sizeHint())
            self.updateGeometry()
        self.update()

    def host_at(self, pos: QPoint) -> HostView | None:
        row = pos.y() // self.row_height()
        return self.hosts[row] if 0 <= row < len(self.hosts) else None

    def cell_at(self, pos: QPoint) -> tuple[HostView, int] | None:
        """The (host, position in its row) under ``pos``, None outside the cells."""
        host = self.host_at(pos)
        x = pos.x() - self.label_width()
        if host is None or x < 0:
            return None
        col = x // (self.cell_width() + 3)
        return (host, col) if col < len(host.gpus) else None

    # -- Qt events ---------------------------------------------------------------------------
    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.FontChange:  # zoom: sizes follow the font
            self.setMinimumSize(self.sizeHint())
            self.updateGeometry()
        super().changeEvent(event)

    def mousePressEvent(self, event: QMouseEvent) -> None:
        host = self.host_at(event.position().toPoint())
        if host is not None and event.button() == Qt.MouseButton.LeftButton:
            self.hostActivated.emit(host.host)
        super().mousePressEvent(event)

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ToolTip and isinstance(event, QHelpEvent):
            self._show_tooltip(event)
            return True
        return super().event(event)

    def paintEvent(self, event: QPaintEvent) -> None:
        self.frames += 1
        painter = QPainter(self)
        rect = event.rect()
        rh, cw, lw = self.row_height(), self.cell_width(), self.label_width()
        pal = self.palette()
        text_color = pal.windowText().color()
        first = max(0, rect.top() // rh)
        last = min(len(self.hosts), rect.bottom() // rh + 1)
        metrics = QFontMetrics(self.font())
        for row in range(first, last):
            host = self.hosts[row]
            top = row * rh
            if row % 2:
                painter.fillRect(QRect(0, top, self.width(), rh), pal.alternateBase())
            painter.setPen(text_color if host.up else QColor(198, 40, 40))
            label = metrics.elidedText(host.host, Qt.TextElideMode.ElideMiddle, lw - 8)
            painter.drawText(QRect(4, top, lw - 8, rh),
                             int(Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft),
                             label)
            if not host.gpus and host.message:
                painter.drawText(QRect(lw, top, self.width() - lw, rh),
                                 int(Qt.AlignmentFlag.AlignVCenter), host.message)
            for col, sample in enumerate(host.samples):
                self._paint_cell(painter, QRect(lw + col * (cw + 3), top + 3, cw, rh - 6),
                                 host, col, sample)
        painter.end()

    def _paint_cell(self, painter: QPainter, cell: QRect, host: HostView, col: int,
                    sample: GpuSample) -> None:
        if sample.lost:
            painter.fillRect(cell, LOST_COLOR)
            painter.setPen(QColor(255, 255, 255))
            painter.drawText(cell, int(Qt.AlignmentFlag.AlignCenter), "lost")
            return
        util = sample.gpu_util_pct
        painter.fillRect(cell, util_color(util))
        total = sample.mem_total_bytes or host.gpus[col].mem_total_bytes
        used = sample.mem_used_bytes
        bar_h = max(3, cell.height() // 5)
        if total and used is not None:
            width = round(cell.width() * max(0.0, min(1.0, used / total)))
            painter.fillRect(QRect(cell.left(), cell.bottom() - bar_h + 1, width, bar_h),
                             MEM_COLOR)
        painter.setPen(QColor(0, 0, 0) if util is None or util < 85 else QColor(255, 255, 255))
        text = "N/A" if util is None else f"{util:.0f}%"
        text_width = cell.width() - mark_side(cell)  # left of the mark's corner
        painter.drawText(QRect(cell.left(), cell.top(), text_width, cell.height() - bar_h),
                         int(Qt.AlignmentFlag.AlignCenter), text)
        level = assess(sample).level
        if level != Level.OK:
            self._paint_mark(painter, cell, level)

    def _paint_mark(self, painter: QPainter, cell: QRect, level: Level) -> None:
        """The GPU panels' health mark in the cell's corner, on white (seen on any
        utilization colour): ▲ warning, ✖ error, told apart by shape as well as colour
        (both were a corner in two colours; the tooltip says why)."""
        symbol, colour = MARKS[level]
        side = mark_side(cell)
        box = QRect(cell.right() - side + 1, cell.top(), side, side)
        painter.save()
        painter.fillRect(box, QColor(255, 255, 255))
        font = QFont(self.font())
        font.setBold(True)
        font.setPixelSize(max(8, side * 4 // 5))
        painter.setFont(font)
        painter.setPen(QColor(colour))
        painter.drawText(box, int(Qt.AlignmentFlag.AlignCenter), symbol)
        painter.restore()

    def _show_tooltip(self, event: QHelpEvent) -> None:
        hit = self.cell_at(event.pos())
        if hit is None:
            host = self.host_at(event.pos())
            text = "" if host is None else "\n".join(line for line in (
                ntr("{host}: {n} GPU", "{host}: {n} GPUs", len(host.gpus), host=host.host),
                tr("Driver {version}", version=host.driver_version) if host.driver_version
                else "", host.message, tr("click: open its panels")) if line)
        else:
            host, col = hit
            text = cell_text(host.host, host.gpus[col], host.samples[col])
        if text:
            QToolTip.showText(event.globalPos(), text, self)
        else:
            QToolTip.hideText()


class ClusterOverview(QWidget):
    """The Overview page: a summary line, the legend, and the heatmap in a scroll area."""

    hostActivated = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("clusterOverview")
        self.summary = QLabel(tr("Waiting for the Prometheus server…"))
        self.summary.setObjectName("clusterSummary")
        self.summary.setWordWrap(True)
        scale = "".join(f'<span style="background:{util_color(p).name()}">&nbsp;{p}%&nbsp;</span>'
                        for p in (0, 25, 50, 75, 100))
        lost = ('<span style="background:#5a5a5a; color:white">&nbsp;'
                + tr("lost") + "&nbsp;</span>")
        self.legend = QLabel(sentences(  # no space after a Chinese full stop
            tr("Each row is a machine, each cell a GPU: colour = utilization {scale}, dark bar "
               "= memory used; {lost}. Click a machine to open its panels.", scale=scale,
               lost=lost),
            tr("A corner marks a health warning ({warning}) or error ({error}); hover for why.",
               warning=_mark_html(Level.WARNING), error=_mark_html(Level.ERROR))))
        self.legend.setObjectName("clusterLegend")
        self.legend.setTextFormat(Qt.TextFormat.RichText)
        self.legend.setWordWrap(True)
        self.heatmap = HeatmapView()
        self.heatmap.hostActivated.connect(self.hostActivated)
        self.scroll_area = QScrollArea()
        self.scroll_area.setWidget(self.heatmap)
        self.scroll_area.setWidgetResizable(True)
        self.scroll_area.setFrameShape(QScrollArea.Shape.NoFrame)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(self.summary)
        layout.addWidget(self.legend)
        layout.addWidget(self.scroll_area, 1)

    def show_hosts(self, hosts: Sequence[HostView], status_text: str = "") -> None:
        """Draw these machines; ``status_text`` replaces the summary (e.g. an error)."""
        self.heatmap.set_hosts(hosts)
        if status_text:
            self.summary.setText(status_text)
            return
        gpus = sum(len(h.gpus) for h in hosts)
        down = [h.host for h in hosts if not h.up]
        busy = [s.gpu_util_pct for h in hosts for s in h.samples
                if not s.lost and s.gpu_util_pct is not None]
        text = tr("{machines}, {gpus}", machines=ntr("{n} machine", "{n} machines", len(hosts)),
                  gpus=ntr("{n} GPU", "{n} GPUs", gpus))
        if busy:
            text += tr(", mean utilization {pct} %", pct=f"{sum(busy) / len(busy):.0f}")
        if down:
            text += tr("; down: {hosts}", hosts=", ".join(down[:5])) + (
                " …" if len(down) > 5 else "")
        self.summary.setText(text)
