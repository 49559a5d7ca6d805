"""The cluster heatmap on its own: geometry from the font, hit testing, tooltips, colours."""

from __future__ import annotations

from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QFont
from qt_fixtures import shown_tip

from gpumon.telemetry.model.types import GpuInfo, GpuSample, HostView
from gpumon.ui.monitor.cluster_overview import (
    LOST_COLOR,
    NA_COLOR,
    ClusterOverview,
    cell_text,
    util_color,
)

GIB = 1024**3


def host(name: str, n: int, up: bool = True, util: float = 50.0) -> HostView:
    gpus = tuple(GpuInfo(i, "NVIDIA A100", f"GPU-{name}-{i}", "", 80 * GIB, host=name)
                 for i in range(n))
    samples = tuple(
        GpuSample(i, 0.0, lost=not up, message="" if up else "scrape failed",
                  gpu_util_pct=util if up else None, mem_used_bytes=20 * GIB if up else None,
                  mem_total_bytes=80 * GIB if up else None) for i in range(n))
    return HostView(name, up, "" if up else "Prometheus cannot scrape it", gpus, samples)


def test_rows_cells_and_clicks(qtbot) -> None:
    page = ClusterOverview()
    qtbot.addWidget(page)
    page.resize(900, 600)
    page.show()
    page.show_hosts([host("a", 8), host("b", 4, up=False), host("c", 2)])
    view = page.heatmap
    assert page.summary.text() == "3 machines, 14 GPUs, mean utilization 50 %; down: b"
    rh, lw, cw = view.row_height(), view.label_width(), view.cell_width()
    assert view.minimumHeight() == 3 * rh
    hit = view.cell_at(QPoint(lw + 1 * (cw + 3) + 2, rh * 2 + 2))
    assert hit is not None and (hit[0].host, hit[1]) == ("c", 1)
    assert view.cell_at(QPoint(lw + 2 * (cw + 3) + 2, rh * 2 + 2)) is None  # c has 2 GPUs
    assert view.cell_at(QPoint(5, 5)) is None  # the label, not a cell
    with qtbot.waitSignal(page.hostActivated) as blocker:
        qtbot.mouseClick(view, Qt.MouseButton.LeftButton, pos=QPoint(5, rh + 3))
    assert blocker.args == ["b"]
    page.heatmap.grab()  # paints every row (lost cells included) without error
    assert view.frames >= 1


def test_sizes_follow_the_font(qtbot) -> None:
    page = ClusterOverview()
    qtbot.addWidget(page)
    page.show_hosts([host(f"n{i}", 8) for i in range(64)])
    small = (page.heatmap.row_height(), page.heatmap.cell_width())
    font = QFont(page.heatmap.font())
    font.setPointSizeF(font.pointSizeF() * 3)
    page.heatmap.setFont(font)
    big = (page.heatmap.row_height(), page.heatmap.cell_width())
    assert big[0] > 2 * small[0] and big[1] > 2 * small[1]
    assert page.heatmap.minimumHeight() == 64 * big[0]


def test_tooltips_and_colours() -> None:
    info = GpuInfo(3, "Tesla T4", "GPU-x", "", 16 * GIB, host="n1")
    ok = GpuSample(3, 0.0, gpu_util_pct=87.0, mem_used_bytes=4 * GIB, mem_total_bytes=16 * GIB)
    assert cell_text("n1", info, ok) == ("n1 · GPU 3 · Tesla T4\nutilization 87 %\n"
                                         "memory 4.00 GiB of 16.00 GiB")
    lost = GpuSample(3, 0.0, lost=True, message="Prometheus cannot scrape n1")
    assert cell_text("n1", info, lost) == ("n1 · GPU 3 · Tesla T4\n"
                                           "LOST: Prometheus cannot scrape n1")
    assert util_color(None) == NA_COLOR and util_color(float("nan")) == NA_COLOR
    assert util_color(0) != util_color(100) and util_color(150) == util_color(100)
    assert util_color(50).getRgb()[:3] == (116, 196, 118)
    assert LOST_COLOR not in (util_color(p) for p in range(101))


def test_a_gpu_two_exporters_report_is_named_in_the_tooltip_and_the_panel_header(
        qtbot) -> None:
    from gpumon.ui.monitor.panel import GpuPanel

    info = GpuInfo(0, "NVIDIA H200", "GPU-1", "", 140 * GIB, host="vm",
                   source="10.0.0.1:9400 (dcgm)", duplicates=("10.0.0.1:9401 (gpumon)",))
    note = ("also reported by 10.0.0.1:9401 (gpumon) (same UUID GPU-1): shown once, from "
            "10.0.0.1:9400 (dcgm)")
    assert cell_text("vm", info, None) == f"vm · GPU 0 · NVIDIA H200\n{note}"
    panel = GpuPanel(info)
    qtbot.addWidget(panel)
    assert "also reported by 10.0.0.1:9401 (gpumon)" in panel.title.text()
    panel.update_view(GpuSample(0, 1.0, gpu_util_pct=5.0), 1.0, lambda *_: ([], []), curves=False)
    assert shown_tip(panel.title).startswith(note)
    single = GpuPanel(GpuInfo(0, "NVIDIA H200", "GPU-1", "", host="vm"))
    qtbot.addWidget(single)
    assert "also reported" not in single.title.text()
