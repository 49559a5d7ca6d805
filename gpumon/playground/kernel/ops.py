"""One handler per action: validate cheaply, refuse what would mislead, then let torch run.

Handlers raise; :class:`~gpumon.playground.kernel.engine.Engine` turns that into an Outcome. Input
that torch would reject anyway with a clear message (a ``.cuda()`` on a CPU-only build) is
passed to torch, so the real error is what the user sees.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gpumon.i18n import tr
from gpumon.playground.data import actions as act
from gpumon.playground.data.errors import Refusal
from gpumon.playground.data.values import ValuesError, parse_values
from gpumon.playground.kernel import cuda_calls
from gpumon.playground.kernel.describe import dtype_name, model_bytes, operand_info
from gpumon.playground.kernel.memory import check_fits
from gpumon.playground.kernel.metarules import check_call_meta, check_matmul_meta
from gpumon.playground.kernel.queries import query, try_gpus
from gpumon.playground.kernel.torch_devices import check_cuda_index, resolve_device
from gpumon.playground.kernel.workspace_names import check_dtype, check_name, lookup, lookup_tensor

if TYPE_CHECKING:
    import torch

    from gpumon.playground.kernel.action_run import ActionRun

Values = dict[str, Any]
Handler = Callable[[Values, Any, "ActionRun"], None]
MAX_DIMS = 8


def _torch() -> Any:
    import torch

    return torch


def moved(value: Any, how: str | None, device: str | None, index: int | None,
          run: ActionRun) -> Callable[[], Any]:
    """Validate a move of a tensor or model and return the call that performs it."""
    torch = _torch()
    if how is None:
        return lambda: value
    source_dev = value.device if isinstance(value, torch.Tensor) else None
    nbytes = int(value.nbytes) if isinstance(value, torch.Tensor) else model_bytes(value)
    if source_dev is not None and source_dev.type == "meta":
        nbytes = 0  # torch itself refuses to copy out of meta: show its error
    if source_dev is not None:
        run.hold(source_dev)
    elif isinstance(value, torch.nn.Module):
        run.hold(*(p.device for p in value.parameters()))
    if how == "to":
        if device is None:
            raise Refusal(tr("Say where to move it: .to('cpu') or .to('cuda:0')."))
        target = resolve_device(device)
        run.touch(target)
        if source_dev is None or source_dev != target:
            check_fits(nbytes, target.type, target.index)
        return lambda: value.to(device)
    if how == "cuda":
        check_cuda_index(index)
        run.touch("cuda" if index is None else f"cuda:{index}")
        # A copy unless it is already there: z.cuda(1) of a tensor on cuda:0 copies too.
        if source_dev is None or source_dev.type != "cuda" or \
                (index is not None and source_dev.index != index):
            check_fits(nbytes, "cuda", index)
        return (lambda: value.cuda()) if index is None else (lambda: value.cuda(index))
    if how == "cpu":
        run.touch("cpu")
        if source_dev is None or source_dev.type != "cpu":
            check_fits(nbytes, "cpu", None)
        return lambda: value.cpu()
    raise Refusal(tr("Unknown move {how}: use to, cuda or cpu.", how=repr(how)))


@dataclass
class Operand:
    """An input as it will be when the action runs. An inline move (``y + x.cpu()``) is made
    by :meth:`get`, inside the timed and measured ``run.execute``, so its copy counts."""

    code: str
    source: torch.Tensor
    device: torch.device  # where the input will be (the move's target)
    fetch: Callable[[], torch.Tensor]
    run: ActionRun

    def dim(self) -> int:
        return int(self.source.dim())

    def meta(self) -> torch.Tensor:
        """A data-free stand-in of the same shape and dtype (for the guards)."""
        return meta_copy(self.source)

    def nbytes(self) -> int:
        """Bytes the inline move allocates (0 when there is none)."""
        same = self.device == self.source.device or (
            self.device.type == self.source.device.type and self.device.index is None)
        return 0 if same or self.device.type == "meta" else int(self.source.nbytes)

    def get(self) -> torch.Tensor:
        """Make the move (if any), record the input as it is, and return it."""
        tensor = self.fetch()
        self.run.operands.append(operand_info(self.code, tensor))
        self.run.hold(tensor.device)
        return tensor


def operand(values: Values, ref: str | act.Ref, run: ActionRun) -> Operand:
    """Resolve an input (validated and guarded now; an inline move is made by ``get``)."""
    torch = _torch()
    r = act.as_ref(ref)
    source = lookup_tensor(values, r.name)
    fetch = moved(source, r.how, r.device, r.index, run)
    if r.how is None:
        target = source.device
    elif r.how == "cpu":
        target = torch.device("cpu")
    elif r.how == "cuda":
        target = torch.device("cuda", r.index) if r.index is not None else torch.device("cuda")
    else:
        target = resolve_device(r.device or "cpu")
    run.hold(source.device)
    return Operand(r.code(), source, target, fetch, run)


def meta_copy(t: torch.Tensor) -> torch.Tensor:
    return _torch().empty(t.shape, dtype=t.dtype, device="meta")


def guard_result(meta_fn: Callable[[], Any], device: torch.device, copies: int = 0) -> None:
    """Refuse before allocating a result that would not fit where the inputs are, counting
    ``copies`` (bytes of inline moves made in the same action) with it."""
    torch = _torch()
    try:
        result = meta_fn()
    except Exception:  # the real call will raise torch's own error
        return
    if isinstance(result, torch.Tensor):
        check_fits(result.numel() * result.element_size() + copies, device.type, device.index)


def guard_elementwise(a: torch.Tensor, b: torch.Tensor | float, device: torch.device,
                      copies: int = 0) -> None:
    """``guard_result`` for an elementwise op (``a + b``, ``a * b``, ``a ** b``): the result's
    shape by broadcasting and its dtype by type promotion, as torch makes them, without a
    meta tensor. The first elementwise op on meta tensors imports torch._dynamo, over a
    second of CPU in the kernel's first such action."""
    torch = _torch()
    try:
        shape = torch.broadcast_shapes(a.shape, b.shape) if isinstance(b, torch.Tensor) \
            else a.shape
        dtype = torch.result_type(a, b)
    except Exception:  # the real call will raise torch's own error
        return
    check_fits(math.prod(shape) * dtype.itemsize + copies, device.type, device.index)


