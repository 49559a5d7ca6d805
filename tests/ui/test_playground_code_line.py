"""The code line, Stop and the dead-kernel card on the Playground page, with a real kernel."""

from __future__ import annotations

import os
import signal

import pytest
from PySide6.QtCore import Qt

from gpumon.telemetry.procs.procinfo import ProcInfo
from gpumon.ui.playground.code_line import History
from tests.playground.kernel_helpers import touch_line
from tests.qt_fixtures import activate

posix_only = pytest.mark.skipif(os.name != "posix", reason="sends POSIX signals to the kernel")


def test_history_walks_back_and_forward() -> None:
    h = History()
    for line in ("a = 1", "b = 2", "b = 2", "  "):
        h.add(line)
    assert h.items == ["a = 1", "b = 2"]
    assert [h.back(), h.back(), h.back()] == ["b = 2", "a = 1", None]
    assert [h.forward(), h.forward(), h.forward()] == ["b = 2", "", None]




def _page(qtbot, make_window, wait_for_torch: bool = True):
    w = make_window(interval_s=0.1)
    activate(qtbot, w)
    qtbot.keyClick(w, Qt.Key.Key_2, Qt.KeyboardModifier.ControlModifier)
    panel = w.playground
    assert w.tabs.currentWidget() is panel
    qtbot.waitUntil(lambda: panel.code_bar.edit.hasFocus(), timeout=5000)
    if wait_for_torch:
        qtbot.waitUntil(lambda: bool(w.kernel_link.device_options), timeout=60000)
    return w, panel


