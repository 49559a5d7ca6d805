"""A corpus of bad playground inputs: each must come back as ok=False with a clear message.

``SETUP`` creates the names some of them refer to (tensors ``x`` (3,) and ``w`` (2, 2), the
model ``net`` = Linear(3, 1)).
Inputs torch itself accepts are not here, on purpose: ``'cpu:1'`` and ``'meta:0'`` are
devices torch takes (as cpu and meta), ``(0,)`` is an empty tensor, and ``'1e400'`` parses
as infinity, as in Python; ``tests/faults/test_faults_playground.py`` checks those apart.
"""

from __future__ import annotations

import builtins
import re

from gpumon.playground.data import actions as act
from gpumon.playground.data.errors import REFUSED
from gpumon.playground.data.outcome import Outcome

SETUP: tuple[act.Action, ...] = (
    act.CreateTensor("x", "[1.0, 2.0, 3.0]"),
    act.CreateModel("net", 3, 1),
    act.CreateFilled("w", "ones", (2, 2)),
)
PROBE = "_gpumon_fault_probe"  # a builtins list that code in the values would append to

TiB = 2**40


def _zeros(device: object) -> act.Action:
    return act.CreateFilled("z", "zeros", (2,), device=device)  # type: ignore[arg-type]


BAD: tuple[tuple[str, act.Action], ...] = (
    # devices
    ("device gpu", _zeros("gpu")),
    ("device cuda:-1", _zeros("cuda:-1")),
    ("device cuda:abc", _zeros("cuda:abc")),
    ("device CUDA:0", _zeros("CUDA:0")),
    ("device cuda:99", _zeros("cuda:99")),
    ("device empty", _zeros("")),
    ("device space", _zeros(" ")),
    ("device mps", _zeros("mps")),
    ("device cuda:1.5", _zeros("cuda:1.5")),
    ("device 'cuda:0 '", _zeros("cuda:0 ")),
    ("device as a number", _zeros(0)),
    ("move to gpu", act.Move("x", "to", device="gpu")),
    ("move to no device", act.Move("x", "to", device=None)),
    ("move .cuda(99)", act.Move("x", "cuda", index=99)),
    # shapes
    ("shape negative", act.CreateFilled("z", "ones", (-1,))),
    ("shape negative inner", act.CreateFilled("z", "ones", (2, -3))),
    ("shape fractional", act.CreateFilled("z", "ones", (1.5,))),  # type: ignore[arg-type]
    ("shape text", act.CreateFilled("z", "ones", ("2",))),  # type: ignore[arg-type]
    ("shape bool", act.CreateFilled("z", "ones", (True,))),
    ("shape too many dims", act.CreateFilled("z", "ones", (1,) * 9)),
    ("shape huge (8 TiB)", act.CreateFilled("z", "zeros", (TiB,), dtype="float64")),
    ("fill unknown", act.CreateFilled("z", "full", (2,))),  # type: ignore[arg-type]
    # dtypes
    ("dtype float", act.CreateFilled("z", "ones", (2,), dtype="float")),
    ("dtype int", act.CreateTensor("z", "[1]", dtype="int")),
    ("dtype torch.complex64", act.CreateTensor("z", "[1]", dtype="torch.complex64")),
    ("dtype complex64", act.CreateTensor("z", "[1]", dtype="complex64")),
    ("dtype empty", act.CreateTensor("z", "[1]", dtype="")),
    # values
    ("values unclosed", act.CreateTensor("z", "[1, 2")),
    ("values ragged", act.CreateTensor("z", "[[1, 2], [3]]")),
    ("values strings", act.CreateTensor("z", "['a', 'b']")),
    ("values nested too deep", act.CreateTensor("z", "[" * 40 + "1" + "]" * 40)),
    ("values nan text", act.CreateTensor("z", "[nan, 1]")),
    ("values float('nan')", act.CreateTensor("z", "[float('nan')]")),
    ("values __import__", act.CreateTensor("z", "__import__('os').getcwd()")),
    ("values side effect", act.CreateTensor("z", f"[__builtins__.{PROBE}.append(1)]")),
    ("values dict", act.CreateTensor("z", "{1: 2}")),
    ("values lambda", act.CreateTensor("z", "lambda: 0")),
    ("values empty", act.CreateTensor("z", "   ")),
    ("values complex", act.CreateTensor("z", "[1j]")),
    ("values too long", act.CreateTensor("z", "[" + "1, " * 100_000 + "1]")),
    # names
    ("name empty", act.CreateTensor("", "[1]")),
    ("name not an identifier", act.CreateTensor("1x", "[1]")),
    ("name with a space", act.CreateTensor("x y", "[1]")),
    ("name keyword", act.CreateTensor("class", "[1]")),
    ("name shadows torch", act.CreateTensor("torch", "[1]")),
    ("name shadows nn", act.CreateFilled("nn", "ones", (2,))),
    ("name missing in compute", act.Compute("y", "add", "x", "nope")),
    ("name missing in move", act.Move("nope", "cpu")),
    ("name missing in delete", act.Delete("nope")),
    ("name missing in device query", act.TensorDevice("nope")),
    ("model is a tensor", act.CallModel("y", "x", "x")),
    ("tensor is a model", act.Compute("y", "add", "net", "x")),
    # operations and models
    ("op unknown", act.Compute("y", "div", "x", "x")),  # type: ignore[arg-type]
    ("add without b", act.Compute("y", "add", "x")),
    ("matmul shapes", act.Compute("y", "matmul", "x", "w")),
    ("exponent nan", act.Compute("y", "pow", "x", exponent=float("nan"))),
    ("model zero features", act.CreateModel("m", 0, 1)),
    ("model fractional features", act.CreateModel("m", 1.5, 1)),  # type: ignore[arg-type]
    ("model beyond memory", act.CreateModel("m", 2**22, 2**22)),
    ("model input wrong size", act.CallModel("y", "net", "w")),
)

