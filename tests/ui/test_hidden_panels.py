"""A GPU panel that no one sees is not touched on a tick (no readout text, no tooltip, no
paint), while sampling and the History go on; shown again, it has the latest readouts and its
curves reach "now", drawn from the History."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QApplication, QTabWidget, QWidget
from qt_fixtures import first_curve, hidden_or_minimised, shown_tip

from gpumon.telemetry.history.store import History, capacity_for
from gpumon.telemetry.sources.sampler import Sampler
from gpumon.telemetry.sources.simulated import SimulatedSource
from gpumon.ui.monitor.grid import GpuGrid
from gpumon.ui.monitor.panel_labels import memory_runs, util_runs
from gpumon.ui.widgets.runs_label import RunsLabel
from tests.qt_fixtures import back_in_sight, out_of_sight

WINDOW_S = 300.0


class Touches(QObject):
    """Counts the paints and tooltip changes of ``root``'s widgets, application-wide."""

    KINDS = (QEvent.Type.Paint, QEvent.Type.ToolTipChange, QEvent.Type.LayoutRequest)

    def __init__(self, root: QWidget) -> None:
        super().__init__()
        self.root = root
        self.events: list[tuple[str, str]] = []

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if event.type() in self.KINDS and isinstance(obj, QWidget) and \
                self.root.isAncestorOf(obj):
            self.events.append((event.type().name, obj.objectName()))
        return False


def _fed_grid(qtbot, n_gpus: int = 2):
    """A grid on the first of two tabs, fed by a simulated source on a fake clock."""
    clock = [1_700_000_000.0]
    source = SimulatedSource(n_gpus, seed=0, clock=lambda: clock[0])
    sampler = Sampler(source, clock=lambda: clock[0], wall_clock=lambda: clock[0])
    sampler.open()
    history = History(capacity_for(WINDOW_S, 1.0))
    tabs = QTabWidget()
    qtbot.addWidget(tabs)
    grid = GpuGrid()
    tabs.addTab(grid, "graphs")
    tabs.addTab(QWidget(), "other")
    tabs.resize(900, 700)
    tabs.show()
    qtbot.waitExposed(tabs)
    snaps = []

    def tick() -> None:
        clock[0] += 1.0
        snap = sampler.tick()
        history.append(snap)
        grid.set_gpus(snap.gpus, WINDOW_S)
        grid.update_view(snap, history, WINDOW_S)
        snaps.append(snap)

    return tabs, grid, tick, sampler, history, snaps


@pytest.mark.parametrize("how", ["tab", "minimised"])
def test_a_hidden_panel_gets_no_update_and_catches_up_when_shown(qtbot, monkeypatch, how) -> None:
    set_runs: list[RunsLabel] = []
    original = RunsLabel.set_runs

    def counting(self, runs, *forms):
        set_runs.append(self)
        original(self, runs, *forms)

    monkeypatch.setattr(RunsLabel, "set_runs", counting)
    tabs, grid, tick, sampler, history, snaps = _fed_grid(qtbot)
    for _ in range(20):
        tick()
        qtbot.wait(1)  # a turn of the event loop between ticks, as the sampler's timer gives
    panel = grid.panels[0]
    assert set_runs and panel.util_label.text()  # on screen: updated every tick
    out_of_sight(tabs, how)
    qtbot.waitUntil(lambda: hidden_or_minimised(panel), timeout=3000)
    assert panel.isVisible() or how == "tab"  # minimised: Qt still calls it visible
    shown_text = panel.util_label.text(), panel.mem_label.text(), shown_tip(panel.title)
    touches = Touches(grid)
    QApplication.instance().installEventFilter(touches)
    set_runs.clear()
    newest_drawn = panel.x_origin_s  # the time of the newest sample drawn
    try:
        for _ in range(30):
            tick()
            qtbot.wait(5)  # not awaiting: posted events (a paint, a layout request) would arrive
    finally:
        QApplication.instance().removeEventFilter(touches)
    assert set_runs == [] and touches.events == []  # 30 ticks, not touched
    assert (panel.util_label.text(), panel.mem_label.text(),
            shown_tip(panel.title)) == shown_text
    assert len(history.series(0, "mem_used_bytes")[0]) == 50  # sampling went on

    back_in_sight(tabs, how)
    qtbot.waitUntil(lambda: panel.x_origin_s != newest_drawn, timeout=3000)
    latest = snaps[-1].sample_for(0)
    for p in grid.panels:  # every panel shows the latest readings ...
        sample = snaps[-1].sample_for(p.index)
        assert p.util_label.text() == "".join(r.text for r in util_runs(sample))
        assert p.mem_label.text() == "".join(r.text for r in memory_runs(sample))
    # ... and its curves reach "now", with the 30 hidden ticks in them.
    assert first_curve(panel.memory_widget).xData[-1] == 0.0
    assert latest is not None
    assert first_curve(panel.memory_widget).yData[-1] * (1 << 30) == latest.mem_used_bytes
    assert len(first_curve(panel.memory_widget).xData) >= 40  # 50 samples, a block a pixel
    sampler.close()