# --- handlers ----------------------------------------------------------------------------


def create_tensor(values: Values, action: act.CreateTensor, run: ActionRun) -> None:
    torch = _torch()
    check_name(action.name)
    dtype = check_dtype(action.dtype)
    try:
        parsed = parse_values(action.values)
    except ValuesError as exc:
        raise Refusal(str(exc), tr("torch.tensor needs numbers in rectangular nested "
                                   "lists.")) from None
    kw: dict[str, Any] = {"dtype": dtype}
    if action.device is not None:
        device = resolve_device(action.device)
        run.touch(device)
        kw["device"] = action.device
        check_fits(parsed.numel * 8, device.type, device.index)
    else:
        run.touch("cpu")
    values[action.name] = run.execute(lambda: torch.tensor(parsed.values, **kw))
    run.result_name = action.name


def create_filled(values: Values, action: act.CreateFilled, run: ActionRun) -> None:
    torch = _torch()
    check_name(action.name)
    if action.kind not in act.FILL_KINDS:
        raise Refusal(tr("Unknown fill {kind}; choose one of: {choices}.",
                         kind=repr(action.kind), choices=", ".join(act.FILL_KINDS)))
    shape = tuple(action.shape)
    if len(shape) > MAX_DIMS or not all(type(d) is int and d >= 0 for d in shape):
        raise Refusal(tr("A shape is up to {most} whole numbers, each 0 or more; got {shape}.",
                         most=MAX_DIMS, shape=shape))
    dtype = check_dtype(action.dtype)
    device = resolve_device(action.device) if action.device is not None else None
    run.touch(device or "cpu")
    kw: dict[str, Any] = {"dtype": dtype}
    if action.device is not None:
        kw["device"] = action.device
    default = torch.int64 if action.kind == "arange" else torch.get_default_dtype()
    itemsize = torch.empty((), dtype=dtype or default, device="meta").element_size()
    target = device or torch.device("cpu")
    check_fits(math.prod(shape) * itemsize, target.type, target.index)
    if action.kind == "arange":
        numel = math.prod(shape)
        fn = (lambda: torch.arange(numel, **kw).reshape(shape)) if len(shape) != 1 \
            else (lambda: torch.arange(numel, **kw))
    else:
        factory = getattr(torch, action.kind)
        fn = lambda: factory(shape, **kw)  # noqa: E731
    values[action.name] = run.execute(fn)
    run.result_name = action.name


