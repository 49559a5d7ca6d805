"""Why CUDA cannot be used here, found once from torch's build and the machine.

torch words the same fact differently by call: on a CPU-only build ``x.cuda(0)`` raises
"Cannot access accelerator device when none is available" and ``x.to('cuda')`` "Torch not
compiled with CUDA enabled". Each used to get its own explanation, one of them wrong about
the cause. Every CUDA-unavailable error now gets the one sentence :func:`cause` gives: a
CPU-only build, a CUDA build without a usable NVIDIA driver, or a driver without a GPU that
this process may see. No torch import: torch is read from ``sys.modules`` (the kernel has
imported it by the time an error is explained).
"""

from __future__ import annotations

import ctypes
import functools
import os
import re
import sys
from dataclasses import dataclass

from gpumon.i18n import tr

#: torch messages that only mean "no CUDA here"; the cause explains them all.
UNAVAILABLE = re.compile(
    r"Torch not compiled with CUDA enabled|Cannot access accelerator device when none is "
    r"available|Found no NVIDIA driver|No CUDA GPUs are available|CUDA driver initialization "
    r"failed|no CUDA-capable device is detected")


@dataclass(frozen=True)
class CudaFacts:
    """What the cause is read from (plain values, so the wording is testable anywhere)."""

    torch_version: str
    cuda_build: str | None  # torch.version.cuda: None on a CPU-only (or ROCm) build
    hip_build: str | None  # torch.version.hip: set on a ROCm build
    available: bool  # torch.cuda.is_available()
    device_count: int  # torch.cuda.device_count()
    driver_loads: bool  # the NVIDIA driver's libcuda can be loaded
    visible_devices: str | None  # CUDA_VISIBLE_DEVICES, if set


def sentence(f: CudaFacts) -> str | None:
    """The one plain-words cause in the chosen language, or None when CUDA is usable (the
    error is another one)."""
    if f.available and f.device_count > 0:
        return None
    if f.cuda_build is None and f.hip_build is None:
        return tr("This PyTorch ({version}) is a CPU-only build: torch.version.cuda is None, "
                  "so nothing can go to 'cuda' here, whatever GPUs the machine has. Install a "
                  "CUDA build of PyTorch to use an NVIDIA GPU.", version=f.torch_version)
    build = f"CUDA {f.cuda_build}" if f.cuda_build else f"ROCm {f.hip_build}"
    if f.cuda_build and not f.driver_loads:
        return tr("This PyTorch is built for {build}, but no NVIDIA driver is loaded on this "
                  "machine (libcuda cannot be opened): install or load the driver.",
                  build=build)
    if f.visible_devices is not None:
        return tr("This PyTorch is built for {build} and the driver is there, but "
                  "CUDA_VISIBLE_DEVICES={visible} leaves this process no GPU.",
                  build=build, visible=repr(f.visible_devices))
    return tr("This PyTorch is built for {build} and the driver is there, but it finds no "
              "GPU it can use (none installed, or none passed into this container).",
              build=build)


def _driver_loads() -> bool:
    try:
        ctypes.CDLL("libcuda.so.1" if sys.platform != "win32" else "nvcuda.dll")
    except OSError:
        return False
    return True


def read_facts() -> CudaFacts | None:
    """The facts from the torch this process imported; None when torch is not imported."""
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    version = getattr(torch, "version", None)
    try:
        available = bool(torch.cuda.is_available())
        count = int(torch.cuda.device_count()) if available else 0
    except Exception:  # a broken driver reads as "not available"
        available, count = False, 0
    return CudaFacts(str(getattr(torch, "__version__", "?")), getattr(version, "cuda", None),
                     getattr(version, "hip", None), available, count, _driver_loads(),
                     os.environ.get("CUDA_VISIBLE_DEVICES"))


@functools.cache
def facts() -> CudaFacts | None:
    """The facts of this process, read once (the build and the machine do not change)."""
    return read_facts()


def cause() -> str | None:
    """The cause for this process, in the language chosen now (the facts are read once)."""
    found = facts()
    return None if found is None else sentence(found)


def explain_unavailable(message: str) -> str | None:
    """The cause when ``message`` is one of torch's "no CUDA here" errors, else None."""
    if not UNAVAILABLE.search(message):
        return None
    if sys.modules.get("torch") is None:
        return None  # not known yet: keep the table's sentence
    return cause()
