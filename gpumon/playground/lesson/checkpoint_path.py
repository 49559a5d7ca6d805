"""Where the lesson's checkpoint "saved on a GPU" lies (written by kernel/checkpoint.py)."""

from __future__ import annotations

from pathlib import Path

#: The file's name in gpumon.resources (package data).
FILE_NAME = "lesson-linear-saved-on-cuda.pt"


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
