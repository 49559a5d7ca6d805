"""Errors as content: the engine reports exactly what torch raises, and refuses bad input."""

from __future__ import annotations

import psutil
import pytest
import torch
from playground_helpers import cpu_only_build, torch_error

from gpumon.playground import actions as A
from gpumon.playground import memory
from gpumon.playground.engine import Engine
from gpumon.playground.errors import FALLBACK, REFUSED, error_from_exception, explain


def assert_same_as_torch(engine: Engine, action: A.Action, direct: object) -> str:
    expected = torch_error(direct)  # type: ignore[arg-type]
    assert expected is not None, "torch did not raise; the test premise is wrong here"
    out = engine.run(action)
    assert not out.ok and out.error is not None
    assert (out.error.type_name, out.error.message) == expected
    assert out.error.by_torch
    assert out.error.explanation and out.error.explanation != FALLBACK
    return out.error.explanation


# --- a CPU-only build: the real CUDA errors ----------------------------------------------

@cpu_only_build
@pytest.mark.parametrize(("action", "direct"), [
    (A.CurrentDevice(), lambda: torch.cuda.current_device()),
    (A.DeviceName(0), lambda: torch.cuda.get_device_name(0)),
    (A.DeviceProperties(0), lambda: torch.cuda.get_device_properties(0)),
    (A.CreateFilled("z", "zeros", (3,), device="cuda:0"),
     lambda: torch.zeros(3, device="cuda:0")),
    (A.CreateTensor("z", "[1, 2, 3]", device="cuda"),
     lambda: torch.tensor([1, 2, 3], device="cuda")),
    (A.CreateModel("net", 3, 1, device="cuda"), lambda: torch.nn.Linear(3, 1, device="cuda")),
], ids=lambda v: v.code() if isinstance(v, A.Action) else "")
def test_cpu_only_cuda_calls(engine: Engine, action: A.Action, direct: object) -> None:
    explanation = assert_same_as_torch(engine, action, direct)
    assert "CPU-only" in explanation


@cpu_only_build
@pytest.mark.parametrize(("move", "direct"), [
    (A.Move("x", "cuda"), lambda x: x.cuda()),
    (A.Move("x", "cuda", index=0), lambda x: x.cuda(0)),
    (A.Move("x", "to", device="cuda"), lambda x: x.to("cuda")),
    (A.Move("x", "to", device="cuda:0"), lambda x: x.to("cuda:0")),
], ids=lambda v: v.code() if isinstance(v, A.Action) else "")
def test_cpu_only_moves(engine: Engine, move: A.Move, direct: object) -> None:
    engine.run(A.CreateTensor("x", "[1, 2, 3]"))
    x = torch.tensor([1, 2, 3])
    assert_same_as_torch(engine, move, lambda: direct(x))  # type: ignore[operator]
    assert engine.get("x").device.type == "cpu"  # type: ignore[union-attr]
    out = engine.run(move)
    assert [(o.code, o.device) for o in out.operands] == [("x", "cpu")]


@cpu_only_build
def test_cpu_only_model_move(engine: Engine) -> None:
    engine.run(A.CreateModel("net", 3, 1))
    assert_same_as_torch(engine, A.Move("net", "cuda"), lambda: torch.nn.Linear(3, 1).cuda())


# --- the same-device rule on meta ---------------------------------------------------------

def test_meta_cross_device_add(engine: Engine) -> None:
    engine.run(A.CreateTensor("x", "[1.0, 2.0, 3.0]"))
    engine.run(A.CreateFilled("m", "ones", (3,), device="meta"))
    x, m = torch.tensor([1.0, 2.0, 3.0]), torch.ones(3, device="meta")
    explanation = assert_same_as_torch(engine, A.Compute("y", "add", "x", "m"), lambda: x + m)
    assert "different devices" in explanation
    out = engine.run(A.Compute("y", "mul", "m", "x"))
    assert out.error is not None and out.error.message == torch_error(lambda: m * x)[1]  # type: ignore[index]
    assert [(o.code, o.device) for o in out.operands] == [("m", "meta"), ("x", "cpu")]


def test_meta_linear_with_bias_raises_like_torch(engine: Engine) -> None:
    engine.run(A.CreateModel("net", 3, 1, device="meta"))
    engine.run(A.CreateFilled("x", "rand", (2, 3)))
    net, x = torch.nn.Linear(3, 1, device="meta"), torch.rand(2, 3)
    assert_same_as_torch(engine, A.CallModel("y", "net", "x"), lambda: net(x))


@pytest.mark.parametrize("action", [
    A.Compute("y", "matmul", "a", "m"), A.Compute("y", "matmul", "m", "a"),
    A.Compute("y", "matmul", "v", "m"), A.CallModel("y", "nobias", "a"),
    A.CallModel("y", "cpu_nobias", "m"),
], ids=lambda a: a.code())
def test_meta_garbage_is_refused(engine: Engine, action: A.Action) -> None:
    engine.run(A.CreateFilled("a", "rand", (3, 3)))
    engine.run(A.CreateFilled("v", "rand", (3,)))
    engine.run(A.CreateFilled("m", "ones", (3, 3), device="meta"))
    engine.run(A.CreateModel("nobias", 3, 1, bias=False, device="meta"))
    engine.run(A.CreateModel("cpu_nobias", 3, 1, bias=False))
    out = engine.run(action)
    assert not out.ok and out.error is not None
    assert out.error.type_name == REFUSED and not out.error.by_torch
    assert "Not run" in out.error.message
    assert "y" not in engine.names()
    assert out.memory_before == ()  # refused before anything ran


