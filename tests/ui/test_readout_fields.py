"""A changing reading never lays the panel out again: the readout labels sit in fields whose
size does not follow their text (field.py), so a tick only repaints them."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QEvent, QObject
from qt_fixtures import settled

from gpumon.telemetry.model.types import GpuInfo, GpuSample
from gpumon.ui.monitor.panel import GpuPanel
from gpumon.units import GIB

INFO = GpuInfo(0, "Test GPU", "GPU-0000", "00000000:01:00.0", mem_total_bytes=16 * GIB)


def _series(_gpu: int, _key: str) -> tuple[np.ndarray, np.ndarray]:
    return np.array([1.0, 2.0]), np.array([1.0, 2.0])


class LayoutRequests(QObject):
    """Counts the LayoutRequest events a widget receives (each is a relayout)."""

    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.LayoutRequest:
            self.count += 1
        return False


def _sample(n: int) -> GpuSample:
    return GpuSample(0, float(n), mem_used_bytes=int((1 + n * 0.37) * GIB),
                     mem_total_bytes=16 * GIB, gpu_util_pct=float(n * 7 % 101),
                     mem_util_pct=float(n * 13 % 101), temperature_c=40.0 + n,
                     power_w=100.0 + 3 * n)


def test_changing_readings_never_relayout_the_panel(qtbot) -> None:
    panel = GpuPanel(INFO)
    qtbot.addWidget(panel)
    panel.resize(640, 300)
    panel.show()
    qtbot.waitExposed(panel)
    panel.update_view(_sample(0), 0.0, _series)
    settled(lambda: panel.util_label.geometry())  # the first layout, not counted below
    requests = LayoutRequests()
    panel.installEventFilter(requests)
    texts = set()
    for n in range(1, 21):
        panel.update_view(_sample(n), float(n), _series, curves=False)
        texts.add(panel.util_label.text() + panel.mem_label.text() + panel.readouts.text())
        qtbot.wait(5)  # not awaiting: the event loop runs, a posted LayoutRequest would arrive
    assert len(texts) == 20  # every tick changed the readings
    assert requests.count == 0
    assert "GPU 39 %" in panel.util_label.text()  # the last reading (20 * 7 % 101)
    # the readings sit over their graphs: the utilization's over the right one
    labels = panel.graph_labels
    assert panel.util_label.parentWidget() is labels and not labels.stacked
    graph = panel.util_widget.geometry()
    util = panel.util_label.geometry().translated(labels.pos())
    assert (util.left(), util.width()) == (graph.left(), graph.width())


def test_fields_follow_the_font(qtbot) -> None:
    panel = GpuPanel(INFO)
    qtbot.addWidget(panel)
    panel.update_view(_sample(1), 1.0, _series)
    field = panel.util_label.parentWidget()
    assert field is not panel and field is not None
    before = field.sizeHint().height()
    font = panel.font()
    font.setPointSizeF(font.pointSizeF() * 2)
    panel.setFont(font)
    # the zoom still makes room for the text
    qtbot.waitUntil(lambda: field.sizeHint().height() > 1.5 * before, timeout=3000)


def test_a_new_status_text_never_lays_out_the_header(qtbot) -> None:
    """The status line changes with each reading's duration: it is placed again in its line
    (fit_row.py), against the right edge, whole where there is room; nothing is laid out."""
    from PySide6.QtWidgets import QVBoxLayout, QWidget

    from gpumon.ui.monitor.header import HeaderBar

    top = QWidget()  # the header in a window, as in the main window
    header = HeaderBar()
    QVBoxLayout(top).addWidget(header)
    qtbot.addWidget(top)
    top.resize(1800, 60)  # room for either text: the status line shares it with the machine
    header.set_status_text("2 GPUs · read in 12 ms · every 1 s")
    top.show()
    qtbot.waitExposed(top)
    settled(lambda: header.status_line.geometry())  # the first layout, not counted below
    requests = LayoutRequests()
    header.installEventFilter(requests)
    top.installEventFilter(requests)
    label = header.status_line
    row = label.parentWidget()
    assert row is header.line
    for n in range(20):
        header.set_status_text(f"2 GPUs · read in {n % 10} ms · every 1 s")
        qtbot.wait(5)  # not awaiting: the event loop runs, a posted LayoutRequest would arrive
        assert label.text() == f"2 GPUs · read in {n % 10} ms · every 1 s"
        assert label.geometry().right() == row.rect().right()  # against the right edge
        assert not label.is_elided()
    header.set_status_text("data is stale (last update 12 s ago) and much longer than before",
                           warn=True)
    qtbot.waitUntil(lambda: label.text().startswith("data is stale")
                    and not label.is_elided() and label.geometry().right() == row.rect().right(),
                    timeout=2000)
    assert requests.count == 0
