"""The lesson's save/load step writes in a private folder made for that run (mode 0700, never a
fixed name in the shared temp folder), removed when the lesson restarts; a failed save stops
the step, so the load never reads a file the save did not write."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

import pytest

from gpumon.playground.kernel.engine import Engine
from gpumon.playground.kernel.lesson_runner import LessonRunner
from gpumon.playground.lesson import checkpoint_path
from gpumon.playground.lesson.checkpoint_path import (
    FOLDER_PREFIX,
    lesson_folder,
    remove_folders_of,
    remove_lesson_folder,
)
from gpumon.playground.lesson.steps import LESSON

NUMBER = {step.id: i for i, step in enumerate(LESSON, start=1)}
SAVE = "torch.save(net.state_dict(), path)"
LOAD = "torch.load(path, map_location=device)"


@pytest.fixture(autouse=True)
def _no_folder_left() -> object:
    yield
    remove_lesson_folder()


def test_the_save_goes_to_a_private_folder_removed_when_the_lesson_restarts() -> None:
    engine = Engine()
    runner = LessonRunner(engine)
    result = runner.run_step(NUMBER["save-load"])
    shown = {o.code: o for o in result.outcomes}
    assert shown[SAVE].ok and shown[LOAD].ok
    path = Path(str(engine.get("path")))
    folder = path.parent
    assert path.name == "net.pt" and path.is_file()
    assert folder.parent == Path(tempfile.gettempdir())  # in it, not the temp folder itself
    assert folder.name.startswith(f"{FOLDER_PREFIX}{os.getpid()}-")
    if os.name == "posix":
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    runner.reset()  # the lesson restarts
    assert not folder.exists()
    again = LessonRunner(Engine()).run_step(NUMBER["save-load"])
    assert {o.code: o for o in again.outcomes}[LOAD].ok  # a fresh folder for the new run
    assert Path(lesson_folder()) != folder


def test_a_failed_save_stops_the_step_before_the_load(monkeypatch: pytest.MonkeyPatch,
                                                      tmp_path: Path) -> None:
    """A save that fails (here: its folder is gone) must not be followed by a load, which
    would read whatever file is there: on a shared machine, someone else's."""
    missing = tmp_path / "gone"
    monkeypatch.setattr(checkpoint_path, "lesson_folder", lambda: str(missing))
    result = LessonRunner(Engine()).run_step(NUMBER["save-load"])
    codes = [o.code for o in result.outcomes]
    assert codes == ["net = nn.Linear(3, 1).to(device)", SAVE]
    save = result.outcomes[-1]
    assert not save.ok and save.error is not None
    assert f"{SAVE} failed, so the lines that need it did not run." in result.note
    assert "Python stops at the first error" not in result.note


def test_the_window_removes_the_folders_of_a_kernel_that_ended(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch
                                                               ) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    mine = tmp_path / f"{FOLDER_PREFIX}4242-abc"
    (mine / "sub").mkdir(parents=True)
    (mine / "net.pt").write_bytes(b"x")
    other_pid = tmp_path / f"{FOLDER_PREFIX}42420-abc"
    other_pid.mkdir()
    link = tmp_path / f"{FOLDER_PREFIX}4242-link"
    link.symlink_to(other_pid)
    assert remove_folders_of(4242) == 1
    assert not mine.exists() and other_pid.exists() and link.is_symlink()
