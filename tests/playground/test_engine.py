"""Engine.run on this machine's torch: results, where they live, and copies."""

from __future__ import annotations

import ctypes
import time

import pytest
import torch

from gpumon.playground.data import actions as act
from gpumon.playground.kernel.engine import Engine


def run_ok(engine: Engine, action: act.Action) -> object:
    outcome = engine.run(action)
    assert outcome.ok, outcome.error
    assert outcome.error is None
    assert outcome.code == action.code()
    return outcome


def test_lazy_loading_status(engine: Engine) -> None:
    assert not engine.is_loaded
    status = engine.ensure_loaded()
    assert status.ok and engine.is_loaded
    assert status.torch_version == torch.__version__
    assert status.cuda_version == torch.version.cuda


def test_queries_match_torch(engine: Engine) -> None:
    assert engine.run(act.IsAvailable()).preview == repr(torch.cuda.is_available())
    assert engine.run(act.DeviceCount()).preview == repr(torch.cuda.device_count())
    versions = engine.run(act.Versions())
    assert versions.preview == repr((torch.__version__, torch.version.cuda))
    assert ("torch", torch.__version__) in versions.details


def test_create_tensor_default_cpu(engine: Engine) -> None:
    before = time.time()
    out = engine.run(act.CreateTensor("x", "[1, 2, 3]"))
    assert out.ok and out.kind == "tensor" and out.result_name == "x"
    assert out.preview == repr(torch.tensor([1, 2, 3]))
    assert (out.shape, out.dtype, out.device) == ((3,), "int64", "cpu")
    assert out.grad_fn is None
    assert before <= out.started_at <= time.time()
    assert out.duration_s >= 0
    assert out.devices == ("cpu",)
    assert torch.equal(engine.get("x"), torch.tensor([1, 2, 3]))  # type: ignore[arg-type]


def test_create_tensor_dtype_and_device(engine: Engine) -> None:
    out = engine.run(act.CreateTensor("x", "[[1, 2], [3, 4]]", dtype="float64", device="cpu"))
    assert out.ok and out.dtype == "float64" and out.shape == (2, 2) and out.device == "cpu"


@pytest.mark.parametrize("kind", act.FILL_KINDS)
def test_create_filled(engine: Engine, kind: act.FillKind) -> None:
    out = engine.run(act.CreateFilled("t", kind, (2, 3)))
    assert out.ok, out.error
    assert out.shape == (2, 3) and out.device == "cpu"
    expected_dtype = "int64" if kind == "arange" else "float32"
    assert out.dtype == expected_dtype
    if kind == "arange":
        assert torch.equal(engine.get("t"), torch.arange(6).reshape(2, 3))  # type: ignore[arg-type]


def test_tensor_device_query(engine: Engine) -> None:
    run_ok(engine, act.CreateTensor("x", "[1, 2, 3]"))
    out = engine.run(act.TensorDevice("x"))
    assert out.ok and out.kind == "value"
    assert out.preview == repr(torch.device("cpu")) and out.device == "cpu"


def test_results_stay_on_the_inputs_device(engine: Engine) -> None:
    run_ok(engine, act.CreateTensor("x", "[1, 2, 3]"))
    y = engine.run(act.Compute("y", "pow", "x"))
    assert y.preview == repr(torch.tensor([1, 4, 9])) and y.device == "cpu"
    z = engine.run(act.Compute("z", "add", "y", act.Ref("x", "cpu")))
    assert z.preview == repr(torch.tensor([2, 6, 12]))
    assert [(o.code, o.device) for o in z.operands] == [("y", "cpu"), ("x.cpu()", "cpu")]
    assert engine.run(act.Compute("p", "mul", "x", "y")).preview == repr(torch.tensor([1, 8, 27]))
    assert engine.run(act.Compute("d", "matmul", "x", "y")).preview == repr(torch.tensor(36))
    assert engine.run(act.Compute("s", "sum", "x")).preview == repr(torch.tensor(6))


def test_move_to_same_device_makes_no_copy(engine: Engine) -> None:
    run_ok(engine, act.CreateTensor("x", "[1, 2, 3]"))
    x = engine.get("x")
    out = engine.run(act.Move("x", "cpu", dest="z"))
    assert out.ok and out.copied is False and engine.get("z") is x
    out = engine.run(act.Move("x", "to", device="cpu"))
    assert out.ok and out.copied is False


def test_move_to_another_dtype_device_copies(engine: Engine) -> None:
    run_ok(engine, act.CreateTensor("x", "[1.0, 2.0]"))
    out = engine.run(act.Move("x", "to", device="meta", dest="m"))
    assert out.ok and out.copied is True and out.device == "meta"


