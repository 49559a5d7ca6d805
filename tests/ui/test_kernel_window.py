"""The window and its playground kernel, each in a fresh process: torch stays out of the
window, and quitting during a long operation is quick, clean and leaves no kernel behind."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import psutil
import pytest

from gpumon.playground.lesson.steps import LESSON
from tests.playground.kernel_helpers import touch_line

# Windows and kernels in subprocesses, the whole lesson: tens of seconds (docs/development.md).
pytestmark = pytest.mark.slow

PRELUDE = """
import os, sys, time
os.environ["QT_QPA_PLATFORM"] = "offscreen"
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
from gpumon.playground.data import actions as act
from gpumon.playground.data.actions import RunCode
from gpumon.ui.window.main_window import MainWindow, simulated_factory
app = QApplication([])
w = MainWindow(simulated_factory(2), 0.1)
w.show()

def wait(cond, seconds=60.0):
    deadline = time.monotonic() + seconds
    while not cond() and time.monotonic() < deadline:
        app.processEvents()
        time.sleep(0.01)
    assert cond(), "timed out"
"""


def _python(code: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", PRELUDE + textwrap.dedent(code)],
                          capture_output=True, text=True, timeout=timeout)


def test_torch_is_never_imported_by_the_window_in_a_playground_and_lesson_session() -> None:
    proc = _python("""
        done = []
        w.kernel_link.outcomeReady.connect(done.append)
        w.tabs.setCurrentWidget(w.playground)
        w.playground.submit(act.CreateTensor("x", "[1, 2, 3]"))
        w.playground.submit(RunCode("y = x * 2\\nnet = nn.Linear(3, 1)"))
        wait(lambda: len(done) == 2)
        assert all(o.ok for o in done), [o.error for o in done]
        page = w.lesson
        w.tabs.setCurrentWidget(page)
        results = []
        page.stepFinished.connect(results.append)
        for number in range(len(page.steps)):
            page.show_step(number)
            page.run_current()
            wait(lambda: len(results) == number + 1)
        import json
        print("lesson", json.dumps([{
            "number": r.number, "id": r.step.id, "ran": r.ran, "note": r.note,
            "smi_text": r.smi_text, "cuda_devices": r.cuda_devices, "shows_gpu": r.shows_gpu,
            "outcomes": [(o.code, o.ok, o.error and (o.error.type_name, o.error.by_torch))
                         for o in r.outcomes]} for r in results]))
        print("devices", json.dumps([d.name for d in w.kernel_link.device_options]))
        print("kernel", w.kernel_link.kernel_pid, "window", os.getpid())
        print("torch in window:", "torch" in sys.modules)
        w.close()
    """)
    assert proc.returncode == 0, proc.stderr
    lesson_line, devices_line, kernel_line, torch_line = proc.stdout.splitlines()[-4:]
    _, kernel, _, window = kernel_line.split()
    assert kernel != "None" and kernel != window
    assert torch_line == "torch in window: False"
    _check_lesson(json.loads(lesson_line.removeprefix("lesson ")),
                  json.loads(devices_line.removeprefix("devices ")))


# Lines of steps without needs_cuda that fail where torch has no CUDA device (test_lesson.py).
NEED_A_GPU = {"torch.cuda.current_device()", "torch.cuda.get_device_name(0)",
              "torch.load(SAVED_ON_CUDA)",
              "w.numpy()"}  # not for want of a GPU: w requires grad, which fails everywhere


def _check_lesson(results: list[dict[str, Any]], devices: list[str]) -> None:
    """Every step ran in order in the kernel, each outcome is its action's, only torch's
    own errors failed (none on a line that runs anywhere), on the devices the kernel has."""
    assert [(r["number"], r["id"]) for r in results] == \
        [(n, s.id) for n, s in enumerate(LESSON, start=1)]
    assert devices[0] == "cpu"
    cuda = sum(d.startswith("cuda:") for d in devices)
    first_cuda_error = None
    for r, step in zip(results, LESSON, strict=True):
        actions = step.actions_for(cuda)  # without a GPU less its GPU-only lines; one GPU's
        too_few = cuda < step.min_gpus and actions is step.actions  # exercise 4 without one
        assert r["ran"] == (not too_few), r
        outcomes = r["outcomes"]
        if step.kind == "smi":  # the window's simulated GPUs, as nvidia-smi would print them
            assert r["smi_text"] and "GPU" in r["smi_text"] and "simulated" in r["note"], r
            continue
        if step.kind == "glossary":
            assert outcomes == [], r
            continue
        assert r["cuda_devices"] == cuda, r
        assert [code for code, _, _ in outcomes] == \
            [a.code() for a in actions][:len(outcomes)], r
        for code, ok, error in outcomes:
            assert ok == (error is None), (step.id, code, error)
            assert ok or error[1], (step.id, code, error)  # torch's error, never gpumon's
        failed = [code for code, ok, _ in outcomes if not ok]
        if too_few:  # exercise 4 without a GPU: not run, and said why
            assert outcomes == [] and not r["ran"] and r["shows_gpu"], r
        elif cuda == 0 and not step.needs_cuda:
            assert len(outcomes) == len(actions), r
            assert set(failed) <= NEED_A_GPU, (step.id, failed)
        elif cuda == 0 and first_cuda_error is None:  # torch's error, once
            assert failed and r["shows_gpu"], r  # the error, then what a GPU shows
            first_cuda_error = step.id
        elif cuda == 0:  # then what a GPU shows, not run
            assert outcomes == [] and r["shows_gpu"], r
        elif not step.needs_two_gpus or cuda >= 2:
            assert len(outcomes) == len(actions), r
    assert cuda > 0 or first_cuda_error == "to-gpu"


def test_quit_during_a_10_s_operation_exits_0_within_3_s_and_leaves_no_kernel(
        tmp_path: Path) -> None:
    mark = tmp_path / "sleeping"  # the code creates it: the sleep runs in the kernel now
    script = PRELUDE + textwrap.dedent(f"""
        w.tabs.setCurrentWidget(w.playground)
        w.playground.submit(RunCode({touch_line(mark)!r} + "import time\\ntime.sleep(10)"))
        wait(lambda: w.kernel_link.kernel_pid is not None and os.path.exists({str(mark)!r}))
        print("kernel", w.kernel_link.kernel_pid, flush=True)
        print("closing", time.monotonic(), flush=True)
        QTimer.singleShot(0, w.close)
        QTimer.singleShot(0, app.quit)
        app.exec()
    """)
    with subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        kernel_pid = int(proc.stdout.readline().split()[1])
        closing = float(proc.stdout.readline().split()[1])
        code = proc.wait(timeout=30)
        ended = time.monotonic()
        stderr = proc.stderr.read()
    assert code == 0, stderr
    assert ended - closing < 3.0
    assert "QThread: Destroyed" not in stderr
    gone = not psutil.pid_exists(kernel_pid) or \
        psutil.Process(kernel_pid).status() == psutil.STATUS_ZOMBIE
    assert gone, "the kernel outlived the window"


def test_the_kernel_is_prewarmed_after_the_first_frame_when_asked() -> None:
    proc = _python("""
        from gpumon.ui.window.main_window import MainWindow as Prewarming
        running_at_show = w.kernel_link.running
        w.close()
        from gpumon.ui.window.settings import Settings
        used = Settings.memory()
        used.playground_used = True  # the last session showed the playground
        p = Prewarming(simulated_factory(1), 0.1, settings=used)
        p.show()
        started_at_show = p.kernel_link.running
        wait(lambda: p.kernel_link.load_status is not None)
        print(running_at_show, started_at_show, p.kernel_link.load_status.ok,
              p.kernel_link.kernel_pid not in (None, os.getpid()))
        p.close()
    """)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split()[-4:] == ["False", "False", "True", "True"]
