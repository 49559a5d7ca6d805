"""The Lesson tab, live on the graphs: a step's actions reach the Playground's link and log as
they run, with their memory readings, exactly as the Playground's own actions do.

The first test runs a real step in the real kernel (CPU torch here). The marker test is the
UI plumbing only, NOT a test of CUDA: a kernel 'outcome' message carrying a cuda:0 outcome is
delivered as the client's reader thread would; the real CUDA path is tests/gpu.
"""

from __future__ import annotations

import time

import pyqtgraph as pg
import pytest
from PySide6.QtWidgets import QWidget

from gpumon.device_ids import normalize_uuid
from gpumon.playground.data import actions as act
from gpumon.playground.data.devices import DeviceOption
from gpumon.playground.data.outcome import Outcome
from gpumon.playground.data.wire import Message
from gpumon.playground.lesson.results import StepResult
from gpumon.playground.lesson.steps import LESSON
from gpumon.ui.lesson.page import LessonPage
from gpumon.ui.monitor.panel import GpuPanel
from gpumon.ui.playground.page import PlaygroundPage
from gpumon.ui.playground.style import CONTEXT_LABEL
from gpumon.ui.window.main_window import MainWindow
from gpumon.units import GIB

NUMBER = {step.id: i for i, step in enumerate(LESSON, start=1)}


def playground_tab(w: MainWindow) -> QWidget:
    """What the Playground's tab holds: its placeholder until the page is built."""
    return next(w.tabs.widget(i) for i in range(w.tabs.count())
                if w.tabs.key(i) == "Playground")


def marker_texts(panel: GpuPanel) -> list[str]:
    return [item.label.format for item in panel.memory_plot.items
            if isinstance(item, pg.InfiniteLine) and getattr(item, "label", None) is not None]


@pytest.mark.slow
def test_a_lesson_step_reaches_the_link_and_the_log_as_it_runs(qtbot, make_window):
    w = make_window()
    assert not isinstance(playground_tab(w), PlaygroundPage)
    page = w.lesson
    assert isinstance(page, LessonPage)
    # built with the lesson: its link is what marks the lesson's actions
    assert isinstance(playground_tab(w), PlaygroundPage)
    link = w.playground.link
    seen: list[Outcome] = []
    original = link.on_outcome
    link.on_outcome = lambda outcome: (seen.append(outcome), original(outcome))  # type: ignore[method-assign]
    at_finish: list[int] = []
    page.stepFinished.connect(lambda _result: at_finish.append(len(seen)))
    page.show_step(NUMBER["memory"] - 1)
    with qtbot.waitSignal(page.stepFinished, timeout=120000) as blocker:
        page.run_current()
    result = blocker.args[0]
    assert isinstance(result, StepResult) and result.outcomes
    shown = [*result.outcomes, *result.meta_outcomes]
    assert at_finish == [len(shown)]  # every action was on its way before the step's answer
    assert [o.code for o in seen] == [o.code for o in shown]
    newest_first = w.playground.log.outcomes()[:len(shown)]
    assert [o.code for o in reversed(newest_first)] == [o.code for o in shown]
    made = seen[0]
    assert made.code == "big = torch.ones(4096, 4096, device=device)" and made.ok
    device = made.device
    assert device is not None and made.reading(device) is not None
    if device == "cpu":  # this machine: the playground process's memory, 64 MiB more
        before, after = made.reading("cpu", after=False), made.reading("cpu")
        assert before is not None and after is not None
        assert (after.rss_bytes or 0) - (before.rss_bytes or 0) >= 60 * 2**20


def test_a_lesson_outcome_that_made_the_context_is_marked_so(qtbot, make_window):
    w = make_window()
    qtbot.waitUntil(lambda: w.snapshot_count >= 2, timeout=5000)
    assert w.lesson is not None  # builds the Playground page and its link too
    uuid = w.latest_snapshot.gpus[1].uuid
    w.playground.link.set_device_options([
        DeviceOption("cpu", "cpu — main memory"),
        DeviceOption("cuda:0", "cuda:0 — simulated", normalize_uuid(uuid), 24 * GIB)])
    outcome = Outcome(act.Move("x", "cuda", index=0), "x = x.cuda(0)", True, time.time(),
                      0.01, kind="tensor", device="cuda:0", devices=("cpu", "cuda:0"),
                      contexts_created=("cuda:0",))
    later = Outcome(act.Delete("big"), "del big", True, time.time(), 0.001,
                    devices=("cuda:0",))
    with qtbot.waitSignal(w.kernel_link.outcomeReady, timeout=5000):
        w.kernel_link._deliver(Message("outcome", 9, outcome))  # as the reader thread would
    with qtbot.waitSignal(w.kernel_link.outcomeReady, timeout=5000):
        w.kernel_link._deliver(Message("outcome", 9, later))
    assert marker_texts(w.gpu_panel(1)) == [f"{CONTEXT_LABEL}: x = x.cuda(0)", "del big"]
    assert all(marker_texts(w.gpu_panel(i)) == [] for i in (0, 2, 3))
