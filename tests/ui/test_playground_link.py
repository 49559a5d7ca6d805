"""UI plumbing of the monitor link, NOT a test of CUDA: a fake cuda outcome and fake torch
counters on simulated GPUs must give a marker and torch's memory curves on the right graph.

The real CUDA path (torch on a GPU, NVML by UUID) is tests/gpu/test_ui_cuda.py.
"""

from __future__ import annotations

import dataclasses
import time

import pyqtgraph as pg
import pytest

from gpumon.device_ids import normalize_uuid
from gpumon.playground.data import actions as act
from gpumon.playground.data.devices import DeviceOption
from gpumon.playground.data.outcome import Outcome
from gpumon.telemetry.sources.simulated import SimulatedSource
from gpumon.ui.monitor.panel import GpuPanel
from gpumon.ui.playground.monitor_link import (
    ALLOCATED_KEY,
    RESERVED_KEY,
    TorchMemoryProvider,
    cuda_to_nvml,
)
from gpumon.ui.playground.style import device_color
from gpumon.units import GIB


def marker_texts(panel: GpuPanel) -> list[str]:
    return [item.label.format for item in panel.memory_plot.items
            if isinstance(item, pg.InfiniteLine) and getattr(item, "label", None) is not None]


def legend_texts(panel: GpuPanel) -> list[str]:
    legend = panel.memory_plot.legend
    return [] if legend is None else [label.text for _, label in legend.items]


def fake_cuda_outcome(code: str = "x = x.cuda(0)") -> Outcome:
    return Outcome(act.Move("x", "cuda", index=0), code, True, time.time(), 0.001,
                   kind="tensor", preview="tensor([1, 2, 3], device='cuda:0')", shape=(3,),
                   dtype="int64", device="cuda:0", copied=True, devices=("cpu", "cuda:0"))


def pretend_cuda0_is_nvml_gpu(window, nvml_index: int) -> None:
    uuid = window.latest_snapshot.gpus[nvml_index].uuid
    window.playground.link.set_device_options([
        DeviceOption("cpu", "cpu — main memory"),
        DeviceOption("cuda:0", "cuda:0 — simulated", normalize_uuid(uuid), 24 * GIB)])


def test_provider_maps_cuda_index_to_nvml_by_uuid() -> None:
    gpus = SimulatedSource(4, seed=1)
    gpus.open()
    snap = gpus.sample()
    provider = TorchMemoryProvider(lambda: {0: (100, 200), 1: (5, 6)})
    assert provider(snap) == {}  # no cuda UUIDs known: never guess by position
    mapping = cuda_to_nvml([snap.gpus[3].uuid, "GPU-not-a-uuid"], snap.gpus)
    assert mapping == {0: snap.gpus[3]}
    provider.set_mapping(mapping)
    assert provider(snap) == {3: {ALLOCATED_KEY: 100.0, RESERVED_KEY: 200.0}}
    assert TorchMemoryProvider(dict)(snap) == {}
    other = SimulatedSource(4, seed=2)  # the GPU set changed before the link remapped
    other.open()
    assert provider(other.sample()) == {}  # nothing lands on a GPU that is not cuda:0's


def test_fake_cuda_outcome_marks_the_matching_gpu_and_adds_torch_curves(qtbot, make_window):
    w = make_window()
    qtbot.waitUntil(lambda: w.snapshot_count >= 2, timeout=5000)
    link = w.playground.link
    link.provider.counters = lambda: {0: (GIB, 2 * GIB)}
    pretend_cuda0_is_nvml_gpu(w, 2)
    assert link.nvml_index("cuda:0") == 2
    w.kernel_link.outcomeReady.emit(fake_cuda_outcome())  # as the kernel would deliver it
    panel = w.gpu_panel(2)
    assert marker_texts(panel) == ["x = x.cuda(0)"]
    line = next(i for i in panel.memory_plot.items if isinstance(i, pg.InfiniteLine)
                and getattr(i, "label", None) is not None)
    assert line.pen.color().name() == device_color("cuda:0")
    assert all(marker_texts(w.gpu_panel(i)) == [] for i in (0, 1, 3))
    legend = legend_texts(panel)
    assert "torch allocated" in legend and "torch reserved" in legend
    assert "NVML: this process" in legend
    assert any(t.startswith("NVML used") for t in legend)  # the device's own curve
    assert legend_texts(w.gpu_panel(0)) == []  # untouched GPUs keep their plain graph
    start = w.snapshot_count
    qtbot.waitUntil(lambda: w.snapshot_count >= start + 2, timeout=5000)
    _, values = w.history.series(2, ALLOCATED_KEY)
    assert len(values) and values[-1] == GIB
    curves = {c.name(): c for c in panel.memory_plot.listDataItems()}

    def newest_drawn() -> float | None:  # the newest sample is always drawn ...
        y = curves["torch reserved"].getData()[1]
        return None if y is None or not len(y) else float(y[-1])

    # ... once the graph has moved by half a pixel since the series was added: a snapshot
    # sampled before the link knew cuda:0 may be the one drawn first (no value yet)
    qtbot.waitUntil(lambda: newest_drawn() == 2.0, timeout=5000)  # GiB on the axis