def test_meta_move_to_cpu_shows_torchs_error(engine: Engine) -> None:
    engine.run(A.CreateFilled("m", "ones", (3,), device="meta"))
    m = torch.ones(3, device="meta")
    assert_same_as_torch(engine, A.Move("m", "cpu"), lambda: m.cpu())


# --- bad input -----------------------------------------------------------------------------

@pytest.mark.parametrize("device", ["gpu", "cuda:-1", "cuda:abc"])
def test_invalid_device_strings(engine: Engine, device: str) -> None:
    engine.run(A.CreateTensor("x", "[1, 2, 3]"))
    assert_same_as_torch(engine, A.Move("x", "to", device=device),
                         lambda: torch.tensor([1]).to(device))
    assert_same_as_torch(engine, A.CreateFilled("y", "zeros", (2,), device=device),
                         lambda: torch.zeros(2, device=device))


def test_cuda_index_that_does_not_exist_is_refused(
        engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    engine.ensure_loaded()
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    engine.run(A.CreateTensor("x", "[1, 2, 3]"))
    for action in (A.Move("x", "to", device="cuda:7"), A.Move("x", "cuda", index=7),
                   A.CreateFilled("y", "zeros", (2,), device="cuda:7")):
        out = engine.run(action)
        assert out.error is not None and out.error.type_name == REFUSED
        assert out.error.message == "There is no cuda:7: PyTorch sees 1 CUDA device, cuda:0."


@pytest.mark.parametrize(("action", "needle"), [
    (A.CreateTensor("x", "[[1, 2], [3]]"), "Ragged list"),
    (A.CreateTensor("x", "[1, 2"), "Not a list of numbers"),
    (A.CreateTensor("x", "[1, 2]", dtype="float"), "Unknown dtype 'float'"),
    (A.CreateFilled("x", "zeros", (2, -1)), "0 or more"),
    (A.CreateFilled("x", "full", (2,)), "Unknown fill"),  # type: ignore[arg-type]
    (A.CreateTensor("2x", "[1]"), "not a usable name"),
    (A.CreateTensor("torch", "[1]"), "would hide"),
    (A.Compute("y", "add", "nope", "x"), "no value named 'nope'"),
    (A.Compute("y", "add", "x"), "needs a second operand"),
    (A.TensorDevice("net"), "is a model"),
    (A.CallModel("y", "x", "x"), "is a tensor, not a model"),
    (A.Delete("nope"), "no value named"),
    (A.CreateModel("n", 0, 1), "in_features"),
    (A.Move("x", "to"), "Say where"),
])
def test_bad_input_is_refused_with_a_sentence(
        engine: Engine, action: A.Action, needle: str) -> None:
    engine.run(A.CreateTensor("x", "[1.0, 2.0]"))
    engine.run(A.CreateModel("net", 2, 1))
    out = engine.run(action)
    assert not out.ok and out.error is not None
    assert out.error.type_name == REFUSED and needle in out.error.message


@pytest.mark.parametrize(("op", "a", "b", "direct"), [
    ("add", (2,), (3,), lambda a, b: a + b),
    ("matmul", (2, 3), (2, 3), lambda a, b: a @ b),
    ("mul", (4, 2), (3,), lambda a, b: a * b),
])
def test_shape_mismatch_errors(engine: Engine, op: A.ComputeOp, a: tuple[int, ...],
                               b: tuple[int, ...], direct: object) -> None:
    engine.run(A.CreateFilled("a", "ones", a))
    engine.run(A.CreateFilled("b", "ones", b))
    assert_same_as_torch(engine, A.Compute("c", op, "a", "b"),
                         lambda: direct(torch.ones(a), torch.ones(b)))  # type: ignore[operator]


def test_dtype_mismatch_error(engine: Engine) -> None:
    engine.run(A.CreateFilled("a", "ones", (2, 3)))
    engine.run(A.CreateFilled("b", "ones", (3, 2), dtype="float64"))
    explanation = assert_same_as_torch(
        engine, A.Compute("c", "matmul", "a", "b"),
        lambda: torch.ones(2, 3) @ torch.ones(3, 2, dtype=torch.float64))
    assert "dtype" in explanation


def test_torch_value_errors_are_reported(engine: Engine) -> None:
    assert_same_as_torch(engine, A.CreateTensor("x", "[9223372036854775808]"),
                         lambda: torch.tensor([2**63]))
    assert_same_as_torch(engine, A.CreateFilled("x", "rand", (2,), dtype="int64"),
                         lambda: torch.rand(2, dtype=torch.int64))


# --- size guard ----------------------------------------------------------------------------

def test_size_beyond_free_memory_is_refused_before_allocating(engine: Engine) -> None:
    available = psutil.virtual_memory().available
    n = available // 4 + 1  # float32: more bytes than are available
    out = engine.run(A.CreateFilled("big", "zeros", (n,)))
    assert not out.ok and out.error is not None
    assert out.error.type_name == REFUSED and out.error.message.startswith("Not allocated")
    assert out.memory_before == () and out.duration_s == 0.0  # nothing ran
    assert "big" not in engine.names()


def test_size_guard_uses_available_memory(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memory, "host_available_bytes", lambda: 10_000)
    assert engine.run(A.CreateFilled("ok", "zeros", (100,))).ok
    refused = engine.run(A.CreateFilled("no", "zeros", (10_000,)))
    assert refused.error is not None and refused.error.type_name == REFUSED
    engine.run(A.CreateFilled("m", "ones", (10_000,), device="meta"))  # meta holds nothing
    assert "m" in engine.names()
    engine.run(A.CreateFilled("s", "ones", (100, 2)))
    out = engine.run(A.Compute("p", "matmul", "s", A.Ref("s", "to", device="cpu")))
    assert out.error is not None  # (100,2)@(100,2) raises torch's shape error, not a refusal
    assert out.error.by_torch
    engine.run(A.CreateFilled("t", "ones", (2, 100)))
    big = engine.run(A.Compute("q", "matmul", "s", "t"))  # 100x100 float32 = 40 kB
    assert big.error is not None and big.error.type_name == REFUSED


# --- explanations and type names ------------------------------------------------------------

def test_out_of_memory_error_is_named_and_explained() -> None:
    info = error_from_exception(torch.OutOfMemoryError("CUDA out of memory. Tried to allocate"))
    assert info.type_name == "torch.OutOfMemoryError"
    assert "not enough free memory" in info.explanation


def test_accelerator_error_is_qualified() -> None:
    info = error_from_exception(torch.AcceleratorError("CUDA error: invalid device ordinal"))
    assert info.type_name == "torch.AcceleratorError"
    assert "no GPU with that index" in info.explanation
    assert info.headline() == "torch.AcceleratorError: CUDA error: invalid device ordinal"


def test_unknown_errors_fall_back() -> None:
    assert explain("KeyError", "something new") == FALLBACK
    assert error_from_exception(ValueError("x")).type_name == "ValueError"


# --- devices torch knows but cannot use here, and kind spellings -----------------------------

def test_an_empty_device_gets_torchs_message_and_a_plain_one(engine: Engine) -> None:
    engine.run(A.CreateTensor("x", "[1, 2, 3]"))
    for action, direct in ((A.Move("x", "to", device=""), lambda: torch.tensor([1]).to("")),
                           (A.CreateFilled("y", "zeros", (2,), device=""),
                            lambda: torch.zeros(2, device=""))):
        explanation = assert_same_as_torch(engine, action, direct)
        assert explanation == "No device was given: type a device such as cpu, cuda or cuda:0."


@pytest.mark.skipif(torch.backends.mps.is_built(), reason="checks a build without mps")
@pytest.mark.parametrize(("action", "direct"), [
    (A.CreateFilled("z", "zeros", (2,), device="mps"), lambda: torch.zeros(2, device="mps")),
    (A.CreateTensor("z", "[1, 2]", device="mps"), lambda: torch.tensor([1, 2], device="mps")),
    (A.Move("x", "to", device="mps"), lambda: torch.tensor([1]).to("mps")),
    (A.CreateModel("net", 3, 1, device="mps"), lambda: torch.nn.Linear(3, 1, device="mps")),
], ids=lambda v: v.code() if isinstance(v, A.Action) else "")
def test_mps_is_explained_in_plain_words(engine: Engine, action: A.Action,
                                         direct: object) -> None:
    engine.run(A.CreateTensor("x", "[1, 2, 3]"))
    explanation = assert_same_as_torch(engine, action, direct)
    assert explanation.startswith("mps is Apple's GPU backend")
    assert "not built with it" in explanation


def test_other_unlinked_device_types_are_explained() -> None:
    text = explain("RuntimeError", "PyTorch is not linked with support for xla devices")
    assert text != FALLBACK and "not built with support for that device type" in text


def test_a_torch_prefixed_dtype_is_accepted(engine: Engine) -> None:
    action = A.CreateFilled("x", "zeros", (2,), dtype="torch.float64")
    assert action.code() == "x = torch.zeros(2, dtype=torch.float64)"
    out = engine.run(action)
    assert out.ok and out.dtype == "float64", out.error
    out = engine.run(A.CreateTensor("t", "[1, 2]", dtype="torch.int8"))
    assert out.ok and out.dtype == "int8"
    assert out.code == "t = torch.tensor([1, 2], dtype=torch.int8)"
    bad = engine.run(A.CreateTensor("t", "[1, 2]", dtype="torch.float"))
    assert bad.error is not None and "Unknown dtype 'torch.float'" in bad.error.message