def _type(qtbot, panel, text: str) -> None:
    edit = panel.code_bar.edit
    for i, line in enumerate(text.split("\n")):
        if i:
            qtbot.keyClick(edit, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
        qtbot.keyClicks(edit, line)
    qtbot.keyClick(edit, Qt.Key.Key_Return)


def test_code_line_outcome_workspace_marker_and_history(qtbot, make_window) -> None:
    w, panel = _page(qtbot, make_window)
    _type(qtbot, panel, "x = torch.ones(2, 3)\ny = x ** 2")
    qtbot.waitUntil(lambda: panel.log.count() == 1, timeout=30000)
    outcome = panel.log.outcomes()[0]
    assert outcome.ok and outcome.code == "x = torch.ones(2, 3)\ny = x ** 2"
    assert outcome.result_name == "y" and outcome.device == "cpu"
    assert dict(outcome.details)["made or changed"] == "x (cpu); y (cpu)"
    assert outcome.memory_before and outcome.memory_after
    qtbot.waitUntil(lambda: [e.name for e in panel.workspace_table.entries] == ["x", "y"],
                    timeout=5000)
    assert any(m.text.startswith("x = torch.ones") for m in panel.link.markers) or \
        not panel.link.used  # markers go on GPU graphs; this machine may have no CUDA
    assert panel.code_bar.edit.toPlainText() == ""
    qtbot.keyClick(panel.code_bar.edit, Qt.Key.Key_Up)
    assert panel.code_bar.edit.toPlainText() == "x = torch.ones(2, 3)\ny = x ** 2"
    activate(qtbot, w)  # Ctrl+3 is a window shortcut too
    qtbot.keyClick(w, Qt.Key.Key_3, Qt.KeyboardModifier.ControlModifier)
    # the Lesson page is built once the frame that answers the key is painted
    qtbot.waitUntil(lambda: w.tabs.is_built("Lesson"), timeout=10000)
    assert w.tabs.currentWidget() is w.lesson
    qtbot.keyClick(w, Qt.Key.Key_1, Qt.KeyboardModifier.ControlModifier)
    assert w.tabs.tabText(w.tabs.currentIndex()) == "Monitor"


def test_esc_interrupts_a_running_loop_and_the_workspace_stays(qtbot, make_window,
                                                               tmp_path) -> None:
    w, panel = _page(qtbot, make_window)
    _type(qtbot, panel, "keep = torch.ones(1)")
    qtbot.waitUntil(lambda: panel.log.count() == 1, timeout=30000)
    mark = tmp_path / "looping"
    _type(qtbot, panel, touch_line(mark) + "while True:\n    pass")
    qtbot.waitUntil(lambda: panel.code_bar.stop_button.isEnabled(), timeout=5000)
    qtbot.waitUntil(mark.exists, timeout=30000)  # the loop runs now
    activate(qtbot, w)
    qtbot.keyClick(panel.code_bar.edit, Qt.Key.Key_Escape)
    assert panel.busy_label.text().startswith("stopping"), "Esc did not reach Stop"
    qtbot.waitUntil(lambda: panel.log.count() == 2, timeout=10000)
    card = panel.log.outcomes()[0]
    assert card.error is not None and card.error.type_name == "KeyboardInterrupt"
    assert "workspace are kept" in card.error.explanation
    assert [e.name for e in panel.workspace_table.entries] == ["keep"]


@pytest.mark.slow
@posix_only
def test_sigkill_during_an_action_shows_a_card_and_the_next_action_works(
        qtbot, make_window, tmp_path) -> None:
    w, panel = _page(qtbot, make_window)
    _type(qtbot, panel, "a = torch.zeros(3)")
    qtbot.waitUntil(lambda: panel.log.count() == 1, timeout=30000)
    pid = w.kernel_link.kernel_pid
    assert pid is not None and pid != os.getpid()
    assert ProcInfo(pid).is_self  # NVML's "this process" line is the kernel's
    mark = tmp_path / "sleeping"
    _type(qtbot, panel, touch_line(mark) + "import time\ntime.sleep(10)")
    qtbot.waitUntil(lambda: panel.code_bar.stop_button.isEnabled(), timeout=5000)
    qtbot.waitUntil(mark.exists, timeout=30000)  # the sleep runs now
    snapshots = w.snapshot_count
    os.kill(pid, signal.SIGKILL)
    qtbot.waitUntil(lambda: panel.log.count() == 2, timeout=10000)  # one card: the action's
    texts = [e.plain_text() for e in panel.log.entries()[:1]]
    assert any("SIGKILL" in t and "(a) is gone" in t for t in texts), texts
    assert panel.workspace_table.entries == []
    qtbot.waitUntil(lambda: w.snapshot_count > snapshots + 2, timeout=5000)  # never paused
    _type(qtbot, panel, "torch.ones(2).sum()")
    qtbot.waitUntil(lambda: panel.log.count() == 3, timeout=30000)
    assert panel.log.outcomes()[0].ok and panel.log.outcomes()[0].preview == "tensor(2.)"
    assert w.kernel_link.kernel_pid not in (None, pid)
    assert ProcInfo(w.kernel_link.kernel_pid).is_self and not ProcInfo(pid).is_self


@pytest.mark.slow
@posix_only
@pytest.mark.usefixtures("kernels_import_torch")  # a fresh start, with its import
def test_esc_while_the_kernel_is_still_starting_restarts_it_and_the_log_says_so(
        qtbot, make_window, monkeypatch, tmp_path) -> None:
    """The first action typed while the fresh kernel still starts: Esc is not swallowed. The
    kernel's start is slowed by 2 s (a wrapper around the interpreter) so Esc surely lands
    in it, as it does on a slow machine while torch imports."""
    import functools
    import sys

    from gpumon.playground.client.kernel_client import KernelClient

    slow = tmp_path / "slow-python"
    slow.write_text(f'#!/bin/sh\nsleep 2\nexec "{sys.executable}" "$@"\n')
    slow.chmod(0o755)
    monkeypatch.setattr("gpumon.ui.playground.kernel_link.KernelClient",
                        functools.partial(KernelClient, python=str(slow)))
    w, panel = _page(qtbot, make_window, wait_for_torch=False)  # shown: the warm-up starts
    qtbot.waitUntil(lambda: w.kernel_link.loading, timeout=3000)  # after the page's first frame
    _type(qtbot, panel, "import time\ntime.sleep(30)")
    activate(qtbot, w)
    qtbot.keyClick(panel.code_bar.edit, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: panel.log.count() >= 2, timeout=10000)
    texts = [e.plain_text() for e in panel.log.entries()]
    assert any("still starting" in t and "killed and restarted" in t for t in texts), texts
    assert any("time.sleep(30)" in t for t in texts)  # the stopped code has its own card
    assert "restarted" in panel.busy_label.text() or w.kernel_link.loading
    _type(qtbot, panel, "torch.ones(2).sum()")
    qtbot.waitUntil(lambda: panel.log.count() == len(texts) + 1, timeout=60000)
    assert panel.log.outcomes()[0].ok and panel.log.outcomes()[0].preview == "tensor(2.)"


def test_what_typed_code_prints_is_on_its_card(qtbot, make_window) -> None:
    w, panel = _page(qtbot, make_window)
    _type(qtbot, panel, "for i in range(20):\n    print('line', i)")
    qtbot.waitUntil(lambda: panel.log.count() == 1, timeout=30000)
    entry = panel.log.entries()[0]
    assert entry.outcome.output.splitlines() == [f"line {i}" for i in range(20)]
    shown = entry.body.text()
    assert "printed:" in shown
    assert "line 11" in shown and "line 12" not in shown and "8 more lines" in shown
    assert "line 19" in entry.plain_text()  # Copy entry has all of it


def test_a_form_s_code_can_be_sent_to_the_code_line_to_edit(qtbot, make_window) -> None:
    w = make_window(interval_s=0.5)
    panel = w.playground
    w.tabs.setCurrentWidget(panel)
    sent = []
    for button in panel.forms.buttons:
        (edit,) = [a for a in button.actions() if a.text() == "Edit as code"]
        edit.trigger()
        sent.append(panel.code_bar.edit.toPlainText())
    assert len(sent) == len(panel.forms.buttons) and all(sent)
    assert any(code.startswith("torch.cuda.is_available()") for code in sent), sent
    assert panel.log.count() == 0  # edited, not run
