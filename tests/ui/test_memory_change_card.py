"""What an action cost in memory, in the window (issue 51): on a machine without a GPU, a typed
line that makes a 64 MiB tensor in the playground's kernel (a fresh process) shows +64 MiB of
RSS and its peak on its card, and the same on its marker's tooltip in the CPU view."""

from __future__ import annotations

import re

import pytest
from PySide6.QtCore import Qt

MIB = 2**20
CPU_LINE = re.compile(r"cpu: RSS \+(\d+\.\d\d) MiB, peak \+(\d+\.\d\d) MiB")


def test_a_64_mib_tensor_s_card_and_marker_show_plus_64_mib(qtbot, make_window) -> None:
    from gpumon.telemetry.nvml.source import NvmlSource

    w = make_window(NvmlSource)
    qtbot.waitUntil(lambda: w.latest_snapshot is not None, timeout=5000)
    if w.latest_snapshot.gpus:
        pytest.skip("this machine has GPUs: the playground shows their graphs")
    panel = w.playground
    w.tabs.setCurrentWidget(panel)
    qtbot.waitUntil(lambda: bool(w.kernel_link.device_options), timeout=60000)
    edit = panel.code_bar.edit
    edit.setFocus()
    # the kernel's first line pays one-time costs (imports, first allocations): ~26 MiB here
    for number, line in enumerate(("warm = torch.ones(8) + 1", "x = torch.ones(4096, 4096)"),
                                  start=1):
        qtbot.keyClicks(edit, line)
        qtbot.keyClick(edit, Qt.Key.Key_Return)
        qtbot.waitUntil(lambda n=number: panel.log.count() == n, timeout=60000)
    entry = panel.log.entries()[0]  # newest first
    assert entry.outcome.ok, entry.outcome.error
    card = " ".join(entry.body.text().split())
    found = CPU_LINE.search(card)
    assert found, card
    change, peak = float(found[1]), float(found[2])
    assert 64 <= change < 64.5 and change <= peak < 64.5, found[0]
    assert found[0] in entry.plain_text()  # "Copy entry" says it too
    view = panel.cpu_view
    qtbot.waitUntil(lambda: len(view.markers()) == 2, timeout=5000)
    line = view.markers()[-1]
    assert line.toolTip() == f"x = torch.ones(4096, 4096)\n{found[0]}"
    assert line.label.toolTip() == line.toolTip()  # a hover over the label shows it too
