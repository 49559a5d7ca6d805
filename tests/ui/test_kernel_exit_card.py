"""``os._exit(3)`` typed in the code line ends the kernel: the log has one card for it, the
action's, saying the kernel exited with code 3 (it had two: the action's and the kernel's
own, saying the same)."""

from __future__ import annotations

import pytest

from gpumon.playground.data import actions as act


@pytest.mark.slow  # a real kernel, ended and started again
def test_os_exit_under_an_action_is_one_card(qtbot, make_window) -> None:
    w = make_window()
    panel, engine = w.playground, w.kernel_link
    panel.submit(act.RunCode("x = torch.ones(3)"))
    qtbot.waitUntil(lambda: panel.log.count() == 1, timeout=60000)
    pid = engine.kernel_pid
    panel.submit(act.RunCode("import os; os._exit(3)"))
    qtbot.waitUntil(lambda: any(e.outcome.error is not None for e in panel.log.entries()),
                    timeout=30000)
    qtbot.wait(500)  # not awaiting: a second card, if one came, would have come by now
    cards = [e.outcome for e in panel.log.entries() if e.outcome.error is not None]
    assert [(o.code, o.error.type_name) for o in cards] == [
        ("import os; os._exit(3)", "KernelDied")]
    assert cards[0].error.message == f"The playground kernel (pid {pid}) exited with code 3."
    assert "The workspace (x) is gone." in cards[0].error.explanation
    panel.submit(act.RunCode("y = 2"))  # the next action starts a fresh kernel
    qtbot.waitUntil(lambda: panel.log.count() == 3, timeout=60000)
    assert panel.log.entries()[0].outcome.ok and engine.kernel_pid not in (None, pid)
