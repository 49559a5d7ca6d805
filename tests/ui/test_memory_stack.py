"""Memory by process on the GPU panels: the option in View and in the memory graph's context
menu, remembered; the bands drawn from the History (so from before the option was turned
on, at any time window), adding up to used memory; process names escaped and cut in the
legend; a process keeps its colour. Screenshots go where GPUMON_SHOTS points, to look at."""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from testkit import STATUS_OK, TEST_MACHINE

from gpumon.telemetry.history.store import History
from gpumon.telemetry.model.types import (
    GpuInfo,
    GpuProcess,
    GpuSample,
    ProcessType,
    Snapshot,
)
from gpumon.telemetry.sources.simulated import SimulatedSource
from gpumon.ui.monitor.memory_stack import NAME_CHARS, PanelStack
from gpumon.ui.monitor.panel import GpuPanel
from gpumon.ui.window.main_window import MainWindow
from gpumon.ui.window.settings import Settings
from gpumon.units import GIB

pytestmark = pytest.mark.usefixtures("restore_app_look")
MIB = 1024**2
WAIT_MS = 5000


def prefilled(seconds: int, n_gpus: int = 2, seed: int = 2
              ) -> tuple[Callable[[], SimulatedSource], list[Snapshot]]:
    """A simulated source and its snapshots of the last ``seconds`` (one a second); the
    source then goes on in real time from where they end."""
    now = time.time()
    fake: list[float | None] = [now - seconds]
    src = SimulatedSource(n_gpus, seed=seed,
                          clock=lambda: fake[0] if fake[0] is not None else time.time())
    src.open()
    snaps = []
    for i in range(seconds):
        fake[0] = now - seconds + i
        snaps.append(src.sample())
    fake[0] = None
    return (lambda: src), snaps


def open_window(qtbot, settings: Settings, seconds: int = 240,
                ) -> MainWindow:
    factory, snaps = prefilled(seconds)
    w = MainWindow(factory, 1.0, window_s=300, settings=settings)
    qtbot.addWidget(w)
    w.resize(1400, 900)
    for snap in snaps:  # the History of the last minutes, as if the window had been open
        w.sampling.snapshot.emit(snap)
    w.show()
    qtbot.waitUntil(lambda: w.snapshot_count > seconds, timeout=WAIT_MS)
    return w


def legend_texts(stack: PanelStack) -> list[str]:
    return [label.text for _, label in stack.legend.items]


def shot(widget: object, name: str) -> None:
    where = os.environ.get("GPUMON_SHOTS")
    if where:
        widget.grab().save(str(Path(where) / name))  # type: ignore[attr-defined]


def test_the_option_draws_bands_that_add_up_to_used_and_is_remembered(
        qtbot, tmp_path: Path) -> None:
    w = open_window(qtbot, Settings.ini(tmp_path / "gpumon.ini"))
    action = w.menus.actions["actionMemoryByProcess"]
    panel = w.gpu_panel(0)
    assert panel is not None and not action.isChecked() and panel.stack is None
    assert action in panel.memory_widget.actions()  # in the memory graph's context menu
    action.trigger()
    stack = w.menus.memory_stacks.stacks[0]
    assert panel.stack is stack
    # drawn at once from the History: four minutes from before the option was turned on
    top = stack.curves[len(stack.keys) - 1].getData()
    t, used = w.history.series(0, "mem_used_bytes")
    assert top[0][0] <= t[0] - w.history.latest_time() + 1.0
    assert math.isclose(top[1][-1], used[-1] / GIB, rel_tol=1e-9)
    texts = legend_texts(stack)
    assert texts[-1] == "unattributed"
    assert any(text.endswith(f"({p.pid})") for p in w.history.processes(0) for text in texts)
    shot(panel, "stack-panel-en-100.png")
    w.close()

    again = Settings.ini(tmp_path / "gpumon.ini")
    assert again.memory_by_process
    w2 = open_window(qtbot, again, seconds=30)
    assert w2.menus.actions["actionMemoryByProcess"].isChecked()
    assert all(p.stack is not None for p in w2.gpu_grid.panels)
    stack2 = w2.menus.memory_stacks.stacks[0]
    # drawn from the History once the window is exposed (not before: no one would see it)
    qtbot.waitUntil(lambda: len(w2.gpu_panel(0).memory_plot.listDataItems()) > 1,  # type: ignore[union-attr]
                    timeout=WAIT_MS)
    w2.menus.actions["actionMemoryByProcess"].trigger()  # off: the bands go
    panel2 = w2.gpu_panel(0)
    assert panel2 is not None and panel2.stack is None and not again.memory_by_process
    assert len(panel2.memory_plot.listDataItems()) == 1  # the panel's own "used" curve
    assert stack2.legend.scene() is None
    w2.close()


def _panel(qtbot) -> tuple[GpuPanel, History]:
    panel = GpuPanel(GpuInfo(index=0, name="Test GPU", uuid="GPU-0", pci_bus_id="0000:01:00.0",
                             mem_total_bytes=16 * GIB), window_s=60)
    qtbot.addWidget(panel)
    panel.resize(600, 300)
    panel.show()
    return panel, History(capacity=200)


def _tick(panel: GpuPanel, history: History, t: float, used_mib: int,
          *procs: GpuProcess) -> None:
    sample = GpuSample(0, t, mem_used_bytes=used_mib * MIB, mem_total_bytes=16 * GIB)
    history.append(Snapshot(t, TEST_MACHINE, STATUS_OK, samples=(sample,), processes=procs))
    panel.update_view(sample, t, lambda g, k: history.series(g, k, since=t - 60))