def test_markers_and_curves_come_back_after_panels_are_rebuilt(qtbot, make_window):
    w = make_window()
    qtbot.waitUntil(lambda: w.snapshot_count >= 1, timeout=5000)
    pretend_cuda0_is_nvml_gpu(w, 1)
    w.kernel_link.outcomeReady.emit(fake_cuda_outcome("y = x ** 2"))
    old = w.gpu_panel(1)
    with qtbot.waitSignal(w.gpuPanelsChanged, timeout=5000):
        w.switch_source(lambda: SimulatedSource(5, seed=1))  # same UUIDs, one GPU more
    qtbot.waitUntil(lambda: w.gpu_panel(1) is not old and w.gpu_panel(1) is not None,
                    timeout=5000)
    assert marker_texts(w.gpu_panel(1)) == ["y = x ** 2"]
    assert "torch allocated" in legend_texts(w.gpu_panel(1))


def test_errors_are_marked_in_the_error_colour_and_cpu_outcomes_not_at_all(qtbot, make_window):
    from gpumon.playground.data.errors import ErrorInfo
    from gpumon.ui.playground.style import ERROR_COLOR

    w = make_window()
    qtbot.waitUntil(lambda: w.snapshot_count >= 1, timeout=5000)
    pretend_cuda0_is_nvml_gpu(w, 0)
    bad = Outcome(act.Compute("z", "add", "y", act.Ref("x", "cpu")), "z = y + x.cpu()", False,
                  time.time(), 0.0, devices=("cuda:0", "cpu"),
                  error=ErrorInfo("RuntimeError", "Expected all tensors to be on the same "
                                  "device", "different devices"))
    cpu = Outcome(act.CreateTensor("x", "[1]"), "x = torch.tensor([1])", True, time.time(),
                  0.0, devices=("cpu",), device="cpu")
    w.kernel_link.outcomeReady.emit(bad)
    w.kernel_link.outcomeReady.emit(cpu)
    assert marker_texts(w.gpu_panel(0)) == ["z = y + x.cpu()"]
    line = next(i for i in w.gpu_panel(0).memory_plot.items if isinstance(i, pg.InfiniteLine)
                and getattr(i, "label", None) is not None)
    assert line.pen.color().name() == ERROR_COLOR
    assert w.playground.log.count() == 2


def test_a_marker_placed_while_the_monitor_is_unseen_shows_when_it_is_seen_again(
        qtbot, make_window):
    """As tests/gpu/test_ui_cuda.py runs it on a GPU, with the Playground tab in front (its
    graphs are the Monitor's grid, borrowed: seen); then with the window minimised, when the
    panels skip their ticks (grid.py, seen.py): the marker is on the graph at once, and at its
    time once the window is seen again. The first CUDA action of a kernel creates its
    context, and its label says so (why the GPU test, which wanted the bare code, failed)."""
    from gpumon.ui.playground.style import CONTEXT_LABEL
    from gpumon.ui.widgets.seen import window_seen

    def lines(panel: GpuPanel) -> list[pg.InfiniteLine]:
        return [i for i in panel.memory_plot.items if isinstance(i, pg.InfiniteLine)
                and getattr(i, "label", None) is not None]

    def ticks(n: int) -> None:
        start = w.snapshot_count
        qtbot.waitUntil(lambda: w.snapshot_count >= start + n, timeout=5000)

    w = make_window(interval_s=0.1)
    ticks(2)
    w.tabs.setCurrentWidget(w.playground)
    # the kernel's own devices first (they would replace the pretended ones when they come)
    qtbot.waitUntil(lambda: bool(w.kernel_link.device_options), timeout=60000)
    pretend_cuda0_is_nvml_gpu(w, 1)
    panel = w.gpu_panel(1)
    qtbot.waitUntil(lambda: panel.isVisible() and window_seen(panel), timeout=5000)
    first = dataclasses.replace(fake_cuda_outcome("x = torch.ones(1024, 1024, device='cuda:0')"),
                                started_at=time.time(), contexts_created=("cuda:0",))
    w.kernel_link.outcomeReady.emit(first)
    assert marker_texts(panel) == [f"{CONTEXT_LABEL}: x = torch.ones(1024, 1024, …"]
    w.showMinimized()
    qtbot.waitUntil(lambda: not window_seen(panel), timeout=5000)
    ticks(3)  # the panels skip these ticks
    second = dataclasses.replace(fake_cuda_outcome("y = x @ x"), started_at=time.time())
    w.kernel_link.outcomeReady.emit(second)
    assert marker_texts(panel)[1:] == ["y = x @ x"]
    ticks(3)
    w.showNormal()
    qtbot.waitUntil(lambda: window_seen(panel), timeout=5000)
    ticks(3)
    assert w.gpu_panel(1) is panel and len(lines(panel)) == 2
    (x0, x1), _ = panel.memory_plot.getViewBox().viewRange()
    for line, outcome in zip(lines(panel), (first, second), strict=True):
        assert line.isVisible() and x0 <= line.value() <= x1  # at its time, in the window
        assert line.value() == pytest.approx(outcome.started_at - panel.x_origin_s, abs=1e-6)
