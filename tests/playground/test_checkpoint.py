"""The lesson's checkpoint "saved on a GPU": every storage in the file says cuda:0, its
numbers are nn.Linear(3, 1)'s with seed 0, and writing it again gives the same."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import torch

from gpumon.playground.kernel import checkpoint
from gpumon.playground.lesson.checkpoint_path import SAVED_ON_CUDA


def locations(path: str | Path) -> list[str]:
    """The location tag of each storage, as torch.load hands it to map_location."""
    seen: list[str] = []

    def record(storage: torch.UntypedStorage, location: str) -> torch.UntypedStorage:
        seen.append(location)
        return storage

    torch.load(path, map_location=record)
    return seen


def test_the_committed_file_is_tagged_cuda0() -> None:
    assert Path(SAVED_ON_CUDA).is_file()
    assert locations(SAVED_ON_CUDA) == [checkpoint.TAG] * 2  # weight and bias
    torch.manual_seed(0)
    expected = torch.nn.Linear(3, 1).state_dict()
    loaded = torch.load(SAVED_ON_CUDA, map_location="cpu")
    assert list(loaded) == ["weight", "bias"]
    assert all(torch.equal(loaded[k], expected[k]) for k in expected)


@pytest.mark.slow
def test_writing_it_again_in_a_fresh_process_gives_the_same(tmp_path: Path) -> None:
    out = tmp_path / "again.pt"
    done = subprocess.run([sys.executable, "-m", "gpumon.playground.kernel.checkpoint", str(out)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert locations(out) == [checkpoint.TAG] * 2
    again = torch.load(out, map_location="cpu")
    committed = torch.load(SAVED_ON_CUDA, map_location="cpu")
    assert all(torch.equal(again[k], committed[k]) for k in committed)


def test_an_ordinary_save_here_is_tagged_cpu(tmp_path: Path) -> None:
    """The tagger lives only in the writer's process: this one still saves as 'cpu'."""
    path = tmp_path / "plain.pt"
    torch.save(torch.nn.Linear(3, 1).state_dict(), path)
    assert locations(path) == ["cpu", "cpu"]