_TRACEBACK = re.compile(r"Traceback \(most recent call last\)|^\s*File \"", re.MULTILINE)

#: Inputs that reach torch, whose own error is the answer; every other input must be refused
#: by the playground before torch runs (``Refused``, not torch's).
TORCH_ANSWERS = frozenset({
    "device gpu", "device cuda:-1", "device cuda:abc", "device CUDA:0", "device empty",
    "device space", "device mps", "device cuda:1.5", "device 'cuda:0 '", "move to gpu",
    "matmul shapes", "model input wrong size",
})
#: A cuda index beyond the devices: refused where CUDA works, torch's "not compiled with
#: CUDA" (or "no NVIDIA driver") error where it does not.
REFUSED_WITH_CUDA = frozenset({"device cuda:99", "move .cuda(99)"})
#: What torch raises for bad input; an error of another type (KeyError, AttributeError,
#: NameError …) would be a bug of ours passed off as torch's.
TORCH_ERROR_TYPES = frozenset({"RuntimeError", "AssertionError", "NotImplementedError",
                               "ValueError", "TypeError", "IndexError"})


def expected_kind(label: str) -> str:
    """"refused" or "torch": who must answer the bad input called ``label``."""
    if label in REFUSED_WITH_CUDA:
        import torch

        return "refused" if torch.cuda.is_available() else "torch"
    return "torch" if label in TORCH_ANSWERS else "refused"


def problems_with(outcome: Outcome, label: str) -> list[str]:
    """What is wrong with how the bad input ``label`` was reported; empty when it was
    reported well: by the right party (a refusal, or torch's own error), never by a bug."""
    found = []
    if outcome.ok:
        found.append("it succeeded")
    e = outcome.error
    if e is None:
        return [*found, "no error"]
    if not e.message.strip():
        found.append("empty message")
    if not e.explanation.strip():
        found.append("empty explanation")
    for text in (e.message, e.explanation, e.headline(), outcome.code):
        if _TRACEBACK.search(text):
            found.append(f"traceback text: {text[:200]!r}")
    kind = expected_kind(label)
    if kind == "refused" and (e.by_torch or e.type_name != REFUSED):
        found.append(f"expected a refusal, got {e.type_name} (by torch: {e.by_torch})")
    elif kind == "torch" and not (e.by_torch and (e.type_name in TORCH_ERROR_TYPES
                                                  or e.type_name.startswith("torch."))):
        found.append(f"expected torch's error, got {e.type_name} (by torch: {e.by_torch})")
    return found


def install_probe() -> list[int]:
    hits: list[int] = []
    setattr(builtins, PROBE, hits)
    return hits


def remove_probe() -> None:
    if hasattr(builtins, PROBE):
        delattr(builtins, PROBE)
