"""The playground's monitor link on a real GPU: torch on cuda:0, NVML by UUID, markers and
torch's memory curves on the right graph. Skipped unless torch sees a CUDA device.

tests/ui/test_playground_link.py checks the same plumbing with fakes on any machine.
"""

from __future__ import annotations

import pytest

pytest.importorskip("PySide6", reason="the window's GPU test needs PySide6")
pytest.importorskip("pytestqt", reason="the window's GPU test needs pytest-qt")

import numpy as np
import pyqtgraph as pg
import torch

from gpumon.playground.data import actions as act
from gpumon.ui.playground.monitor_link import ALLOCATED_KEY, RESERVED_KEY

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU and CUDA torch"),
]


@pytest.fixture
def window(qtbot, monkeypatch: pytest.MonkeyPatch):
    # The lesson's timing loop keeps the budget its code asks, in the kernel too (the suite
    # cuts it short elsewhere: tests/quick_benchmark): it must show on the utilization graph.
    monkeypatch.setenv("GPUMON_TEST_FULL_BENCHMARKS", "1")
    from gpumon.telemetry.nvml.source import NvmlSource
    from gpumon.ui.window.main_window import MainWindow

    w = MainWindow(NvmlSource, 0.2, window_s=60)
    qtbot.addWidget(w)
    w.resize(1400, 900)
    w.show()
    yield w
    w.close()
    assert not w.kernel_link.running and not w.sampling.running


def test_cuda_action_marks_the_nvml_gpu_and_plots_torch_memory(qtbot, window) -> None:
    qtbot.waitUntil(lambda: window.snapshot_count >= 2, timeout=20000)
    assert window.source_status.usable, window.source_status.message
    window.tabs.setCurrentWidget(window.playground)
    qtbot.waitUntil(lambda: bool(window.kernel_link.device_options), timeout=60000)
    names = [d.name for d in window.kernel_link.device_options]
    assert "cuda:0" in names and "meta" not in names
    panel = window.playground
    panel.submit(act.CreateFilled("x", "ones", (1024, 1024), device="cuda:0"))  # 4 MiB
    panel.submit(act.Compute("y", "matmul", "x", "x"))
    qtbot.waitUntil(lambda: panel.log.count() == 2, timeout=60000)
    assert all(o.ok for o in panel.log.outcomes()), [o.error for o in panel.log.outcomes()]
    nvml = panel.link.nvml_index("cuda:0")
    assert nvml is not None, "cuda:0 matched no NVML GPU by UUID"
    gpu = window.gpu_panel(nvml)
    labels = [i.label.format for i in gpu.memory_plot.items
              if isinstance(i, pg.InfiniteLine) and getattr(i, "label", None) is not None]
    # The kernel's first CUDA action creates its context on cuda:0, and its marker says so
    # ("context created: x = torch.ones…"); the matmul after it is marked with its code.
    from gpumon.ui.playground.style import CONTEXT_LABEL

    assert [t.removeprefix(f"{CONTEXT_LABEL}: ")[:14] for t in labels] == [
        "x = torch.ones", "y = x @ x"], labels
    assert labels[0].startswith(CONTEXT_LABEL)
    start = window.snapshot_count
    qtbot.waitUntil(lambda: window.snapshot_count >= start + 3, timeout=20000)
    _, allocated = window.history.series(nvml, ALLOCATED_KEY)
    _, reserved = window.history.series(nvml, RESERVED_KEY)
    assert len(allocated) and allocated[-1] >= 2 * 4 * 2**20  # x and y
    assert reserved[-1] >= allocated[-1]
    assert allocated[-1] == torch.cuda.memory_allocated(0)
    _, used = window.history.series(nvml, "mem_used_bytes")
    assert used[-1] > reserved[-1]  # NVML also counts the CUDA context


def test_the_lesson_marks_the_gpu_graph_and_feeds_torch_memory(qtbot, window) -> None:
    """The whole lesson in the Lesson tab, in order: its CUDA actions are markers on the NVML
    GPU that is cuda:0 (the context's creator labelled so), torch's memory lines are fed,
    and the timing loop shows on the utilization graph."""
    from gpumon.playground.lesson.steps import LESSON
    from gpumon.ui.lesson.page import LessonPage
    from gpumon.ui.playground.style import CONTEXT_LABEL

    qtbot.waitUntil(lambda: window.snapshot_count >= 2, timeout=20000)
    page = window.lesson
    assert isinstance(page, LessonPage)
    window.tabs.setCurrentWidget(window.playground)  # the graphs show on this tab
    qtbot.waitUntil(lambda: bool(window.kernel_link.device_options), timeout=60000)
    outcomes = []
    window.kernel_link.outcomeReady.connect(outcomes.append)
    for index in range(len(LESSON)):
        page.show_step(index)
        with qtbot.waitSignal(page.stepFinished, timeout=300000):
            page.run_current()
    link = window.playground.link
    nvml = link.nvml_index("cuda:0")
    assert nvml is not None, "cuda:0 matched no NVML GPU by UUID"
    labels = [i.label.format for i in window.gpu_panel(nvml).memory_plot.items
              if isinstance(i, pg.InfiniteLine) and getattr(i, "label", None) is not None]
    assert any(t.startswith("big = torch.ones(4096") for t in labels), labels
    made = [o for o in outcomes if "cuda:0" in o.contexts_created]
    assert len(made) <= 1  # one context per process and GPU
    if made:  # none when listing the devices (not an action) already made it
        assert sum(t.startswith(CONTEXT_LABEL) for t in labels) == 1
    _, allocated = window.history.series(nvml, ALLOCATED_KEY)
    _, reserved = window.history.series(nvml, RESERVED_KEY)
    assert len(allocated) and np.nanmax(allocated) >= 64 * 2**20  # the 64 MiB tensor, seen
    assert np.nanmax(reserved) >= np.nanmax(allocated)
    _, utilization = window.history.series(nvml, "gpu_util_pct")
    assert np.nanmax(utilization) > 0  # the benchmark loop ran for seconds on the GPU
