"""Errors as content, the kernel's half: type names, torch's message verbatim, and a
plain-words explanation.

The explanation table is ordered: the first pattern that matches the message wins. It only
adds a sentence; the message itself is always shown exactly as torch wrote it, whatever the
language: the learner searches for it. The explanation is in the chosen language (the table
holds English msgids, translated when an error is explained). No torch import.
"""

from __future__ import annotations

import builtins
import os
import re

from gpumon.i18n import N_, tr
from gpumon.playground.data.errors import REFUSED, ErrorInfo, Refusal
from gpumon.playground.kernel.cuda_cause import explain_unavailable


def qualified_type_name(exc: BaseException) -> str:
    """``RuntimeError`` for builtins; ``torch.AcceleratorError`` for the rest."""
    cls = type(exc)
    if cls.__module__ == "builtins" and getattr(builtins, cls.__name__, None) is cls:
        return cls.__qualname__
    module = cls.__module__
    if module.startswith("torch."):
        import sys

        torch = sys.modules.get("torch")
        if torch is not None and getattr(torch, cls.__name__, None) is cls:
            module = "torch"  # exported at top level: show the public name
    return f"{module}.{cls.__qualname__}"


_SAME_DEVICE = N_(
    "The operands are on different devices, and this operation does not move data between "
    "devices for you (only a 0-dim CPU tensor, or a CPU tensor used as an index, is accepted "
    "beside GPU tensors). Move the odd one to where the work is, usually the input to the "
    "model's device: x.to(device)."
)
_NUMPY = N_(
    "x.numpy() gives an array that shares the tensor's memory, which only a CPU tensor can "
    "do: copy it to main memory first with x.cpu().numpy(), or let x.numpy(force=True) make "
    "that copy."
)
_META_NUMPY = N_(
    "A meta tensor has a shape but no data, so there are no numbers to put in an array; "
    ".cpu() fails too (\"Cannot copy out of meta tensor\")."
)
_OOM = N_(
    "The GPU has not enough free memory for this. Read the message: it says what this "
    "process holds, what other processes use and what is 'reserved but unallocated'; torch "
    "already freed its cache and retried before raising, so empty_cache() is no cure. Drop "
    "references you no longer need (del, or a loss kept with its graph instead of .item()), "
    "use a smaller batch, run inference under torch.no_grad(), and when much is reserved but "
    "unallocated set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True as the message "
    "suggests; torch.cuda.max_memory_allocated() shows the peak."
)
_CUDA_CHECKPOINT = N_(
    "The checkpoint's tensors were saved on a GPU and torch.load puts them back there, but "
    "this PyTorch sees no CUDA: load them with torch.load(path, map_location='cpu') (or "
    "map_location=device)."
)

