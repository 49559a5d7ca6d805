"""In Chinese, every explanation beneath an error is Chinese, and torch's message is unchanged.

Each row of the explanation table is reached by a real torch error where a CPU-only torch can
raise it, else by torch's own words for it (CUDA-only errors, quoted from torch's source and
LESSON.md); one test checks the rows cover the whole table.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
import torch

from gpumon import i18n
from gpumon.i18n import tr
from gpumon.playground.data import actions as act
from gpumon.playground.data.errors import ErrorInfo
from gpumon.playground.kernel.cuda_cause import UNAVAILABLE, CudaFacts, sentence
from gpumon.playground.kernel.engine import Engine
from gpumon.playground.kernel.explain import (
    EXPLANATIONS,
    FALLBACK,
    PYTHON_FALLBACK,
    error_from_exception,
    explanation_msgid,
)

CJK = re.compile(r"[\u4e00-\u9fff]")


def _raised(fn: Callable[[], object]) -> BaseException:
    try:
        fn()
    except Exception as exc:  # whatever torch raises is the subject
        return exc
    raise AssertionError("torch did not raise; the test premise is wrong here")


def _meta(*shape: int) -> torch.Tensor:
    return torch.ones(*shape, device="meta")


#: (case id, what raises the real error) on a CPU-only torch.
REAL: list[tuple[str, Callable[[], object]]] = [
    ("cpu + meta", lambda: torch.ones(3) + _meta(3)),
    ("empty device", lambda: torch.device("")),
    ("mps", lambda: torch.zeros(1, device="mps")),
    ("cuda:-1", lambda: torch.device("cuda:-1")),
    ("gpu", lambda: torch.device("gpu")),
    ("cpu allocator", lambda: torch.empty(2**62, dtype=torch.uint8)),
    ("broadcast", lambda: torch.ones(2) + torch.ones(3)),
    ("matmul shapes", lambda: torch.ones(2, 3) @ torch.ones(2, 3)),
    ("dot lengths", lambda: torch.dot(torch.ones(2), torch.ones(3))),
    ("0-d matmul", lambda: torch.tensor(1.0) @ torch.tensor(2.0)),
    ("dtypes", lambda: torch.ones(2, 2) @ torch.ones(2, 2, dtype=torch.float64)),
    ("meta numpy", lambda: _meta(2).numpy()),
    ("meta cpu", lambda: _meta(2).cpu()),
    ("meta item", lambda: _meta(1).item()),
    ("rand int", lambda: torch.rand(2, dtype=torch.int64)),
    ("negative power", lambda: torch.tensor([2]) ** -1),
    ("overflow", lambda: torch.tensor([2**64])),
    ("negative size", lambda: torch.zeros(-1)),
    ("numpy of a tensor that requires grad", lambda: torch.ones(2, requires_grad=True).numpy()),
]

#: torch's words for errors only a CUDA machine (or another backend) raises.
QUOTED: list[tuple[str, str, str]] = [
    ("cuda + cpu", "RuntimeError", "Expected all tensors to be on the same device, but found "
     "at least two devices, cuda:0 and cpu!"),
    ("no driver", "RuntimeError", "Found no NVIDIA driver on your system. Please check that "
     "you have an NVIDIA GPU and installed a driver from http://www.nvidia.com/Download/"
     "index.aspx"),
    ("old driver", "RuntimeError", "The NVIDIA driver on your system is too old (found version "
     "11040). ... CUDA driver version is insufficient for CUDA runtime version"),
    ("xla", "RuntimeError", "PyTorch is not linked with support for xla devices"),
    ("ordinal", "torch.AcceleratorError", "CUDA error: invalid device ordinal"),
    # torch/cuda/__init__.py, where a device index is checked before CUDA is asked (no footer)
    ("device id", "AssertionError", "Invalid device id"),
    ("oom", "torch.OutOfMemoryError", "CUDA out of memory. Tried to allocate 20.00 GiB. GPU 0 "
     "has a total capacity of 79.11 GiB of which 1.19 GiB is free."),
    ("cuda numpy", "TypeError", "can't convert cuda:0 device type tensor to numpy. Use "
     "Tensor.cpu() to copy the tensor to host memory first."),
    ("checkpoint", "RuntimeError", "Attempting to deserialize object on a CUDA device but "
     "torch.cuda.is_available() is False."),
    ("arch", "torch.AcceleratorError", "CUDA error: no kernel image is available for execution "
     "on the device"),
    ("busy", "torch.AcceleratorError", "CUDA error: CUDA-capable device(s) is/are busy or "
     "unavailable"),
    ("not compiled", "AssertionError", "Torch not compiled with CUDA enabled"),
    ("no accelerator", "RuntimeError", "Cannot access accelerator device when none is "
     "available."),
]


@pytest.mark.parametrize(("case", "fn"), REAL, ids=[c for c, _ in REAL])
def test_a_real_torch_error_keeps_its_message_and_is_explained_in_chinese(
        chinese: None, case: str, fn: Callable[[], object]) -> None:
    exc = _raised(fn)
    info = error_from_exception(exc)
    assert info.message == str(exc)  # exactly as torch wrote it: English, searchable
    assert not CJK.search(info.message)
    assert CJK.search(info.explanation), info.explanation
    assert info.explanation != explanation_msgid(info.type_name, info.message)
    assert info.explanation != tr(FALLBACK), f"{case}: no row of the table matched"


@pytest.mark.parametrize(("case", "type_name", "message"), QUOTED, ids=[c for c, _, _ in QUOTED])
def test_a_cuda_error_is_explained_in_chinese(chinese: None, case: str, type_name: str,
                                              message: str) -> None:
    msgid = explanation_msgid(type_name, message)
    assert msgid != FALLBACK, case
    explanation = tr(msgid)  # as error_from_exception words it
    assert CJK.search(explanation) and explanation != msgid


def test_the_cases_cover_every_row_of_the_table() -> None:
    reached = {explanation_msgid(type(e).__name__, str(e)) for e in (_raised(f) for _, f in REAL)}
    reached |= {explanation_msgid(t, m) for _, t, m in QUOTED}
    assert reached == {explanation for _, explanation in EXPLANATIONS}


def test_the_same_error_in_english_is_unchanged() -> None:
    info = error_from_exception(_raised(lambda: torch.ones(2) + torch.ones(3)))
    assert info.explanation.startswith("The shapes cannot be broadcast together")


def test_an_unknown_torch_error_and_a_python_error_get_chinese_fallbacks(chinese: None) -> None:
    view = _raised(lambda: torch.ones(2).view(3))
    info = error_from_exception(view)
    assert info.message == "shape '[3]' is invalid for input of size 2"
    assert info.explanation == tr(FALLBACK) and CJK.search(info.explanation)
    python = error_from_exception(_raised(lambda: {}["x"]))
    assert python.explanation == tr(PYTHON_FALLBACK) and "Python" in python.explanation
    assert CJK.search(python.explanation)


def test_the_engine_explains_in_chinese_what_torch_said_in_english(chinese: None) -> None:
    engine = Engine()
    engine.run(act.CreateTensor("x", "[1.0, 2.0, 3.0]"))
    engine.run(act.CreateFilled("m", "ones", (3,), device="meta"))
    out = engine.run(act.Compute("y", "add", "x", "m"))
    assert out.error is not None
    assert out.error.message == "Tensor on device meta is not on the expected device cpu!"
    assert out.error.explanation.startswith("参与运算的张量不在同一个设备上")


@pytest.mark.parametrize("facts", [
    CudaFacts("2.13.0+cpu", None, None, False, 0, False, None),
    CudaFacts("2.13.0", "12.8", None, False, 0, False, None),
    CudaFacts("2.13.0", "12.8", None, False, 0, True, ""),
    CudaFacts("2.13.0", "12.8", None, False, 0, True, None),
], ids=["cpu-only", "no driver", "hidden", "no gpu"])
def test_the_cuda_cause_is_a_chinese_sentence(chinese: None, facts: CudaFacts) -> None:
    text = sentence(facts)
    assert text is not None and CJK.search(text)
    assert facts.torch_version in text or "12.8" in text  # the build is named as torch has it


def test_the_real_cuda_cause_follows_the_language_chosen_after_it_was_found() -> None:
    """The facts are read once; the sentence is built each time, in the language of now."""
    if torch.cuda.is_available():
        pytest.skip("CUDA is usable here: no 'no CUDA' error to explain")
    exc = _raised(lambda: torch.zeros(3, device="cuda:0"))
    if not UNAVAILABLE.search(str(exc)):
        pytest.skip("CUDA is usable here: no 'no CUDA' error to explain")
    english = error_from_exception(exc).explanation
    i18n.set_language("zh_CN")
    chinese_text = error_from_exception(exc).explanation
    assert not CJK.search(english) and CJK.search(chinese_text)
    assert str(exc) == error_from_exception(exc).message


def test_oom_advice_in_chinese_keeps_the_code_it_names(chinese: None) -> None:
    oom = _raised(lambda: (_ for _ in ()).throw(torch.OutOfMemoryError(
        "CUDA out of memory. Tried to allocate 2.00 GiB.")))
    info = error_from_exception(oom)
    assert info.type_name == "torch.OutOfMemoryError"
    assert info.message == "CUDA out of memory. Tried to allocate 2.00 GiB."
    for code in ("empty_cache()", "torch.no_grad()",
                 "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True",
                 "torch.cuda.max_memory_allocated()"):
        assert code in info.explanation
    assert "显存" in info.explanation


def test_a_refusal_is_in_chinese(chinese: None) -> None:
    out = Engine().run(act.Compute("y", "add", "nope", "x"))
    assert out.error is not None and not out.error.by_torch
    assert out.error.message == "没有名为 'nope' 的值。工作区中现有的名字：暂无。"
    assert isinstance(out.error, ErrorInfo)
