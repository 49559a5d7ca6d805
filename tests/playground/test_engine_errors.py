"""Errors as content: the engine reports exactly what torch raises, and refuses bad input."""

from __future__ import annotations

import psutil
import pytest
import torch
from testkit import cpu_only_build, torch_error

from gpumon.playground.data import actions as act
from gpumon.playground.data.errors import REFUSED
from gpumon.playground.kernel import memory
from gpumon.playground.kernel.engine import Engine
from gpumon.playground.kernel.explain import FALLBACK, error_from_exception, explanation_msgid


def assert_same_as_torch(engine: Engine, action: act.Action, direct: object) -> str:
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
    (act.CurrentDevice(), lambda: torch.cuda.current_device()),
    (act.DeviceName(0), lambda: torch.cuda.get_device_name(0)),
    (act.DeviceProperties(0), lambda: torch.cuda.get_device_properties(0)),
    (act.CreateFilled("z", "zeros", (3,), device="cuda:0"),
     lambda: torch.zeros(3, device="cuda:0")),
    (act.CreateTensor("z", "[1, 2, 3]", device="cuda"),
     lambda: torch.tensor([1, 2, 3], device="cuda")),
    (act.CreateModel("net", 3, 1, device="cuda"), lambda: torch.nn.Linear(3, 1, device="cuda")),
], ids=lambda v: v.code() if isinstance(v, act.Action) else "")
def test_cpu_only_cuda_calls(engine: Engine, action: act.Action, direct: object) -> None:
    explanation = assert_same_as_torch(engine, action, direct)
    assert "CPU-only" in explanation


@cpu_only_build
@pytest.mark.parametrize(("move", "direct"), [
    (act.Move("x", "cuda"), lambda x: x.cuda()),
    (act.Move("x", "cuda", index=0), lambda x: x.cuda(0)),
    (act.Move("x", "to", device="cuda"), lambda x: x.to("cuda")),
    (act.Move("x", "to", device="cuda:0"), lambda x: x.to("cuda:0")),
], ids=lambda v: v.code() if isinstance(v, act.Action) else "")
def test_cpu_only_moves(engine: Engine, move: act.Move, direct: object) -> None:
    engine.run(act.CreateTensor("x", "[1, 2, 3]"))
    x = torch.tensor([1, 2, 3])
    assert_same_as_torch(engine, move, lambda: direct(x))  # type: ignore[operator]
    assert engine.get("x").device.type == "cpu"  # type: ignore[union-attr]
    out = engine.run(move)
    assert [(o.code, o.device) for o in out.operands] == [("x", "cpu")]


@cpu_only_build
def test_cpu_only_model_move(engine: Engine) -> None:
    engine.run(act.CreateModel("net", 3, 1))
    assert_same_as_torch(engine, act.Move("net", "cuda"), lambda: torch.nn.Linear(3, 1).cuda())


# --- the same-device rule on meta ---------------------------------------------------------

def test_meta_cross_device_add(engine: Engine) -> None:
    engine.run(act.CreateTensor("x", "[1.0, 2.0, 3.0]"))
    engine.run(act.CreateFilled("m", "ones", (3,), device="meta"))
    x, m = torch.tensor([1.0, 2.0, 3.0]), torch.ones(3, device="meta")
    explanation = assert_same_as_torch(engine, act.Compute("y", "add", "x", "m"), lambda: x + m)
    assert "different devices" in explanation
    out = engine.run(act.Compute("y", "mul", "m", "x"))
    assert out.error is not None and out.error.message == torch_error(lambda: m * x)[1]  # type: ignore[index]
    assert [(o.code, o.device) for o in out.operands] == [("m", "meta"), ("x", "cpu")]


def test_meta_linear_with_bias_raises_like_torch(engine: Engine) -> None:
    engine.run(act.CreateModel("net", 3, 1, device="meta"))
    engine.run(act.CreateFilled("x", "rand", (2, 3)))
    net, x = torch.nn.Linear(3, 1, device="meta"), torch.rand(2, 3)
    assert_same_as_torch(engine, act.CallModel("y", "net", "x"), lambda: net(x))


