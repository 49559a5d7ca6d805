"""Where the lesson's files lie: the checkpoint "saved on a GPU" that comes with gpumon
(written by kernel/checkpoint.py), and a private folder for what a run of the lesson saves.

The folder is made by ``tempfile.mkdtemp`` (mode 0700, a name no one can guess or take
first), once per process, never a fixed name in the shared temp folder: there another user
could plant the file the lesson then loads. It is removed when the lesson restarts
(:func:`remove_lesson_folder`, from the runner's reset) and when the kernel ends: the kernel
leaves by ``os._exit`` or may be killed, so the window removes the folders of a kernel that
ended (:func:`remove_folders_of`, by its pid in the name).
"""

from __future__ import annotations

import atexit
import os
import shutil
import stat
import tempfile
from pathlib import Path

#: The file's name in gpumon.resources (package data).
FILE_NAME = "lesson-linear-saved-on-cuda.pt"
#: How a lesson folder's name starts; the process's pid follows, then mkdtemp's random part.
FOLDER_PREFIX = "gpumon-lesson-"


def _resource_path() -> str:
    """The installed file (gpumon.resources), else the one beside the source tree."""
    try:
        from importlib.resources import files

        installed = files("gpumon.resources") / FILE_NAME
        if installed.is_file():
            return str(installed)
    except (ImportError, OSError, TypeError):
        pass
    return str(Path(__file__).resolve().parents[3] / "resources" / FILE_NAME)


#: Where it is: the lesson's step code loads it by this name.
SAVED_ON_CUDA = _resource_path()

_folder: str | None = None
_registered = False


def lesson_folder() -> str:
    """This process's private folder for the lesson's files, made on first use (again after
    :func:`remove_lesson_folder`)."""
    global _folder, _registered
    if _folder is None or not os.path.isdir(_folder):
        _folder = tempfile.mkdtemp(prefix=f"{FOLDER_PREFIX}{os.getpid()}-")
        if not _registered:  # ``gpumon lesson`` exits normally; the kernel by os._exit
            atexit.register(remove_lesson_folder)
            _registered = True
    return _folder


def remove_lesson_folder() -> None:
    """Remove this process's lesson folder and what is in it (nothing if none was made)."""
    global _folder
    folder, _folder = _folder, None
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)


def remove_folders_of(pid: int) -> int:
    """Remove the lesson folders process ``pid`` made (the window's cleanup after its kernel
    ended); only folders of this user, never a link. How many were removed."""
    removed = 0
    uid = getattr(os, "getuid", lambda: None)()
    for path in Path(tempfile.gettempdir()).glob(f"{FOLDER_PREFIX}{pid}-*"):
        try:
            info = path.lstat()
        except OSError:
            continue
        if not stat.S_ISDIR(info.st_mode) or (uid is not None and info.st_uid != uid):
            continue
        shutil.rmtree(path, ignore_errors=True)
        removed += 1
    return removed
