"""200,000 names in the workspace: the kernel sends the first 2,000 rows and the count of the
rest, the table changes by difference, the card lists 20 names and counts the rest, and the
GUI thread keeps running its timers.

The GUI thread's longest stall (50 ms at most) is measured by ``benchmarks/bench_workspace.py``;
the old behaviour stalled it 7.9 s (the whole table rebuilt) to 28 s (a card that listed
every name) after each run, which the table's and the card's sizes here rule out.
"""

from __future__ import annotations

import time

import pytest
from PySide6.QtCore import QTimer

from gpumon.playground.data.actions import RunCode
from gpumon.playground.data.outcome import WORKSPACE_ROWS

MAKE_TENSORS = "for i in range(200000): globals()[f't{i}'] = torch.zeros(1)"
MAKE_INTS = "for i in range(200000): globals()[f'v{i}'] = i"


@pytest.mark.slow
def test_200000_names_never_stall_the_gui_thread(qtbot, make_window) -> None:
    w = make_window(interval_s=0.5)
    w.tabs.setCurrentWidget(w.playground)
    qtbot.waitUntil(lambda: bool(w.kernel_link.device_options), timeout=30000)
    panel = w.playground
    ticks: list[float] = []
    timer = QTimer()
    timer.setInterval(5)
    timer.timeout.connect(lambda: ticks.append(time.monotonic()))
    timer.start()
    events: list[str] = []  # in the order the GUI thread got them
    w.kernel_link.outcomeReady.connect(lambda _outcome: events.append("card"))
    w.kernel_link.workspaceChanged.connect(lambda _page: events.append("page"))

    def page_after_card(n: int) -> bool:  # the workspace page comes after the run's card
        cards = [i for i, e in enumerate(events) if e == "card"]
        return len(cards) >= n and "page" in events[cards[n - 1] + 1:]
    try:
        for n, code in enumerate((MAKE_TENSORS, MAKE_INTS, MAKE_TENSORS), start=1):
            count = panel.log.count()
            panel.submit(RunCode(code))
            qtbot.waitUntil(lambda c=count: panel.log.count() > c, timeout=120000)
            qtbot.waitUntil(lambda: not w.kernel_link.busy, timeout=30000)
            qtbot.waitUntil(lambda n=n: page_after_card(n), timeout=30000)
    finally:
        timer.stop()
    table = panel.workspace_table
    assert table.rowCount() == WORKSPACE_ROWS
    assert table.row_texts()[0] == ("t0", "tensor", "(1,)", "float32", "cpu", "4 B")
    more = panel.workspace_view.more_label
    assert more.isVisible() and more.text() == "… and 198,000 more names"
    made = dict(panel.log.entries()[0].outcome.details)["made or changed"]
    assert made.startswith("i (not a tensor); t0 (cpu)") and len(made) < 1000
    assert made.endswith(("… and 199,980 more names", "… and 199,981 more names"))
    assert len(ticks) > 100
