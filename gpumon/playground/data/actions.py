"""What a user can ask the playground for: frozen specs, each rendering the Python it equals.

An action holds only plain values (names, text, numbers), never a tensor, so it can cross
threads and be stored in a lesson. ``code()`` never raises: it renders what the user asked
for even when the engine will refuse it, so the error is shown next to the code that caused
it. No torch import here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from gpumon.playground.data.values import ValuesError, format_values, parse_values

FillKind = Literal["zeros", "ones", "rand", "randn", "arange"]
ComputeOp = Literal["pow", "add", "mul", "matmul", "sum"]
MoveHow = Literal["to", "cuda", "cpu"]

FILL_KINDS: tuple[FillKind, ...] = ("zeros", "ones", "rand", "randn", "arange")
COMPUTE_OPS: tuple[ComputeOp, ...] = ("pow", "add", "mul", "matmul", "sum")

#: dtypes the playground offers, by the name after ``torch.``.
DTYPES: tuple[str, ...] = (
    "float32", "float64", "float16", "bfloat16",
    "int64", "int32", "int16", "int8", "uint8", "bool",
)


class Action:
    """Base of every action: a frozen spec whose ``code()`` is the Python it equals."""

    def code(self) -> str:
        raise NotImplementedError


def dtype_key(dtype: str) -> str:
    """``float32`` for ``float32`` and ``torch.float32`` (both are how people write it)."""
    return dtype.strip().removeprefix("torch.")


def _kwargs(dtype: str | None, device: str | None) -> str:
    parts = []
    if dtype is not None:
        key = dtype_key(dtype) if isinstance(dtype, str) else dtype
        parts.append(f"dtype=torch.{key}" if isinstance(key, str) and key.isidentifier()
                     else f"dtype={dtype!r}")
    if device is not None:
        parts.append(f"device={device!r}")
    return "".join(", " + p for p in parts)


# --- queries -----------------------------------------------------------------------------


@dataclass(frozen=True)
class IsAvailable(Action):
    """``torch.cuda.is_available()``: can this PyTorch use a CUDA GPU here?"""

    def code(self) -> str:
        return "torch.cuda.is_available()"


@dataclass(frozen=True)
class DeviceCount(Action):
    """``torch.cuda.device_count()``: how many CUDA devices torch sees."""

    def code(self) -> str:
        return "torch.cuda.device_count()"


@dataclass(frozen=True)
class CurrentDevice(Action):
    """``torch.cuda.current_device()``: the index ``'cuda'`` without a number means."""

    def code(self) -> str:
        return "torch.cuda.current_device()"


@dataclass(frozen=True)
class DeviceName(Action):
    """``torch.cuda.get_device_name(i)``."""

    index: int = 0

    def code(self) -> str:
        return f"torch.cuda.get_device_name({self.index})"


@dataclass(frozen=True)
class DeviceProperties(Action):
    """``torch.cuda.get_device_properties(i)``: memory, compute capability, UUID."""

    index: int = 0

    def code(self) -> str:
        return f"torch.cuda.get_device_properties({self.index})"


@dataclass(frozen=True)
class Versions(Action):
    """The torch version and the CUDA version it was built with (None on CPU-only builds)."""

    def code(self) -> str:
        return "torch.__version__, torch.version.cuda"


@dataclass(frozen=True)
class TensorDevice(Action):
    """``x.device``: where a named tensor lives."""

    name: str

    def code(self) -> str:
        return f"{self.name}.device"


# --- create ------------------------------------------------------------------------------


@dataclass(frozen=True)
class CreateTensor(Action):
    """``x = torch.tensor([1, 2, 3], device=...)`` from typed literal values."""

    name: str
    values: str
    dtype: str | None = None
    device: str | None = None

    def code(self) -> str:
        try:
            literal = format_values(parse_values(self.values).values)
        except ValuesError:
            literal = self.values.strip()
        return f"{self.name} = torch.tensor({literal}{_kwargs(self.dtype, self.device)})"


@dataclass(frozen=True)
class CreateFilled(Action):
    """``x = torch.zeros(2, 3)`` and friends; ``arange`` is reshaped to the shape asked."""

    name: str
    kind: FillKind
    shape: tuple[int, ...]
    dtype: str | None = None
    device: str | None = None

    def code(self) -> str:
        kw = _kwargs(self.dtype, self.device)
        dims = ", ".join(str(d) for d in self.shape) or "()"
        if self.kind != "arange":
            return f"{self.name} = torch.{self.kind}({dims}{kw})"
        count = 1
        for d in self.shape:
            count *= d
        reshape = "" if len(self.shape) == 1 else f".reshape({dims})"
        return f"{self.name} = torch.arange({count}{kw}){reshape}"


@dataclass(frozen=True)
class CreateModel(Action):
    """``net = nn.Linear(in, out)``, optionally created directly on a device."""

    name: str
    in_features: int
    out_features: int
    bias: bool = True
    device: str | None = None

    def code(self) -> str:
        bias = "" if self.bias else ", bias=False"
        device = "" if self.device is None else f", device={self.device!r}"
        return f"{self.name} = nn.Linear({self.in_features}, {self.out_features}{bias}{device})"


# --- move --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Ref:
    """An operand: a name, optionally moved on the fly (``x.cpu()``, ``x.cuda(0)``, ``x.to(d)``).

    The moved value is a temporary, as in ``z = y + x.cpu()``; ``x`` itself is unchanged.
    """

    name: str
    how: MoveHow | None = None
    device: str | None = None  # for how="to"
    index: int | None = None  # for how="cuda"

    def code(self) -> str:
        if self.how == "to":
            return f"{self.name}.to({self.device!r})"
        if self.how == "cuda":
            return f"{self.name}.cuda({'' if self.index is None else self.index})"
        if self.how == "cpu":
            return f"{self.name}.cpu()"
        return self.name


def as_ref(operand: str | Ref) -> Ref:
    """A plain name becomes ``Ref(name)``."""
    return operand if isinstance(operand, Ref) else Ref(operand)


@dataclass(frozen=True)
class Move(Action):
    """``dest = source.to(device)`` / ``.cuda(i)`` / ``.cuda()`` / ``.cpu()``, tensor or model.

    ``dest`` None means the same name (``x = x.cuda(0)``). For a tensor the outcome says
    whether a copy was made (``result is source``); a model is moved in place.
    """

    source: str
    how: MoveHow = "to"
    device: str | None = None  # for how="to"
    index: int | None = None  # for how="cuda"; None means .cuda()
    dest: str | None = None

    @property
    def target(self) -> str:
        return self.source if self.dest is None else self.dest

    def ref(self) -> Ref:
        return Ref(self.source, self.how, self.device, self.index)

    def code(self) -> str:
        return f"{self.target} = {self.ref().code()}"


# --- compute -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Compute(Action):
    """``y = x ** 2``, ``z = x + y``, ``x * y``, ``x @ y``, ``x.sum()``; results stay put."""

    result: str
    op: ComputeOp
    a: str | Ref
    b: str | Ref | None = None
    exponent: int | float = 2

    def code(self) -> str:
        a = as_ref(self.a).code()
        b = "?" if self.b is None else as_ref(self.b).code()
        expr = {
            "pow": f"{a} ** {self.exponent!r}",
            "add": f"{a} + {b}",
            "mul": f"{a} * {b}",
            "matmul": f"{a} @ {b}",
            "sum": f"{a}.sum()",
        }.get(self.op, f"{a} <{self.op}> {b}")
        return f"{self.result} = {expr}"


# --- model -------------------------------------------------------------------------------


@dataclass(frozen=True)
class ModelParameters(Action):
    """The device of each of a model's parameters (``[p.device for p in net.parameters()]``)."""

    name: str

    def code(self) -> str:
        return f"[p.device for p in {self.name}.parameters()]"


