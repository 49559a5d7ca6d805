"""The lesson's checkpoint "saved on a GPU": a small state_dict whose storages say cuda:0.

``torch.save`` writes each storage's location tag (``'cpu'``, ``'cuda:0'``) into the file,
and ``torch.load`` puts the storage back there unless ``map_location`` says otherwise; on a
machine without CUDA that is the classic "Attempting to deserialize object on a CUDA device"
error. The file in resources/ was written without a GPU, by :func:`write` in a fresh process:
torch's own ``register_package`` tagger labels the CPU storages ``cuda:0`` at save time, as
a GPU's save labels them; the bytes are otherwise torch's ordinary format. Regenerate it with
``python -m gpumon.playground.kernel.checkpoint resources/lesson-linear-saved-on-cuda.pt``.
"""

from __future__ import annotations

import sys

#: The tag every storage in the file carries.
TAG = "cuda:0"


def write(path: str) -> None:
    """Save ``nn.Linear(3, 1)``'s state_dict (seed 0) with every storage tagged cuda:0.

    Registers a tagger for the whole process (torch has no way to remove one), so it is
    meant for a process of its own: ``python -m gpumon.playground.kernel.checkpoint PATH``.
    """
    import torch

    torch.serialization.register_package(
        0, lambda storage: TAG if storage.device.type == "cpu" else None,
        lambda storage, location: None)
    torch.manual_seed(0)
    torch.save(torch.nn.Linear(3, 1).state_dict(), path)


if __name__ == "__main__":
    write(sys.argv[1])
