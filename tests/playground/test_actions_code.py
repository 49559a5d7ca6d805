"""Every action renders the exact Python it equals."""

from __future__ import annotations

import ast

import pytest

from gpumon.playground.data import actions as act

CASES: list[tuple[act.Action, str]] = [
    (act.IsAvailable(), "torch.cuda.is_available()"),
    (act.DeviceCount(), "torch.cuda.device_count()"),
    (act.CurrentDevice(), "torch.cuda.current_device()"),
    (act.DeviceName(0), "torch.cuda.get_device_name(0)"),
    (act.DeviceProperties(1), "torch.cuda.get_device_properties(1)"),
    (act.Versions(), "torch.__version__, torch.version.cuda"),
    (act.TensorDevice("x"), "x.device"),
    (act.CreateTensor("x", "[1,2,3]"), "x = torch.tensor([1, 2, 3])"),
    (act.CreateTensor("x", "[1, 2, 3]", device="cpu"), "x = torch.tensor([1, 2, 3], device='cpu')"),
    (act.CreateTensor("x", "[[1.5], [2]]", dtype="float64", device="cuda:0"),
     "x = torch.tensor([[1.5], [2]], dtype=torch.float64, device='cuda:0')"),
    (act.CreateFilled("x", "zeros", (2, 3)), "x = torch.zeros(2, 3)"),
    (act.CreateFilled("x", "ones", (4,), dtype="int32"), "x = torch.ones(4, dtype=torch.int32)"),
    (act.CreateFilled("x", "rand", (2, 3), device="cuda:0"),
     "x = torch.rand(2, 3, device='cuda:0')"),
    (act.CreateFilled("x", "randn", ()), "x = torch.randn(())"),
    (act.CreateFilled("x", "arange", (6,)), "x = torch.arange(6)"),
    (act.CreateFilled("x", "arange", (2, 3), device="cpu"),
     "x = torch.arange(6, device='cpu').reshape(2, 3)"),
    (act.Move("x", "cuda", index=0), "x = x.cuda(0)"),
    (act.Move("x", "cuda"), "x = x.cuda()"),
    (act.Move("x", "cuda", index=1, dest="z"), "z = x.cuda(1)"),
    (act.Move("x", "to", device="cuda:0", dest="y"), "y = x.to('cuda:0')"),
    (act.Move("x", "cpu"), "x = x.cpu()"),
    (act.Compute("y", "pow", "x"), "y = x ** 2"),
    (act.Compute("y", "pow", "x", exponent=0.5), "y = x ** 0.5"),
    (act.Compute("z", "add", "y", act.Ref("x", "cpu")), "z = y + x.cpu()"),
    (act.Compute("z", "mul", "x", "y"), "z = x * y"),
    (act.Compute("z", "matmul", "x", act.Ref("y", "to", device="cuda:1")),
     "z = x @ y.to('cuda:1')"),
    (act.Compute("s", "sum", "x"), "s = x.sum()"),
    (act.CreateModel("net", 3, 1), "net = nn.Linear(3, 1)"),
    (act.CreateModel("net", 3, 1, bias=False, device="meta"),
     "net = nn.Linear(3, 1, bias=False, device='meta')"),
    (act.Move("net", "cuda"), "net = net.cuda()"),
    (act.ModelParameters("net"), "[p.device for p in net.parameters()]"),
    (act.CallModel("y", "net", "x"), "y = net(x)"),
    (act.CallModel("y", "net", act.Ref("x", "cuda", index=0)), "y = net(x.cuda(0))"),
    (act.Delete("x"), "del x"),
    (act.EmptyCache(), "torch.cuda.empty_cache()"),
    (act.TryGpu(), "try_gpu(0)"),
    (act.TryGpu(10), "try_gpu(10)"),
    (act.TryAllGpus(), "try_all_gpus()"),
    (act.ToNumpy("x"), "x.numpy()"),
    (act.ToNumpy(act.Ref("x", "cpu")), "x.cpu().numpy()"),
    (act.RunCode("y = x @ x.T"), "y = x @ x.T"),  # typed code is its own text
]


@pytest.mark.parametrize(("action", "code"), CASES, ids=[c for _, c in CASES])
def test_code_renders_the_python(action: act.Action, code: str) -> None:
    assert action.code() == code
    ast.parse(code)  # it is real Python


def test_every_action_class_has_a_code_case() -> None:
    classes = {type(a) for a, _ in CASES}
    defined = {c for c in vars(act).values()
               if isinstance(c, type) and issubclass(c, act.Action) and c is not act.Action}
    assert defined == classes


def test_malformed_values_still_render() -> None:
    assert act.CreateTensor("x", " [[1, 2], [3]] ").code() == "x = torch.tensor([[1, 2], [3]])"


def test_actions_are_frozen_and_hashable() -> None:
    action = act.Compute("y", "pow", "x")
    with pytest.raises(AttributeError):
        action.result = "z"  # type: ignore[misc]
    assert hash(action) == hash(act.Compute("y", "pow", "x"))
