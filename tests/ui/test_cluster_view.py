"""The cluster view, at 100 % and 300 %: with no server it says why once (the banner, not the
overview again) and nothing of a driver; a warning and an error are told apart by shape (▲,
✖, as on the GPU panels), not only by colour."""

from __future__ import annotations

import socket

import pytest
from PySide6.QtCore import QRect
from PySide6.QtGui import QColor, QFont, QImage
from qt_fixtures import logical_image

from gpumon.telemetry.cluster.prometheus import PrometheusSource
from gpumon.telemetry.model.health import Level
from gpumon.telemetry.model.types import GpuInfo, GpuSample, HostView
from gpumon.ui.monitor.cluster_overview import ClusterOverview
from gpumon.ui.monitor.health_mark import MARKS
from gpumon.ui.window.cluster_window import ClusterWindow

pytestmark = pytest.mark.usefixtures("restore_app_look")
GIB = 2**30
ZOOMS = [1.0, 3.0]


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize("zoom", ZOOMS)
def test_no_server_is_said_once_and_no_driver_is_claimed(qtbot, zoom: float) -> None:
    url = f"http://127.0.0.1:{_closed_port()}"
    window = ClusterWindow(PrometheusSource(url, timeout_s=1.0), 0.5)
    qtbot.addWidget(window)
    window.presentation.set_zoom(zoom)
    window.resize(1400, 900)
    window.show()
    qtbot.waitUntil(window.banner.isVisible, timeout=10000)
    said = window.banner.message.text()
    assert said.startswith(f"The Prometheus server at {url} cannot be reached")
    summary = window.overview.summary.text()
    assert said not in summary and url not in summary  # the banner's words, not twice
    assert summary == ("No machines to show: the server has not answered (the note above "
                       "says why).")
    header = window.header.machine_label.text()
    assert header == f"Prometheus at {url}"  # no "Driver N/A · CUDA N/A · NVML N/A"
    window.close()


def _overview(qtbot, zoom: float) -> ClusterOverview:
    gpus = tuple(GpuInfo(i, "NVIDIA H100", f"GPU-{i}", "", 80 * GIB, host="node-a")
                 for i in range(3))
    samples = (GpuSample(0, 0.0, gpu_util_pct=50, mem_used_bytes=GIB),
               GpuSample(1, 0.0, gpu_util_pct=50, mem_used_bytes=GIB, remap_pending=True),
               GpuSample(2, 0.0, gpu_util_pct=50, mem_used_bytes=GIB, xid_count=1, xid_last=79))
    page = ClusterOverview()
    qtbot.addWidget(page)
    font = QFont(page.font())
    font.setPointSizeF(font.pointSizeF() * zoom)
    page.setFont(font)
    page.show_hosts([HostView("node-a", True, "", gpus, samples, driver_version="550.54.15")])
    page.resize(page.heatmap.sizeHint().width() + 40, 600)
    page.show()
    return page


def _near(a: QColor, b: QColor, within: int = 60) -> bool:
    return abs(a.red() - b.red()) + abs(a.green() - b.green()) + abs(a.blue() - b.blue()) < within


def _corner(image: QImage, cell: QRect, side: int, colour: str) -> set[tuple[int, int]]:
    """Where the corner box of ``cell`` (``side`` px square) is drawn in ``colour``."""
    box = QRect(cell.right() - side + 1, cell.top(), side, side)
    return {(x - box.left(), y - box.top()) for x in range(box.left(), box.right() + 1)
            for y in range(box.top(), box.bottom() + 1)
            if _near(image.pixelColor(x, y), QColor(colour))}


@pytest.mark.parametrize("zoom", ZOOMS)
def test_warning_and_error_differ_in_shape_in_the_cells_and_the_legend(qtbot, zoom: float
                                                                       ) -> None:
    page = _overview(qtbot, zoom)
    warning, error = MARKS[Level.WARNING], MARKS[Level.ERROR]
    view = page.heatmap
    image = logical_image(view)  # pixels at the cells' coordinates
    lw, cw, rh = view.label_width(), view.cell_width(), view.row_height()
    cells = [QRect(lw + col * (cw + 3), 3, cw, rh - 6) for col in range(3)]
    side = max(11, cells[0].height() * 4 // 5)  # the corner's square (mark_side)
    assert not _corner(image, cells[0], side, warning[1])  # a healthy GPU: no mark
    assert not _corner(image, cells[0], side, error[1])
    drawn = [_corner(image, cells[1], side, warning[1]), _corner(image, cells[2], side, error[1])]
    assert all(len(mark) > side for mark in drawn)  # each in its colour
    overlap = len(drawn[0] & drawn[1]) / len(drawn[0] | drawn[1])
    assert overlap < 0.6, overlap  # two shapes, not one corner in two colours
    legend = page.legend.text()  # the same marks, in the legend
    assert f"color:{warning[1]}; font-weight:bold\">{warning[0]}<" in legend
    assert f"color:{error[1]}; font-weight:bold\">{error[0]}<" in legend
    assert warning[0] != error[0]


def test_the_host_tooltip_says_its_driver(qtbot) -> None:
    page = _overview(qtbot, 1.0)
    texts: list[str] = []
    from gpumon.ui.monitor import cluster_overview

    original = cluster_overview.QToolTip.showText
    cluster_overview.QToolTip.showText = lambda _pos, text, *_: texts.append(text)  # type: ignore[method-assign]
    try:
        from PySide6.QtCore import QEvent, QPoint
        from PySide6.QtGui import QHelpEvent

        view = page.heatmap
        at = QPoint(5, view.row_height() // 2)
        view.event(QHelpEvent(QEvent.Type.ToolTip, at, view.mapToGlobal(at)))
    finally:
        cluster_overview.QToolTip.showText = original  # type: ignore[method-assign]
    assert texts == ["node-a: 3 GPUs\nDriver 550.54.15\nclick: open its panels"]
