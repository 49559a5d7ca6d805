"""The lesson's checkpoint "saved on a GPU": a small state_dict whose storages say cuda:0.

``torch.save`` writes each storage's location tag (``'cpu'``, ``'cuda:0'``) into the file,
and ``torch.load`` puts the storage back there unless ``map_location`` says otherwise; on a
machine without CUDA that is the classic "Attempting to deserialize object on a CUDA device"
error. The file in resources/ was written without a GPU, by :func:`write` in a fresh process:
torch's own ``register_package`` tagger labels the CPU storages ``cuda:0`` at save time, as
a GPU's save labels them; the bytes are otherwise torch's ordinary format. Regenerate it with
``python -m gpumon.playground.checkpoint resources/lesson-linear-saved-on-cuda.pt``.
"""

from __future__ import annotations

import sys
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
    return str(Path(__file__).resolve().parents[2] / "resources" / FILE_NAME)


#: Where it is: the lesson's step code loads it by this name.
SAVED_ON_CUDA = _resource_path()
#: The tag every storage in the file carries.
TAG = "cuda:0"


def write(path: str) -> None:
    """Save ``nn.Linear(3, 1)``'s state_dict (seed 0) with every storage tagged cuda:0.

    Registers a tagger for the whole process (torch has no way to remove one), so it is
    meant for a process of its own: ``python -m gpumon.playground.checkpoint PATH``.
    """
    import torch

    torch.serialization.register_package(
        0, lambda storage: TAG if storage.device.type == "cpu" else None,
        lambda storage, location: None)
    torch.manual_seed(0)
    torch.save(torch.nn.Linear(3, 1).state_dict(), path)


if __name__ == "__main__":
    write(sys.argv[1])
