"""The header keeps the words "Host" and "Driver" at every zoom (issue 54, item 4): at 300 %
in a 1400 px window the driver stack alone is wider than the header's line, and the line
dropped the two words. Now "CUDA … · NVML …" goes to a second line, and nothing is cut."""

from __future__ import annotations

import pytest
from qt_fixtures import settled, zoomed_window
from testkit import STATUS_OK

from gpumon.telemetry.model.types import MachineInfo
from gpumon.ui.monitor.header import HeaderBar, wraps

pytestmark = pytest.mark.usefixtures("restore_app_look")


def test_wraps_only_where_the_line_has_no_room() -> None:
    assert not wraps(100, 80, 40, 10, 230)
    assert wraps(100, 80, 40, 10, 229)
    assert not wraps(100, 80, 0, 10, 180)  # no status: no gap for it
    assert not wraps(100, 0, 40, 10, 50)  # nothing to move


@pytest.mark.parametrize("zoom", (1.0, 2.0, 3.0))
def test_host_and_driver_kept_at_every_zoom(qtbot, zoom: float) -> None:
    w = zoomed_window(qtbot, zoom)
    header = w.header
    lines = settled(header.shown_lines)
    text = " ".join(lines)
    machine = w.latest_snapshot.machine
    for words in (f"Host {machine.host_name}", f"Driver {machine.driver_version}",
                  f"CUDA {machine.cuda_driver_version}", f"NVML {machine.nvml_version}"):
        assert words in text, (zoom, lines)
    for label in (header.machine_label, header.stack_label):
        assert label.isHidden() or not label.is_elided(), (zoom, label.shown_text())
    assert len(lines) == (2 if zoom == 3.0 else 1), (zoom, lines)  # one line while it fits


def test_a_narrow_header_cuts_rather_than_drops(qtbot) -> None:
    header = HeaderBar()
    qtbot.addWidget(header)
    header.show_machine(MachineInfo("node-07", "NVML", driver_version="550.54.15",
                                    cuda_driver_version="12.4", nvml_version="12.550.54.15"),
                        STATUS_OK, simulated=False)
    header.resize(900, 60)
    header.show()
    wide = settled(header.shown_lines)
    assert wide == [wide[0]] and "Host node-07 · Driver 550.54.15 · CUDA 12.4" in wide[0]
    header.resize(330, 60)
    narrow = settled(header.shown_lines)
    assert len(narrow) == 2 and narrow[0].startswith("Host node-07")
    assert narrow[1] == "CUDA 12.4 · NVML 12.550.54.15"


def test_a_narrow_window_keeps_its_tabs_whole_and_cuts_the_stack(qtbot) -> None:
    """Where the tab row has no room for the whole stack (a 1000 px window at 300 %), the
    stack is cut with "…" and the tabs keep their room (they scrolled behind arrows)."""
    w = zoomed_window(qtbot, 3.0, gpus=2, size=(1000, 800))
    bar = w.tabs.tabBar()
    tabs = settled(lambda: [bar.tabRect(i) for i in range(bar.count())])
    assert all(bar.rect().contains(rect) for rect in tabs), (tabs, bar.size())
    stack = w.header.stack_label
    assert stack.isVisible() and stack.text().startswith("CUDA ")
    assert stack.is_elided() and stack.text() in stack.tooltip_text()