@dataclass(frozen=True)
class CallModel(Action):
    """``y = net(x)``: parameters and input must be on the same device."""

    result: str
    model: str
    input: str | Ref

    def code(self) -> str:
        return f"{self.result} = {self.model}({as_ref(self.input).code()})"


# --- free --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Delete(Action):
    """``del x``: torch's allocator keeps the block cached (memory_reserved does not drop)."""

    name: str

    def code(self) -> str:
        return f"del {self.name}"


@dataclass(frozen=True)
class EmptyCache(Action):
    """``torch.cuda.empty_cache()``: hand unused cached blocks back to the driver."""

    def code(self) -> str:
        return "torch.cuda.empty_cache()"


# --- lesson helpers (d2l) -----------------------------------------------------------------

#: The d2l functions that pick a device, as the English edition defines them.
TRY_GPU_SOURCE = '''def try_gpu(i=0):
    """Return gpu(i) if exists, otherwise return cpu()."""
    if torch.cuda.device_count() >= i + 1:
        return torch.device(f'cuda:{i}')
    return torch.device('cpu')

def try_all_gpus():
    """Return all available GPUs, or [cpu(),] if no GPU exists."""
    devices = [torch.device(f'cuda:{i}')
               for i in range(torch.cuda.device_count())]
    return devices if devices else [torch.device('cpu')]'''


@dataclass(frozen=True)
class TryGpu(Action):
    """d2l's ``try_gpu(i)``: ``cuda:i`` if torch sees that many GPUs, else the CPU."""

    index: int = 0

    def code(self) -> str:
        return f"try_gpu({self.index})"


@dataclass(frozen=True)
class TryAllGpus(Action):
    """d2l's ``try_all_gpus()``: every CUDA device torch sees, or ``[cpu]``."""

    def code(self) -> str:
        return "try_all_gpus()"


@dataclass(frozen=True)
class ToNumpy(Action):
    """``x.numpy()`` (or ``x.cpu().numpy()``): numpy arrays live in main memory only.

    The array is shown, not stored in the workspace. ``copied`` says whether its memory is
    new (False: it shares the CPU tensor's memory).
    """

    source: str | Ref

    def code(self) -> str:
        return f"{as_ref(self.source).code()}.numpy()"


@dataclass(frozen=True)
class RunCode(Action):
    """Python typed in the code line; ``code()`` is the text itself."""

    source: str

    def code(self) -> str:
        return self.source
