"""The cluster overview marks a GPU's health: a corner in the health mark's colour on its
cell (none on a healthy GPU), and the clock words and reasons in the cell's tooltip."""

from __future__ import annotations

from PySide6.QtGui import QColor

from gpumon.telemetry.model.health import Level
from gpumon.telemetry.model.types import GpuInfo, GpuSample, HostView
from gpumon.ui.monitor.cluster_overview import HeatmapView, cell_text
from gpumon.ui.monitor.health_mark import MARKS

GIB = 2**30


def corner_colour(view: HeatmapView, col: int) -> QColor:
    image = view.grab().toImage()
    lw, cw = view.label_width(), view.cell_width()
    right, top = lw + col * (cw + 3) + cw - 1, 3
    return image.pixelColor(right - 2, top + 2)  # inside the corner's triangle


def test_a_corner_in_the_marks_colour_and_the_words_in_the_tooltip(qtbot) -> None:  # type: ignore[no-untyped-def]
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
                                          QColor(MARKS[Level.ERROR][1]))
    tip = cell_text("node-a", gpus[1], samples[1]).splitlines()
    assert tip[3:] == ["warning", "clocks held down: power cap, thermal",
                       "a row remap is pending: reset the GPU when it is idle"]
    assert "healthy" not in cell_text("node-a", gpus[0], samples[0])