@pytest.mark.parametrize("action", [
    act.Compute("y", "matmul", "a", "m"), act.Compute("y", "matmul", "m", "a"),
    act.Compute("y", "matmul", "v", "m"), act.CallModel("y", "nobias", "a"),
    act.CallModel("y", "cpu_nobias", "m"),
], ids=lambda a: a.code())
def test_meta_garbage_is_refused(engine: Engine, action: act.Action) -> None:
    engine.run(act.CreateFilled("a", "rand", (3, 3)))
    engine.run(act.CreateFilled("v", "rand", (3,)))
    engine.run(act.CreateFilled("m", "ones", (3, 3), device="meta"))
    engine.run(act.CreateModel("nobias", 3, 1, bias=False, device="meta"))
    engine.run(act.CreateModel("cpu_nobias", 3, 1, bias=False))
    out = engine.run(action)
    assert not out.ok and out.error is not None
    assert out.error.type_name == REFUSED and not out.error.by_torch
    assert "Not run" in out.error.message
    assert "y" not in engine.names()
    assert out.memory_before == ()  # refused before anything ran


def test_meta_move_to_cpu_shows_torchs_error(engine: Engine) -> None:
    engine.run(act.CreateFilled("m", "ones", (3,), device="meta"))
    m = torch.ones(3, device="meta")
    assert_same_as_torch(engine, act.Move("m", "cpu"), lambda: m.cpu())


# --- bad input -----------------------------------------------------------------------------

@pytest.mark.parametrize("device", ["gpu", "cuda:-1", "cuda:abc"])
def test_invalid_device_strings(engine: Engine, device: str) -> None:
    engine.run(act.CreateTensor("x", "[1, 2, 3]"))
    assert_same_as_torch(engine, act.Move("x", "to", device=device),
                         lambda: torch.tensor([1]).to(device))
    assert_same_as_torch(engine, act.CreateFilled("y", "zeros", (2,), device=device),
                         lambda: torch.zeros(2, device=device))


