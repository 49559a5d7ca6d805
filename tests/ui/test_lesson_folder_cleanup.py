"""The lesson's private folder goes when its kernel ends, however it ends: the kernel leaves
by os._exit or is killed, so the window removes it (KernelLink, checkpoint_path.py)."""

from __future__ import annotations

import ast
import os
import signal
from collections.abc import Iterator

import pytest

from gpumon.playground.data.actions import RunCode
from gpumon.playground.data.outcome import Outcome
from gpumon.ui.playground.kernel_link import KernelLink

MAKE = RunCode("import os\nfrom gpumon.playground.lesson.checkpoint_path import lesson_folder\n"
               "folder = lesson_folder()\nopen(os.path.join(folder, 'net.pt'), 'wb').close()\n"
               "folder")


@pytest.fixture
def engine(qapp) -> Iterator[KernelLink]:
    handle = KernelLink()
    yield handle
    assert handle.stop()


def make_folder(qtbot, engine: KernelLink) -> str:
    done: list[Outcome] = []
    engine.actionFinished.connect(lambda _t, o: done.append(o))
    engine.submit(MAKE)
    qtbot.waitUntil(lambda: bool(done), timeout=60000)
    assert done[-1].ok, done[-1].error
    folder = ast.literal_eval(done[-1].preview)
    assert os.path.isfile(os.path.join(folder, "net.pt"))
    return str(folder)


@pytest.mark.slow
@pytest.mark.skipif(os.name != "posix", reason="sends SIGKILL to the kernel")
def test_a_killed_kernel_leaves_no_lesson_folder(qtbot, engine: KernelLink) -> None:
    folder = make_folder(qtbot, engine)
    assert engine.kernel_pid is not None
    with qtbot.waitSignal(engine.kernelEnded, timeout=10000):
        os.kill(engine.kernel_pid, signal.SIGKILL)
    assert not os.path.exists(folder)


@pytest.mark.slow
def test_quitting_leaves_no_lesson_folder(qtbot, engine: KernelLink) -> None:
    folder = make_folder(qtbot, engine)
    assert engine.stop()
    assert not os.path.exists(folder)
