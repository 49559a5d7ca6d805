"""The Monitor tab in Simplified Chinese: the GPU panels (title, readouts, graph labels,
legend, time axis, LOST banner, tooltip), the hover readout, the status line, the process
table's own titles and the no-driver banner; every word on it is Chinese except what stays
English by design (units, GPU and driver names, NVML's own words). At 100 % and 200 % zoom
the graphs' labels are never cut."""

from __future__ import annotations

import re
import socket

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel
from qt_fixtures import settled, shown_tip

from gpumon.telemetry.nvml.source import NvmlSource
from gpumon.telemetry.sources.simulated import SimulatedFaults, SimulatedSource
from gpumon.ui.monitor.panel import GpuPanel
from gpumon.ui.monitor.panel_labels import MEMORY_RUNS_SHOWN
from gpumon.ui.widgets.axis import time_label
from gpumon.ui.widgets.runs_label import RunsLabel, runs_width
from gpumon.ui.window.main_window import MainWindow

pytestmark = pytest.mark.usefixtures("restore_app_look")
WAIT_MS = 5000
# English that stays on a Chinese screen: units, names of things, NVML's own words.
KEPT = ("GPU is lost", "GPU", "NVML", "CUDA", "N/A", "GiB", "MiB", "MHz", "ms", "SM", "PCIe",
        "torch", "gpumon", "kJ")


def _lost_gpu_3() -> SimulatedSource:
    return SimulatedSource(4, seed=1, faults=SimulatedFaults(lost_after_s={3: 0.3}))


def _legend(panel: GpuPanel) -> list[str]:
    legend = panel.memory_plot.legend
    return [] if legend is None else [label.text for _, label in legend.items]


def _ticks(panel: GpuPanel) -> list[str]:
    lo, hi = panel.memory_plot.getViewBox().viewRange()[0]
    axis = panel.memory_plot.getAxis("bottom")
    assert axis is not None
    return axis.tickStrings([lo, (lo + hi) / 2, 0.0], 1.0, 10.0)


def monitor_texts(w: MainWindow) -> list[str]:
    """Every text the Monitor tab shows now, apart from the nvidia-smi table and the process
    rows (nvidia-smi's columns and the processes' own names stay as they are)."""
    texts = [w.windowTitle(), w.health.badge.text(),
             *(p.readout.text() for p in w.gpu_grid.panels if p.readout is not None)]
    texts += [label.text() for widget in (w.header, w.banner, w.gpu_grid)
              for label in widget.findChildren(QLabel) if label.isVisibleTo(w)]
    for panel in w.gpu_grid.panels:
        texts += [panel.accessibleName(), shown_tip(panel.title), *_legend(panel),
                  *_ticks(panel)]
    model = w.process_table.process_model
    texts += [str(model.headerData(c, Qt.Orientation.Horizontal)) for c in (4, 5, 6)]
    return [t for t in texts if t]


def english_words(texts: list[str], names: list[str]) -> list[str]:
    """Words of two or more Latin letters left once the names and KEPT are taken out."""
    found = []
    for text in texts:
        for kept in sorted([*names, *KEPT], key=len, reverse=True):
            text = text.replace(kept, " ")
        found += re.findall(r"[A-Za-z]{2,}", text)
    return found


def _names(w: MainWindow) -> list[str]:
    snap = w.latest_snapshot
    assert snap is not None
    m = snap.machine
    return [socket.gethostname(), *(g.name for g in snap.gpus),
            *(v for v in (m.driver_version, m.cuda_driver_version, m.nvml_version) if v)]


