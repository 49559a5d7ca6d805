"""Every state ends: a kernel killed while it imports torch leaves no "Loading PyTorch…"
behind, on the Playground's status line or on the Lesson page; the status says the kernel
died, the log has its card, and the next action starts a fresh kernel that loads torch."""

from __future__ import annotations

import os
import signal

import pytest

from gpumon.playground.data import actions as act

pytestmark = [pytest.mark.skipif(os.name != "posix", reason="sends SIGKILL to the kernel"),
              pytest.mark.usefixtures("kernels_import_torch")]  # killed while it imports


@pytest.mark.slow
def test_a_kernel_killed_while_torch_loads_ends_the_loading_state(qtbot, make_window) -> None:
    w = make_window()
    lesson = w.lesson
    panel = w.playground
    engine = w.kernel_link
    engine.load()
    qtbot.waitUntil(lambda: engine.kernel_pid is not None, timeout=30000)
    assert engine.loading and engine.load_status is None  # the kernel is importing torch
    assert "loading PyTorch" in panel.status_label.text()
    assert "Loading PyTorch" in lesson.busy_label.text()
    pid = engine.kernel_pid
    os.kill(pid, signal.SIGKILL)

    qtbot.waitUntil(lambda: "did not finish loading" in panel.status_label.text(), timeout=20000)
    status = panel.status_label.text()
    assert f"(pid {pid}) was killed by SIGKILL" in status and "next action" in status
    assert lesson.busy_label.text() == status and lesson.busy_bar.isHidden()
    assert not engine.loading and not engine.busy and panel.busy_bar.isHidden()
    cards = [e.outcome.error for e in panel.log.entries()]
    assert [c.type_name for c in cards if c is not None] == ["KernelDied"]

    panel.submit(act.CreateTensor("x", "[1, 2, 3]"))  # the next action: a fresh kernel
    qtbot.waitUntil(lambda: panel.log.count() == 2, timeout=60000)
    assert panel.log.entries()[0].outcome.ok
    assert engine.load_status is not None and engine.load_status.ok
    assert engine.kernel_pid not in (None, pid)
    assert "PyTorch" in panel.status_label.text() and "did not" not in panel.status_label.text()