def test_model_lifecycle_on_cpu(engine: Engine) -> None:
    out = run_ok(engine, act.CreateModel("net", 3, 1))
    assert out.kind == "model" and out.device == "cpu"  # type: ignore[attr-defined]
    params = engine.run(act.ModelParameters("net"))
    assert params.preview == repr([torch.device("cpu"), torch.device("cpu")])
    assert [name for name, _ in params.details] == ["weight", "bias"]
    run_ok(engine, act.CreateFilled("x", "rand", (2, 3)))
    y = engine.run(act.CallModel("y", "net", "x"))
    assert y.ok and y.shape == (2, 1) and y.device == "cpu" and y.grad_fn == "AddmmBackward0"
    moved = engine.run(act.Move("net", "cpu"))
    assert moved.ok and moved.copied is False and moved.kind == "model"


def test_delete_releases_the_tensor_and_empty_cache_names_its_devices(engine: Engine) -> None:
    import gc
    import weakref

    run_ok(engine, act.CreateTensor("x", "[1, 2, 3]"))
    ref = weakref.ref(engine.get("x"))  # type: ignore[arg-type]
    out = engine.run(act.Delete("x"))
    assert out.ok and out.code == "del x" and "x" not in engine.names()
    gc.collect()
    assert ref() is None  # nothing in the engine or the outcome kept the tensor alive
    # its memory readings are of the GPUs where torch holds memory (only those are touched:
    # ops.empty_cache), none without CUDA; on a GPU machine this process may hold some
    held = [f"cuda:{i}" for i in range(torch.cuda.device_count())
            if torch.cuda.memory_reserved(i) > 0] if torch.cuda.is_available() else []
    cleared = engine.run(act.EmptyCache())
    assert cleared.ok and cleared.code == "torch.cuda.empty_cache()"
    assert list(cleared.devices) == held


def test_workspace_entries(engine: Engine) -> None:
    assert list(engine.workspace()) == []
    run_ok(engine, act.CreateFilled("x", "zeros", (2, 3), dtype="float64"))
    run_ok(engine, act.CreateModel("net", 3, 2))
    run_ok(engine, act.CreateFilled("m", "ones", (1000,), device="meta"))
    x, net, m = engine.workspace()
    assert (x.name, x.kind, x.shape, x.dtype, x.device, x.size_bytes) == (
        "x", "tensor", (2, 3), "float64", "cpu", 48)
    assert (net.kind, net.device, net.parameters, net.size_bytes) == ("model", "cpu", 8, 32)
    assert (m.device, m.size_bytes) == ("meta", 0)


def test_memory_readings_for_cpu(engine: Engine) -> None:
    # ones, not zeros: zeros may come from calloc's untouched pages, which RSS does not count.
    # Free blocks of this worker's C heap whose pages are still resident go back to the
    # system first: the tensor may be served from one, and RSS would not move.
    trim = getattr(ctypes.CDLL(None), "malloc_trim", None)  # glibc's
    if trim is not None:
        trim(0)
    out = engine.run(act.CreateFilled("x", "ones", (4096, 4096)))  # 64 MiB of float32
    before, after = out.reading("cpu", after=False), out.reading("cpu")
    assert before is not None and after is not None
    assert before.rss_bytes is not None and after.rss_bytes is not None
    assert after.rss_bytes - before.rss_bytes >= 0.9 * 64 * 2**20  # the readings bracket it
    if not torch.cuda.is_available():
        assert all(r.device == "cpu" for r in out.memory_after)


def test_outcomes_hold_no_tensors(engine: Engine) -> None:
    out = engine.run(act.CreateFilled("x", "zeros", (3,)))
    for value in vars(out).values():
        assert not isinstance(value, torch.Tensor)


def test_long_tensor_preview_is_shortened(engine: Engine) -> None:
    out = engine.run(act.CreateFilled("x", "rand", (200, 200)))
    assert out.ok and len(out.preview.splitlines()) <= 16 and len(out.preview) <= 1500
    huge = engine.run(act.CreateFilled("h", "zeros", (10_000_001,), dtype="uint8"))
    assert huge.ok and huge.preview.startswith("# 10,000,001 elements")


def test_run_never_raises_on_nonsense(engine: Engine) -> None:
    class Strange(act.Action):
        def code(self) -> str:
            raise ValueError("boom")

    out = engine.run(Strange())
    assert not out.ok and out.error is not None and not out.error.by_torch
    bad = engine.run(act.CreateFilled("x", "zeros", ("a",)))  # type: ignore[arg-type]
    assert not bad.ok and bad.error is not None
    run_ok(engine, act.CreateTensor("x", "[1.0, 2.0]"))  # the name exists: the NaN is refused
    nan = engine.run(act.Compute("y", "pow", "x", exponent=float("nan")))
    assert not nan.ok and nan.error is not None and not nan.error.by_torch
    assert "exponent must be a finite number" in nan.error.message