def test_monitor_tab_speaks_chinese(qtbot, make_window, chinese: None) -> None:
    w = make_window(_lost_gpu_3)
    qtbot.waitUntil(lambda: w.gpu_panel(3) is not None and w.gpu_panel(3).lost, timeout=WAIT_MS)
    panel = w.gpu_panel(0)
    assert panel is not None
    panel.add_memory_series("torch_allocated_bytes", "torch 已分配", "#d62728")
    panel.hover_at(-0.2)
    qtbot.waitUntil(lambda: w.snapshot_count >= 5, timeout=WAIT_MS)

    assert panel.title.text().endswith("[模拟数据]")
    assert panel.accessibleName() == "GPU 0 面板"
    assert panel.mem_label.text().startswith("■ 显存 ") and " · 空闲 " in panel.mem_label.text()
    assert re.fullmatch(r"■ GPU \d+ %   ■ 显存控制器 \d+ %", panel.util_label.text())
    assert panel.readouts.text().startswith("温度 ") and " · 性能状态 P" in panel.readouts.text()
    assert shown_tip(panel.title).startswith("驱动保留显存：")
    assert _legend(panel) == ["NVML 已用（所有进程）", "torch 已分配"]
    assert time_label(0.0) == "现在" and time_label(-30.0) == "\u221230 s"
    assert panel.readout is not None
    heading, *values = panel.readout.text().splitlines()
    assert heading.startswith("GPU 0，") and heading.endswith(" s）"), heading
    assert values[0].startswith("已用显存 ")
    lost = w.gpu_panel(3)
    assert lost is not None
    assert lost.lost_label.text() == ("已丢失 — 模拟 GPU 3 在启动 0.3 s 后从总线上掉线"
                                      "（GPU is lost）；其他 GPU 照常运行。")
    assert re.fullmatch(r"4 块 GPU · 1 块已丢失 · 读取耗时 \d+ ms · 每 0\.1 s 一次",
                        w.header.status_line.text())
    assert w.windowTitle() == f"gpumon — {socket.gethostname()}（模拟）"  # no space before （
    assert [w.process_table.process_model.headerData(c, Qt.Orientation.Horizontal)
            for c in range(15)] == ["GPU", "PID", "类型", "进程名", "用户", "显存",
                                    "SM 利用率 %", "显存带宽 %", "编码器 %", "解码器 %",
                                    "CPU 占用 %", "主机内存", "运行时长", "容器/作业", "命令"]
    assert w.process_pane.filter_edit.placeholderText().startswith("筛选：")

    texts = monitor_texts(w)
    assert len(texts) > 40
    assert english_words(texts, _names(w)) == []


def test_the_english_check_catches_a_sentence_that_bypasses_tr(qtbot, make_window,
                                                               chinese: None) -> None:
    """The word scan can fail: an English sentence put straight on a panel is found."""
    w = make_window()
    qtbot.waitUntil(lambda: w.snapshot_count >= 2, timeout=WAIT_MS)
    panel = w.gpu_panel(1)
    assert panel is not None
    qtbot.waitUntil(panel.isVisible, timeout=WAIT_MS)  # its labels are read only when shown
    assert english_words(monitor_texts(w), _names(w)) == []
    panel.lost_label.setText("LOST — the GPU stopped answering")
    panel.lost_label.show()
    assert english_words(monitor_texts(w), _names(w)) == ["LOST", "the", "stopped",
                                                          "answering"]


def test_no_driver_banner_and_empty_grid_in_chinese(qtbot, make_window, chinese: None,
                                                    no_nvml_library: None) -> None:
    w = make_window(NvmlSource)
    qtbot.waitUntil(lambda: w.banner.isVisible(), timeout=WAIT_MS)
    assert w.banner.text().startswith("这台计算机上没有找到 NVIDIA 驱动")
    assert w.header.status_line.text() == "无 GPU 数据"
    assert w.gpu_grid.panels == []
    names = [socket.gethostname(), "libnvidia-ml.so.1", "NVIDIA", "--simulate"]
    assert english_words(monitor_texts(w), names) == []


@pytest.mark.parametrize("zoom", [1.0, 2.0])
def test_graph_labels_are_never_cut_in_chinese(qtbot, make_window, chinese: None,
                                               zoom: float) -> None:
    """Text width against widget width: each graph's label shows its readings whole."""
    w = make_window()
    qtbot.waitUntil(lambda: w.gpu_panel(3) is not None and w.snapshot_count >= 3,
                    timeout=WAIT_MS)
    w.presentation.set_zoom(zoom)
    # the grid lays out again after the font change
    settled(lambda: [(p.geometry(), p.mem_label.contentsRect()) for p in w.gpu_grid.panels])
    for panel in w.gpu_grid.panels:
        util: RunsLabel = panel.util_label
        assert not util.is_elided(), (zoom, panel.index, util.text())
        shown = runs_width(panel.mem_label.runs[:MEMORY_RUNS_SHOWN], panel.mem_label.font())
        assert shown <= panel.mem_label.contentsRect().width(), (zoom, panel.index)
        title_px = panel.title.fontMetrics().height()
        assert title_px >= w.fontMetrics().height() - 1  # the panel's text follows the zoom


def test_a_lost_panels_text_follows_the_zoom(qtbot, make_window) -> None:
    """A lost GPU's panel (red border) grows its text with the zoom like the others."""
    w = make_window(_lost_gpu_3)
    qtbot.waitUntil(lambda: w.gpu_panel(3) is not None and w.gpu_panel(3).lost, timeout=WAIT_MS)
    w.presentation.set_zoom(2.0)
    settled(lambda: [p.geometry() for p in w.gpu_grid.panels])
    lost, fine = w.gpu_panel(3), w.gpu_panel(0)
    assert lost is not None and fine is not None
    for label in ("title", "readouts", "mem_label", "util_label"):
        assert (getattr(lost, label).fontMetrics().height()
                == getattr(fine, label).fontMetrics().height()), label