def test_cuda_index_that_does_not_exist_is_refused(
        engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    engine.ensure_loaded()
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    engine.run(act.CreateTensor("x", "[1, 2, 3]"))
    for action in (act.Move("x", "to", device="cuda:7"), act.Move("x", "cuda", index=7),
                   act.CreateFilled("y", "zeros", (2,), device="cuda:7")):
        out = engine.run(action)
        assert out.error is not None and out.error.type_name == REFUSED
        assert out.error.message == "There is no cuda:7: PyTorch sees 1 CUDA device, cuda:0."


@pytest.mark.parametrize(("action", "needle"), [
    (act.CreateTensor("x", "[[1, 2], [3]]"), "Ragged list"),
    (act.CreateTensor("x", "[1, 2"), "Not a list of numbers"),
    (act.CreateTensor("x", "[1, 2]", dtype="float"), "Unknown dtype 'float'"),
    (act.CreateFilled("x", "zeros", (2, -1)), "0 or more"),
    (act.CreateFilled("x", "full", (2,)), "Unknown fill"),  # type: ignore[arg-type]
    (act.CreateTensor("2x", "[1]"), "not a usable name"),
    (act.CreateTensor("torch", "[1]"), "would hide"),
    (act.Compute("y", "add", "nope", "x"), "no value named 'nope'"),
    (act.Compute("y", "add", "x"), "needs a second operand"),
    (act.TensorDevice("net"), "is a model"),
    (act.CallModel("y", "x", "x"), "is a tensor, not a model"),
    (act.Delete("nope"), "no value named"),
    (act.CreateModel("n", 0, 1), "in_features"),
    (act.Move("x", "to"), "Say where"),
])
def test_bad_input_is_refused_with_a_sentence(
        engine: Engine, action: act.Action, needle: str) -> None:
    engine.run(act.CreateTensor("x", "[1.0, 2.0]"))
    engine.run(act.CreateModel("net", 2, 1))
    out = engine.run(action)
    assert not out.ok and out.error is not None
    assert out.error.type_name == REFUSED and needle in out.error.message


@pytest.mark.parametrize(("op", "a", "b", "direct"), [
    ("add", (2,), (3,), lambda a, b: a + b),
    ("matmul", (2, 3), (2, 3), lambda a, b: a @ b),
    ("mul", (4, 2), (3,), lambda a, b: a * b),
])
def test_shape_mismatch_errors(engine: Engine, op: act.ComputeOp, a: tuple[int, ...],
                               b: tuple[int, ...], direct: object) -> None:
    engine.run(act.CreateFilled("a", "ones", a))
    engine.run(act.CreateFilled("b", "ones", b))
    assert_same_as_torch(engine, act.Compute("c", op, "a", "b"),
                         lambda: direct(torch.ones(a), torch.ones(b)))  # type: ignore[operator]


def test_dtype_mismatch_error(engine: Engine) -> None:
    engine.run(act.CreateFilled("a", "ones", (2, 3)))
    engine.run(act.CreateFilled("b", "ones", (3, 2), dtype="float64"))
    explanation = assert_same_as_torch(
        engine, act.Compute("c", "matmul", "a", "b"),
        lambda: torch.ones(2, 3) @ torch.ones(3, 2, dtype=torch.float64))
    assert "dtype" in explanation


def test_torch_value_errors_are_reported(engine: Engine) -> None:
    assert_same_as_torch(engine, act.CreateTensor("x", "[9223372036854775808]"),
                         lambda: torch.tensor([2**63]))
    assert_same_as_torch(engine, act.CreateFilled("x", "rand", (2,), dtype="int64"),
                         lambda: torch.rand(2, dtype=torch.int64))


# --- size guard ----------------------------------------------------------------------------

def test_size_beyond_free_memory_is_refused_before_allocating(engine: Engine) -> None:
    available = psutil.virtual_memory().available
    n = available // 4 + 1  # float32: more bytes than are available
    out = engine.run(act.CreateFilled("big", "zeros", (n,)))
    assert not out.ok and out.error is not None
    assert out.error.type_name == REFUSED and out.error.message.startswith("Not allocated")
    assert out.memory_before == () and out.duration_s == 0.0  # nothing ran
    assert "big" not in engine.names()


def test_size_guard_uses_available_memory(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memory, "host_available_bytes", lambda: 10_000)
    assert engine.run(act.CreateFilled("ok", "zeros", (100,))).ok
    refused = engine.run(act.CreateFilled("no", "zeros", (10_000,)))
    assert refused.error is not None and refused.error.type_name == REFUSED
    engine.run(act.CreateFilled("m", "ones", (10_000,), device="meta"))  # meta holds nothing
    assert "m" in engine.names()
    engine.run(act.CreateFilled("s", "ones", (100, 2)))
    out = engine.run(act.Compute("p", "matmul", "s", act.Ref("s", "to", device="cpu")))
    assert out.error is not None  # (100,2)@(100,2) raises torch's shape error, not a refusal
    assert out.error.by_torch
    engine.run(act.CreateFilled("t", "ones", (2, 100)))
    big = engine.run(act.Compute("q", "matmul", "s", "t"))  # 100x100 float32 = 40 kB
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
    assert explanation_msgid("KeyError", "something new") == FALLBACK
    assert error_from_exception(ValueError("x")).type_name == "ValueError"


# --- devices torch knows but cannot use here, and kind spellings -----------------------------

def test_an_empty_device_gets_torchs_message_and_a_plain_one(engine: Engine) -> None:
    engine.run(act.CreateTensor("x", "[1, 2, 3]"))
    for action, direct in ((act.Move("x", "to", device=""), lambda: torch.tensor([1]).to("")),
                           (act.CreateFilled("y", "zeros", (2,), device=""),
                            lambda: torch.zeros(2, device=""))):
        explanation = assert_same_as_torch(engine, action, direct)
        assert explanation == "No device was given: type a device such as cpu, cuda or cuda:0."


@pytest.mark.skipif(torch.backends.mps.is_built(), reason="checks a build without mps")
@pytest.mark.parametrize(("action", "direct"), [
    (act.CreateFilled("z", "zeros", (2,), device="mps"), lambda: torch.zeros(2, device="mps")),
    (act.CreateTensor("z", "[1, 2]", device="mps"), lambda: torch.tensor([1, 2], device="mps")),
    (act.Move("x", "to", device="mps"), lambda: torch.tensor([1]).to("mps")),
    (act.CreateModel("net", 3, 1, device="mps"), lambda: torch.nn.Linear(3, 1, device="mps")),
], ids=lambda v: v.code() if isinstance(v, act.Action) else "")
def test_mps_is_explained_in_plain_words(engine: Engine, action: act.Action,
                                         direct: object) -> None:
    engine.run(act.CreateTensor("x", "[1, 2, 3]"))
    explanation = assert_same_as_torch(engine, action, direct)
    assert explanation.startswith("mps is Apple's GPU backend")
    assert "not built with it" in explanation


def test_other_unlinked_device_types_are_explained() -> None:
    text = explanation_msgid("RuntimeError", "PyTorch is not linked with support for xla devices")
    assert text != FALLBACK and "not built with support for that device type" in text


def test_a_torch_prefixed_dtype_is_accepted(engine: Engine) -> None:
    action = act.CreateFilled("x", "zeros", (2,), dtype="torch.float64")
    assert action.code() == "x = torch.zeros(2, dtype=torch.float64)"
    out = engine.run(action)
    assert out.ok and out.dtype == "float64", out.error
    out = engine.run(act.CreateTensor("t", "[1, 2]", dtype="torch.int8"))
    assert out.ok and out.dtype == "int8"
    assert out.code == "t = torch.tensor([1, 2], dtype=torch.int8)"
    bad = engine.run(act.CreateTensor("t", "[1, 2]", dtype="torch.float"))
    assert bad.error is not None and "Unknown dtype 'torch.float'" in bad.error.message


def test_size_guard_counts_the_result_of_pow(engine: Engine,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """x ** 0.5 of a uint8 tensor is float32: four times the input, refused before it runs."""
    engine.run(act.CreateFilled("u", "zeros", (3000,), dtype="uint8"))  # 3 kB
    monkeypatch.setattr(memory, "host_available_bytes", lambda: 10_000)  # room for 8 kB
    out = engine.run(act.Compute("r", "pow", "u", exponent=0.5))  # 12 kB of float32
    assert out.error is not None and out.error.type_name == REFUSED
    assert "r" not in engine.names()
    assert engine.run(act.Compute("r", "pow", "u", exponent=2)).ok  # uint8 stays 3 kB


def test_size_guard_counts_a_broadcast_and_a_promoted_result(
        engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    """(3000, 1) + (1, 3000) of uint8 is 9 MB of uint8; u * f of uint8 and float64 is
    float64: each result is sized as torch makes it, and refused before it runs."""
    engine.run(act.CreateFilled("col", "zeros", (3000, 1), dtype="uint8"))  # 3 kB
    engine.run(act.CreateFilled("row", "zeros", (1, 3000), dtype="uint8"))
    engine.run(act.CreateFilled("f", "zeros", (3000, 1), dtype="float64"))  # 24 kB
    monkeypatch.setattr(memory, "host_available_bytes", lambda: 100_000)  # room for 80 kB
    out = engine.run(act.Compute("r", "add", "col", "row"))
    assert out.error is not None and out.error.type_name == REFUSED
    assert "8.58 MiB" in out.error.message, out.error.message  # 3000 * 3000 bytes
    assert engine.run(act.Compute("r", "mul", "col", "col")).ok  # 3 kB of uint8
    assert engine.run(act.Compute("r", "mul", "col", "f")).dtype == "float64"  # 24 kB
    monkeypatch.setattr(memory, "host_available_bytes", lambda: 25_000)  # room for 20 kB
    out = engine.run(act.Compute("r", "mul", "col", "f"))  # 24 kB of float64, not 3 kB
    assert out.error is not None and out.error.type_name == REFUSED
    engine.run(act.CreateFilled("odd", "zeros", (2, 7), dtype="uint8"))  # no broadcast
    bad = engine.run(act.Compute("r", "add", "col", "odd"))  # the guard stays out of it
    assert bad.error is not None and bad.error.type_name == "RuntimeError"  # torch's own


def test_cuda_move_between_gpus_is_checked_like_a_copy(monkeypatch: pytest.MonkeyPatch) -> None:
    """.cuda(1) of a tensor on cuda:0 allocates on cuda:1: the guard must see it (a fake
    tensor on cuda:0 and a recording check_fits stand in for two GPUs)."""
    import torch

    from gpumon.playground.kernel import ops
    from gpumon.playground.kernel.action_run import ActionRun

    checked: list[tuple[int, str, int | None]] = []
    monkeypatch.setattr(ops, "check_fits", lambda n, t, i: checked.append((n, t, i)))
    monkeypatch.setattr(ops, "check_cuda_index", lambda _i: None)

    class OnGpu0:
        device = torch.device("cuda", 0)
        nbytes = 4096

    monkeypatch.setattr(ops, "_torch", lambda: type("T", (), {"Tensor": OnGpu0}))
    ops.moved(OnGpu0(), "cuda", None, 1, ActionRun())
    ops.moved(OnGpu0(), "cuda", None, 0, ActionRun())  # already there: no copy, no check
    assert checked == [(4096, "cuda", 1)]


def test_an_inline_move_is_made_inside_the_timed_region(
        engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    """``y + x.cpu()``: the move runs inside run.execute (timed, memory measured), and the
    operands are recorded as they were used."""
    from gpumon.playground.kernel import ops

    inside: list[bool] = []
    real = ops.moved

    def spying(value, how, device, index, run):
        fetch = real(value, how, device, index, run)

        def wrapped():
            inside.append(run.in_torch)
            return fetch()
        return wrapped

    monkeypatch.setattr(ops, "moved", spying)
    engine.run(act.CreateTensor("x", "[1.0, 2.0]"))
    engine.run(act.CreateTensor("y", "[3.0, 4.0]"))
    out = engine.run(act.Compute("z", "add", "y", act.Ref("x", "cpu")))
    assert out.ok and inside == [True, True]
    assert [o.code for o in out.operands] == ["y", "x.cpu()"]


def test_an_inline_copy_counts_its_bytes_where_it_lands() -> None:
    import torch

    from gpumon.playground.kernel import ops
    from gpumon.playground.kernel.action_run import ActionRun

    x = torch.ones(4)  # 16 bytes on the CPU
    to_gpu = ops.Operand("x.cuda(0)", x, torch.device("cuda", 0), lambda: x, ActionRun())
    stays = ops.Operand("x.cpu()", x, torch.device("cpu"), lambda: x, ActionRun())
    to_meta = ops.Operand("x.to('meta')", x, torch.device("meta"), lambda: x, ActionRun())
    assert (to_gpu.nbytes(), stays.nbytes(), to_meta.nbytes()) == (16, 0, 0)


def _no_such_device(index: int) -> bool:
    raise RuntimeError(f"CUDA error: invalid device ordinal ({index}): this machine's GPU is 0")


def test_empty_cache_touches_only_gpus_where_torch_holds_memory(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Touched devices are synchronised afterwards, which would create a CUDA context on an
    unused GPU: a fake torch with 2 GPUs, memory reserved on cuda:1 only."""
    from types import SimpleNamespace

    from gpumon.playground.kernel import action_run, ops
    from gpumon.playground.kernel.action_run import ActionRun

    reserved = {0: 0, 1: 512}
    cuda = SimpleNamespace(is_available=lambda: True, device_count=lambda: 2,
                           memory_reserved=reserved.__getitem__, empty_cache=lambda: None)
    monkeypatch.setattr(ops, "_torch", lambda: SimpleNamespace(cuda=cuda))
    # What would be synchronised is recorded, never done: the real torch must not be asked
    # about the fake's cuda:1 (on a 1-GPU machine with CUDA started, _cuda_hasPrimaryContext(1)
    # raises). As there, the real torch says CUDA is started and refuses that question.
    synchronised: list[list[str]] = []
    monkeypatch.setattr(action_run, "synchronize", synchronised.append)
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: True)
    monkeypatch.setattr(torch._C, "_cuda_hasPrimaryContext", _no_such_device, raising=False)
    run = ActionRun()
    ops.empty_cache({}, act.EmptyCache(), run)
    assert run.devices == ["cuda:1"] and synchronised == [["cuda:1"]]
