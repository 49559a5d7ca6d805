"""The cluster overview marks a GPU's health: the health mark (▲, ✖) in its colour in the
cell's corner (none on a healthy GPU), and the clock words and reasons in the cell's tooltip."""

from __future__ import annotations

from PySide6.QtCore import QRect
from PySide6.QtGui import QColor
from qt_fixtures import logical_image

from gpumon.telemetry.model.health import Level
from gpumon.telemetry.model.types import GpuInfo, GpuSample, HostView
from gpumon.ui.monitor.cluster_overview import HeatmapView, cell_text, mark_side
from gpumon.ui.monitor.health_mark import MARKS

GIB = 2**30


def corner_colour(view: HeatmapView, col: int) -> QColor | None:
    """The colour of the mark in the cell's corner square (the symbol drawn on white), or
    None when nothing but white and the cell's colour is there."""
    image = logical_image(view)  # pixels at the cells' coordinates
    lw, cw, rh = view.label_width(), view.cell_width(), view.row_height()
    cell = QRect(lw + col * (cw + 3), 3, cw, rh - 6)
    box = QRect(cell.right() - mark_side(cell) + 1, cell.top(), mark_side(cell),
                mark_side(cell))
    background = (QColor("white"), image.pixelColor(cell.left() + 2, cell.top() + 2))
    counts: dict[str, int] = {}
    for x in range(box.left(), box.right() + 1):
        for y in range(box.top(), box.bottom() + 1):
            c = image.pixelColor(x, y)
            if c not in background:
                counts[c.name()] = counts.get(c.name(), 0) + 1
    return QColor(max(counts, key=counts.__getitem__)) if counts else None


def test_a_corner_in_the_marks_colour_and_the_words_in_the_tooltip(qtbot) -> None:
    gpus = tuple(GpuInfo(i, "NVIDIA H100", f"GPU-{i}", "", 80 * GIB, host="node-a")
                 for i in range(3))
    samples = (GpuSample(0, 0.0, gpu_util_pct=50, mem_used_bytes=GIB),
               GpuSample(1, 0.0, gpu_util_pct=50, mem_used_bytes=GIB, remap_pending=True,
                         clocks_event_reasons=0x44),
               GpuSample(2, 0.0, gpu_util_pct=50, mem_used_bytes=GIB, xid_count=1, xid_last=79))
    view = HeatmapView()
    qtbot.addWidget(view)
    view.set_hosts([HostView("node-a", True, "", gpus, samples)])
    view.resize(view.sizeHint())
    view.show()
    assert corner_colour(view, 1) == QColor(MARKS[Level.WARNING][1])
    assert corner_colour(view, 2) == QColor(MARKS[Level.ERROR][1])
    assert corner_colour(view, 0) not in (QColor(MARKS[Level.WARNING][1]),
                                          QColor(MARKS[Level.ERROR][1]))  # the "50%" text
    tip = cell_text("node-a", gpus[1], samples[1]).splitlines()
    assert tip[3:] == ["warning", "clocks held down: power cap, thermal",
                       "a row remap is pending: reset the GPU when it is idle"]
    assert "healthy" not in cell_text("node-a", gpus[0], samples[0])