def test_names_are_escaped_and_cut_and_colours_stay_with_their_process(qtbot) -> None:
    panel, history = _panel(qtbot)
    stack = PanelStack(panel, history)
    panel.stack = stack
    hostile = "\x1b]0;owned\x07<b>x</b>" + "A" * 60
    a = GpuProcess(0, 11, ProcessType.COMPUTE, 1000 * MIB, name=hostile)
    b = GpuProcess(0, 22, ProcessType.COMPUTE, 500 * MIB, name="python")
    for i in range(10):
        _tick(panel, history, 100.0 + i, 2000, a, b)
    texts = legend_texts(stack)
    name = next(t for t in texts if t.endswith("(11)"))
    assert "\x1b" not in name and "\\x1b" in name and "<b>" not in name and "&lt;b&gt;" in name
    assert len(name.replace("&lt;", "<").replace("&gt;", ">")) <= NAME_CHARS + len(" (11)")
    colours = dict(stack.colors)
    bigger = GpuProcess(0, 22, ProcessType.COMPUTE, 1500 * MIB, name="python")
    for i in range(10, 20):  # 22 now peaks higher: it moves to the bottom band
        _tick(panel, history, 100.0 + i, 3000, a, bigger)
    assert stack.keys[0].startswith("pid:22:")
    assert stack.colors == colours  # each process kept its colour
    assert stack.curves[0].opts["pen"].color().name() == colours[stack.keys[0]]
    tops = [c.getData()[1][-1] for c in stack.curves[:3]]
    assert tops == [1500 / 1024, 2500 / 1024, 3000 / 1024]  # 22, then 11, then the rest


def test_bands_follow_the_time_window(qtbot) -> None:
    panel, history = _panel(qtbot)
    panel.stack = PanelStack(panel, history)
    p = GpuProcess(0, 5, ProcessType.COMPUTE, 300 * MIB, name="job")
    for i in range(150):
        _tick(panel, history, float(i), 1000, p)
    x = panel.stack.curves[0].getData()[0]  # type: ignore[union-attr]
    assert -60.5 <= x[0] <= -59
    panel.set_window(120)
    sample = GpuSample(0, 149.0, mem_used_bytes=1000 * MIB, mem_total_bytes=16 * GIB)
    panel.update_view(sample, 149.0, lambda g, k: history.series(g, k, since=149.0 - 120))
    x = panel.stack.curves[0].getData()[0]  # type: ignore[union-attr]
    assert -120.5 <= x[0] <= -119


def test_a_source_without_process_memory_says_so(qtbot) -> None:
    panel, history = _panel(qtbot)
    stack = PanelStack(panel, history)
    panel.stack = stack
    for i in range(5):
        _tick(panel, history, float(i), 1000)
    assert legend_texts(stack) == ["used (no memory by process reported)"]
    y = stack.curves[0].getData()[1]
    assert np.allclose(y, 1000 / 1024)



@pytest.mark.parametrize(("lang", "zoom"), [("en", 1.0), ("en", 2.0), ("zh", 1.0),
                                            ("zh", 2.0)])
def test_memory_by_process_in_english_and_chinese_at_100_and_200(
        qtbot, request: pytest.FixtureRequest, tmp_path: Path, lang: str, zoom: float) -> None:
    if lang == "zh":
        request.getfixturevalue("chinese")
    settings = Settings.ini(tmp_path / "gpumon.ini")
    settings.memory_by_process = True
    w = open_window(qtbot, settings)
    w.presentation.set_zoom(zoom)
    action = w.menus.actions["actionMemoryByProcess"]
    assert action.text() == {"en": "Memory by &process", "zh": "按进程显示显存(&P)"}[lang]
    stack = w.menus.memory_stacks.stacks[0]

    def label_pt() -> float:  # 0 until the legend has its first entry
        items = stack.legend.items
        return float(items[0][1].opts["size"].removesuffix("pt")) if items else 0.0

    qtbot.waitUntil(lambda: label_pt() > 6.0 * zoom, timeout=WAIT_MS)  # follows the zoom
    unattributed = {"en": "unattributed", "zh": "未归属任何进程"}[lang]
    assert unattributed in legend_texts(stack) or zoom > 1  # a short graph: the largest
    panel = w.gpu_panel(0)
    assert panel is not None
    shot(panel, f"stack-panel-{lang}-{int(zoom * 100)}.png")
    table = w.process_table
    kept = {(g, e.pid): int(np.isfinite(w.history.process_series(
                g, e.pid, "gpu_mem_bytes")[1]).sum())
            for g in w.history.gpu_indices() for e in w.history.processes(g)}
    rows = [(kept.get((int(table.proxy.index(r, 0).data()),
                       int(table.proxy.index(r, 1).data())), 0), r)
            for r in range(table.proxy.rowCount())
            if table.proxy.index(r, 3).data() != "Xorg"]  # one with host readings
    points, row = max(rows)
    view = w.open_process_view(table.proxy.index(row, 0))  # its trace filled from the history
    gpu = int(table.proxy.index(row, 0).data())
    assert points > 10 and len(view.trace.gpu_mem[gpu]) >= points  # from before it opened
    shot(view, f"process-view-{lang}-{int(zoom * 100)}.png")
    view.close()
    w.close()
