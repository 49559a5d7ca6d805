"""The tests' own helpers (testkit.py) where they stand in for a library's answer."""

from __future__ import annotations

import pytest
from testkit import _cuda_built, built_with_cuda


def test_cuda_built_is_what_torch_says_without_importing_it() -> None:
    torch = pytest.importorskip("torch")

    assert _cuda_built() == torch.backends.cuda.is_built()


def test_a_cuda_or_rocm_build_s_version_file_says_built_with_cuda() -> None:
    head = "from typing import Optional\n__version__ = '2.5.0'\ndebug = False\n"
    cpu = head + "cuda: Optional[str] = None\nhip: Optional[str] = None\n"
    assert not built_with_cuda(cpu)
    assert built_with_cuda(cpu.replace("cuda: Optional[str] = None", "cuda = '12.4'"))
    assert built_with_cuda(cpu.replace("hip: Optional[str] = None", "hip = '6.2'"))
    assert built_with_cuda(head + "cuda: Optional[str] = '12.4'\nhip: Optional[str] = None\n")