def create_model(values: Values, action: act.CreateModel, run: ActionRun) -> None:
    torch = _torch()
    check_name(action.name)
    for label, n in (("in_features", action.in_features), ("out_features", action.out_features)):
        if type(n) is not int or n < 1:
            raise Refusal(tr("{label} must be a whole number of 1 or more; got {value}.",
                             label=label, value=repr(n)))
    kw: dict[str, Any] = {"bias": action.bias}
    target = torch.device("cpu")
    if action.device is not None:
        target = resolve_device(action.device)
        kw["device"] = action.device
    run.touch(target)
    count = action.in_features * action.out_features + (action.out_features if action.bias else 0)
    check_fits(count * 4, target.type, target.index)
    values[action.name] = run.execute(
        lambda: torch.nn.Linear(action.in_features, action.out_features, **kw))
    run.result_name = action.name


def move(values: Values, action: act.Move, run: ActionRun) -> None:
    torch = _torch()
    check_name(action.target)
    source = lookup(values, action.source)
    run.operands.append(operand_info(action.source, source))
    before = {n: p.device for n, p in source.named_parameters()} \
        if isinstance(source, torch.nn.Module) else {}
    result = run.execute(moved(source, action.how, action.device, action.index, run))
    if isinstance(source, torch.nn.Module):
        run.copied = any(p.device != before.get(n) for n, p in result.named_parameters())
        run.details = tuple((n, str(p.device)) for n, p in result.named_parameters())
    else:
        run.copied = result is not source
    values[action.target] = result
    run.result_name = action.target


_BINARY: dict[str, Callable[[Any, Any], Any]] = {
    "add": lambda a, b: a + b, "mul": lambda a, b: a * b, "matmul": lambda a, b: a @ b,
}


def compute(values: Values, action: act.Compute, run: ActionRun) -> None:
    check_name(action.result)
    if action.op not in act.COMPUTE_OPS:
        raise Refusal(tr("Unknown operation {op}; choose one of: {choices}.",
                         op=repr(action.op), choices=", ".join(act.COMPUTE_OPS)))
    a = operand(values, action.a, run)
    if action.op in _BINARY:
        if action.b is None:
            raise Refusal(tr("{op} needs a second operand.", op=action.op))
        b = operand(values, action.b, run)
        binary = _BINARY[action.op]
        copies = sum(o.nbytes() for o in (a, b) if o.device == a.device)
        if action.op == "matmul":
            check_matmul_meta(a, b)  # type: ignore[arg-type]  # reads .device and .dim()
            guard_result(lambda: binary(a.meta(), b.meta()), a.device, copies)
        else:
            guard_elementwise(a.source, b.source, a.device, copies)
        fn: Callable[[], Any] = lambda: binary(a.get(), b.get())  # noqa: E731
    elif action.op == "pow":
        exponent = action.exponent
        if type(exponent) not in (int, float) or not math.isfinite(exponent):
            raise Refusal(tr("The exponent must be a finite number; got {value}.",
                             value=repr(exponent)))
        # The result counts too: x ** 0.5 of a uint8 tensor is float32, four times its size.
        guard_elementwise(a.source, exponent, a.device, a.nbytes())
        fn = lambda: a.get() ** exponent  # noqa: E731
    else:
        fn = lambda: a.get().sum()  # noqa: E731
    values[action.result] = run.execute(fn)
    run.result_name = action.result


