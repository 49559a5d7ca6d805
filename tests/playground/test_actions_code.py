"""Every action renders the exact Python it equals."""

from __future__ import annotations

import ast

import pytest

from gpumon.playground import actions as A

CASES: list[tuple[A.Action, str]] = [
    (A.IsAvailable(), "torch.cuda.is_available()"),
    (A.DeviceCount(), "torch.cuda.device_count()"),
    (A.CurrentDevice(), "torch.cuda.current_device()"),
    (A.DeviceName(0), "torch.cuda.get_device_name(0)"),
    (A.DeviceProperties(1), "torch.cuda.get_device_properties(1)"),
    (A.Versions(), "torch.__version__, torch.version.cuda"),
    (A.TensorDevice("x"), "x.device"),
    (A.CreateTensor("x", "[1,2,3]"), "x = torch.tensor([1, 2, 3])"),
    (A.CreateTensor("x", "[1, 2, 3]", device="cpu"), "x = torch.tensor([1, 2, 3], device='cpu')"),
    (A.CreateTensor("x", "[[1.5], [2]]", dtype="float64", device="cuda:0"),
     "x = torch.tensor([[1.5], [2]], dtype=torch.float64, device='cuda:0')"),
    (A.CreateFilled("x", "zeros", (2, 3)), "x = torch.zeros(2, 3)"),
    (A.CreateFilled("x", "ones", (4,), dtype="int32"), "x = torch.ones(4, dtype=torch.int32)"),
    (A.CreateFilled("x", "rand", (2, 3), device="cuda:0"),
     "x = torch.rand(2, 3, device='cuda:0')"),
    (A.CreateFilled("x", "randn", ()), "x = torch.randn(())"),
    (A.CreateFilled("x", "arange", (6,)), "x = torch.arange(6)"),
    (A.CreateFilled("x", "arange", (2, 3), device="cpu"),
     "x = torch.arange(6, device='cpu').reshape(2, 3)"),
    (A.Move("x", "cuda", index=0), "x = x.cuda(0)"),
    (A.Move("x", "cuda"), "x = x.cuda()"),
    (A.Move("x", "cuda", index=1, dest="z"), "z = x.cuda(1)"),
    (A.Move("x", "to", device="cuda:0", dest="y"), "y = x.to('cuda:0')"),
    (A.Move("x", "cpu"), "x = x.cpu()"),
    (A.Compute("y", "pow", "x"), "y = x ** 2"),
    (A.Compute("y", "pow", "x", exponent=0.5), "y = x ** 0.5"),
    (A.Compute("z", "add", "y", A.Ref("x", "cpu")), "z = y + x.cpu()"),
    (A.Compute("z", "mul", "x", "y"), "z = x * y"),
    (A.Compute("z", "matmul", "x", A.Ref("y", "to", device="cuda:1")), "z = x @ y.to('cuda:1')"),
    (A.Compute("s", "sum", "x"), "s = x.sum()"),
    (A.CreateModel("net", 3, 1), "net = nn.Linear(3, 1)"),
    (A.CreateModel("net", 3, 1, bias=False, device="meta"),
     "net = nn.Linear(3, 1, bias=False, device='meta')"),
    (A.Move("net", "cuda"), "net = net.cuda()"),
    (A.ModelParameters("net"), "[p.device for p in net.parameters()]"),
    (A.CallModel("y", "net", "x"), "y = net(x)"),
    (A.CallModel("y", "net", A.Ref("x", "cuda", index=0)), "y = net(x.cuda(0))"),
    (A.Delete("x"), "del x"),
    (A.EmptyCache(), "torch.cuda.empty_cache()"),
    (A.TryGpu(), "try_gpu(0)"),
    (A.TryGpu(10), "try_gpu(10)"),
    (A.TryAllGpus(), "try_all_gpus()"),
    (A.ToNumpy("x"), "x.numpy()"),
    (A.ToNumpy(A.Ref("x", "cpu")), "x.cpu().numpy()"),
]


@pytest.mark.parametrize(("action", "code"), CASES, ids=[c for _, c in CASES])
def test_code_renders_the_python(action: A.Action, code: str) -> None:
    assert action.code() == code
    ast.parse(code)  # it is real Python


def test_every_action_class_has_a_code_case() -> None:
    classes = {type(a) for a, _ in CASES}
    defined = {c for c in vars(A).values()
               if isinstance(c, type) and issubclass(c, A.Action) and c is not A.Action}
    assert defined == classes


def test_malformed_values_still_render() -> None:
    assert A.CreateTensor("x", " [[1, 2], [3]] ").code() == "x = torch.tensor([[1, 2], [3]])"


def test_actions_are_frozen_and_hashable() -> None:
    action = A.Compute("y", "pow", "x")
    with pytest.raises(AttributeError):
        action.result = "z"  # type: ignore[misc]
    assert hash(action) == hash(A.Compute("y", "pow", "x"))