# (pattern, explanation); searched in order, case-sensitive as torch writes its messages.
EXPLANATIONS: tuple[tuple[str, str], ...] = (
    (r"Expected all tensors to be on the same device", _SAME_DEVICE),
    (r"is not on the expected device", _SAME_DEVICE),
    (r"Torch not compiled with CUDA enabled",
     N_("This PyTorch is a CPU-only build: it has no CUDA support, so nothing can go to 'cuda' "
        "here, whatever GPUs the machine has.")),
    (r"Cannot access accelerator device when none is available",
     N_("PyTorch sees no GPU (no accelerator) in this process, so there is no cuda:i to use.")),
    (r"Found no NVIDIA driver",
     N_("PyTorch was built with CUDA but finds no NVIDIA driver: install or load the driver.")),
    (r"driver version is insufficient",
     N_("The NVIDIA driver is older than the CUDA version this PyTorch needs: update the driver.")),
    (r"Device string must not be empty",
     N_("No device was given: type a device such as cpu, cuda or cuda:0.")),
    (r"not linked with support for mps devices|from the 'MPS' backend",
     N_("mps is Apple's GPU backend (Macs with Apple silicon); this PyTorch was not built with "
        "it, so nothing can go to 'mps' here. Use cpu, or cuda on an NVIDIA GPU.")),
    (r"not linked with support for \w+ devices",
     N_("This PyTorch was not built with support for that device type; use cpu, or cuda on an "
        "NVIDIA GPU.")),
    (r"Invalid device string",
     N_("That is not a device name torch accepts: write 'cpu', 'cuda' or 'cuda:N' with N >= 0, "
        "without spaces.")),
    (r"device type at start of device string",
     N_("Unknown device type: a device name starts with cpu, cuda, meta, mps... ('gpu' is "
        "not one).")),
    (r"CUDA error: invalid device ordinal",
     N_("There is no GPU with that index: torch numbers the visible GPUs from 0. The last "
        "lines, about CUDA_LAUNCH_BLOCKING and TORCH_USE_CUDA_DSA, are the footer "
        "torch puts under every CUDA error, for errors inside GPU kernels; they do not apply "
        "to this one.")),
    (r"invalid device ordinal|Invalid device id|Invalid device argument",
     N_("There is no GPU with that index: torch numbers the visible GPUs from 0.")),
    (r"CUDA out of memory|OutOfMemoryError", _OOM),
    (r"can't allocate memory|DefaultCPUAllocator",
     N_("The computer has not enough free memory (RAM) for a tensor this large.")),
    (r"must match the size of tensor",
     N_("The shapes cannot be broadcast together: each dimension must be equal, or 1, counted "
        "from the right.")),
    (r"shapes cannot be multiplied|size mismatch|Expected size for first two dimensions",
     N_("For a matrix product the inner sizes must agree: (n x k) @ (k x m).")),
    (r"inconsistent tensor size|dimension mismatch",
     N_("For a product of vectors both must have the same length.")),
    (r"need to be at least 1D",
     N_("A matrix product needs tensors with at least one dimension, not single numbers.")),
    (r"same dtype|expected scalar type|dtype mismatch",
     N_("The operands have different dtypes and this operation does not convert them: make them "
        "match with .to(dtype) or .float().")),
    (r"Can't call numpy\(\) on Tensor that requires grad",
     N_("Autograd records what is done with a tensor that requires grad, and an array from "
        ".numpy() would share its memory out of autograd's sight, so torch refuses. "
        ".detach() gives a tensor with the same data that autograd does not track, and its "
        ".numpy() works: x.detach().numpy() (x.detach().cpu().numpy() for a GPU tensor).")),
    (r"can't convert meta device type tensor to numpy", _META_NUMPY),
    (r"can't convert .* to numpy", _NUMPY),
    (r"Cannot copy out of meta tensor",
     N_("A meta tensor has a shape and dtype but no data, so there is nothing to copy to cpu.")),
    (r"cannot be called on meta tensors",
     N_("A meta tensor has a shape but no values, so there is no number to give.")),
    (r"deserialize object on a CUDA device", _CUDA_CHECKPOINT),
    (r"not implemented for",
     N_("This operation has no kernel for this dtype on this device (random numbers need a "
        "floating-point dtype, for example).")),
    (r"Integers to negative integer powers",
     N_("An integer tensor raised to a negative power would need fractions: use a float tensor.")),
    (r"Overflow when unpacking|value cannot be converted to type",
     N_("A value is too large for the dtype (int64 holds up to 9223372036854775807).")),
    (r"no kernel image is available",
     N_("This PyTorch was not compiled for this GPU's architecture: install a matching build.")),
    (r"busy or unavailable",
     N_("The GPU refuses new work: it may be in exclusive-process mode and used by another "
        "process.")),
    (r"Dimension size must be non-negative|negative dimension",
     N_("A size in the shape is negative; sizes are 0 or more.")),
)

FALLBACK = N_("PyTorch raised this error; the message above is exactly as torch wrote it.")
PYTHON_FALLBACK = N_("Python raised this error, not torch (a name, a key or the syntax of the "
                     "code); the message above is exactly as Python wrote it.")

#: Built-in types torch's C++ core raises; they surface at the Python line that called torch.
TORCH_RAISES = (RuntimeError, TypeError, ValueError, IndexError, NotImplementedError,
                OverflowError, MemoryError)


def explanation_msgid(type_name: str, message: str) -> str:
    """The table's English line for an error (untranslated), FALLBACK when none matches."""
    text = f"{type_name}: {message}"
    for pattern, explanation in EXPLANATIONS:
        if re.search(pattern, text):
            return explanation
    return FALLBACK


def error_from_exception(exc: BaseException) -> ErrorInfo:
    """Turn any exception into an ErrorInfo; a :class:`Refusal` is marked as not torch's."""
    if isinstance(exc, Refusal):
        return ErrorInfo(REFUSED, str(exc), exc.explanation, by_torch=False)
    type_name = qualified_type_name(exc)
    message = str(exc)
    explanation = explain_unavailable(message)
    if explanation is None:
        msgid = explanation_msgid(type_name, message)
        if msgid == FALLBACK and raised_by_python(exc):
            msgid = PYTHON_FALLBACK
        explanation = tr(msgid)
    return ErrorInfo(type_name, message, explanation)


def raised_by_python(exc: BaseException) -> bool:
    """True for a built-in error that torch did not raise: no frame of its traceback is in
    torch's files and it is not a type torch's C++ core raises (a NameError in typed code,
    a SyntaxError, a KeyError). Such an error must not be taught as torch's."""
    if type(exc).__module__ != "builtins" or isinstance(exc, TORCH_RAISES):
        return False
    tb = exc.__traceback__
    while tb is not None:
        if f"{os.sep}torch{os.sep}" in tb.tb_frame.f_code.co_filename:
            return False
        tb = tb.tb_next
    return True