def model_parameters(values: Values, action: act.ModelParameters, run: ActionRun) -> None:
    torch = _torch()
    model = lookup(values, action.name)
    if not isinstance(model, torch.nn.Module):
        raise Refusal(tr("{name} is a tensor, not a model.", name=repr(action.name)))
    run.operands.append(operand_info(action.name, model))
    run.kind = "value"
    run.execute(lambda: [p.device for p in model.parameters()])
    run.details = tuple((n, tr("{device}, shape {shape}, {dtype}", device=str(p.device),
                               shape=tuple(p.shape), dtype=dtype_name(p.dtype)))
                        for n, p in model.named_parameters())


def call_model(values: Values, action: act.CallModel, run: ActionRun) -> None:
    torch = _torch()
    check_name(action.result)
    model = lookup(values, action.model)
    if not isinstance(model, torch.nn.Module):
        raise Refusal(tr("{name} is a tensor, not a model.", name=repr(action.model)))
    run.operands.append(operand_info(action.model, model))
    for p in model.parameters():
        run.hold(p.device)
    x = operand(values, action.input, run)
    check_call_meta(model, x)  # type: ignore[arg-type]  # reads .device
    if isinstance(model, torch.nn.Linear):
        bias = None if model.bias is None else meta_copy(model.bias)
        guard_result(lambda: torch.nn.functional.linear(x.meta(), meta_copy(model.weight),
                                                        bias), x.device, x.nbytes())
    values[action.result] = run.execute(lambda: model(x.get()))
    run.result_name = action.result


def delete(values: Values, action: act.Delete, run: ActionRun) -> None:
    torch = _torch()
    value = lookup(values, action.name)
    run.operands.append(operand_info(action.name, value))
    if isinstance(value, torch.Tensor):
        run.hold(value.device)
    else:
        run.hold(*(p.device for p in value.parameters()))
    del value

    def forget() -> None:
        del values[action.name]

    run.execute(forget)


def empty_cache(values: Values, action: act.EmptyCache, run: ActionRun) -> None:
    torch = _torch()
    # Only GPUs where torch holds memory are synchronised (they have a context already):
    # synchronize(i) creates one on a GPU the user never used, while memory_reserved reads
    # host-side counters (cuda_calls.py). empty_cache itself is a no-op before CUDA is
    # initialised (torch/cuda/memory.py) and then releases the cached blocks, which exist
    # only on GPUs torch allocated on; tests/gpu/test_kernel_cuda.py checks NVML's list.
    if torch.cuda.is_available():
        run.hold(*(f"cuda:{i}" for i in range(torch.cuda.device_count())
                   if cuda_calls.reserved_bytes(torch, i) > 0))
    run.execute(torch.cuda.empty_cache)


def to_numpy(values: Values, action: act.ToNumpy, run: ActionRun) -> None:
    """``x.numpy()``: torch raises for a tensor not on the CPU; copied = new host memory."""
    source = lookup_tensor(values, act.as_ref(action.source).name)
    t = operand(values, action.source, run)
    run.kind = "value"
    array = run.execute(lambda: t.get().numpy())
    run.copied = source.device.type != "cpu" or array.ctypes.data != source.data_ptr()
    run.details = ((tr("lives in"), tr("main memory (a numpy array)")),
                   (tr("shares memory with the tensor"), tr("no") if run.copied else tr("yes")))


HANDLERS: dict[type, Handler] = {
    act.IsAvailable: query, act.DeviceCount: query, act.CurrentDevice: query, act.DeviceName: query,
    act.DeviceProperties: query, act.Versions: query, act.TensorDevice: query,
    act.CreateTensor: create_tensor, act.CreateFilled: create_filled, act.CreateModel: create_model,
    act.Move: move, act.Compute: compute, act.ModelParameters: model_parameters,
    act.CallModel: call_model, act.Delete: delete, act.EmptyCache: empty_cache,
    act.TryGpu: try_gpus, act.TryAllGpus: try_gpus, act.ToNumpy: to_numpy,
}

__all__ = ["HANDLERS", "Refusal", "check_name"]
