"""What NVML's errors mean, in sentences: why ``nvmlInit`` failed (a SourceStatus with
advice), and why a GPU counts as lost (``GpuLost``, raised by NvmlSource's guarded call).
Also the small conversions of NVML's raw values into the text people know them by.
"""

from __future__ import annotations

import sys

import pynvml

from gpumon.i18n import N_, ntr, tr
from gpumon.telemetry.model.types import MachineInfo, SourceState, SourceStatus

LIBRARY_NAME = "nvml.dll" if sys.platform.startswith("win") else "libnvidia-ml.so.1"
SIMULATE_HINT = N_("or run gpumon with --simulate N to see simulated GPUs")

# Errors after which a GPU is treated as gone until a re-check says otherwise. Any other error
# (an "unknown error" included) only makes that one field N/A for the tick, unless every read
# of the GPU failed (readers.every_read_failed).
LOST_WORDS: dict[int, str] = {
    pynvml.NVML_ERROR_GPU_IS_LOST: N_("The GPU stopped answering (NVML: GPU is lost). It may "
                                      "have fallen off the PCIe bus or overheated; a reboot is "
                                      "usually needed."),
    pynvml.NVML_ERROR_RESET_REQUIRED: N_("The GPU needs a reset before it can be used again "
                                         "(NVML: GPU requires reset)."),
}
COMPUTE_MODES = {0: "Default", 1: "Exclusive Thread", 2: "Prohibited", 3: "Exclusive Process"}


class GpuLost(Exception):
    """Raised by the guarded helper when a device call says the GPU is gone."""

    def __init__(self, code: int, words: str = "") -> None:
        words = words or tr(LOST_WORDS[code])
        super().__init__(words)
        self.message = words


_INIT_ERRORS: dict[int, tuple[SourceState, str, str]] = {
    pynvml.NVML_ERROR_LIBRARY_NOT_FOUND: (
        SourceState.LIBRARY_NOT_FOUND,
        N_("No NVIDIA driver was found on this computer ({library} could not be loaded)."),
        N_("Install the NVIDIA driver, {simulate_hint}.")),
    pynvml.NVML_ERROR_DRIVER_NOT_LOADED: (
        SourceState.DRIVER_NOT_LOADED,
        N_("The NVIDIA driver is installed but not running."),
        N_("Reboot, or load it with 'sudo modprobe nvidia'; 'nvidia-smi' and 'dmesg' tell why "
           "it did not start, {simulate_hint}.")),
    pynvml.NVML_ERROR_LIB_RM_VERSION_MISMATCH: (
        SourceState.VERSION_MISMATCH,
        N_("The NVIDIA driver that is running does not match the installed NVIDIA library "
           "(driver/library version mismatch)."),
        N_("This usually follows a driver update: reboot so that the new driver is loaded.")),
    pynvml.NVML_ERROR_NO_PERMISSION: (
        SourceState.NO_PERMISSION,
        N_("gpumon is not allowed to talk to the NVIDIA driver (insufficient permissions)."),
        N_("Check that your user may open /dev/nvidia* (often the 'video' group), or that the "
           "container was given the GPUs.")),
}


def init_error_status(err: Exception) -> SourceStatus:
    """The SourceStatus for an error raised by nvmlInit, in words a person understands."""
    code = getattr(err, "value", None)
    known = _INIT_ERRORS.get(code) if isinstance(code, int) else None
    hint = tr(SIMULATE_HINT)
    if known is not None:
        state, message, advice = known
        return SourceStatus(state, tr(message, library=LIBRARY_NAME),
                            tr(advice, simulate_hint=hint))
    return SourceStatus(SourceState.ERROR, tr("NVML could not start: {error}.", error=err),
                        tr("Check that 'nvidia-smi' works, {simulate_hint}.", simulate_hint=hint))


def cuda_version_text(version: int | None) -> str | None:
    """NVML's integer CUDA driver version (12040) as people write it ("12.4")."""
    if version is None or version <= 0:
        return None
    return f"{version // 1000}.{version % 1000 // 10}"


def pstate_text(value: int | None) -> str | None:
    """P-state number as "P0".."P15"; NVML's 32 means unknown."""
    return None if value is None or not 0 <= value <= 15 else f"P{value}"


def open_status(n: int, machine: MachineInfo, denied: bool) -> SourceStatus:
    """What NvmlSource.open() says once NVML answered: ``n`` GPUs; ``denied``: no GPU gave
    a handle, for lack of permission."""
    if n == 0:
        return SourceStatus(
            SourceState.NO_GPUS, tr("The NVIDIA driver is running but reports no GPUs."),
            tr("Check that the GPU is seated and powered; in a container, pass the GPUs "
               "through (e.g. 'docker run --gpus all'), {simulate_hint}.",
               simulate_hint=tr(SIMULATE_HINT)))
    if denied:
        return SourceStatus(
            SourceState.NO_PERMISSION,
            tr("gpumon is not allowed to read any of the GPUs (insufficient permissions)."),
            tr("Check that your user may open /dev/nvidia*, or that the container was "
               "given the GPUs."))
    stack = ", ".join(p for p in (
        machine.driver_version and tr("driver {version}", version=machine.driver_version),
        machine.cuda_driver_version and f"CUDA {machine.cuda_driver_version}") if p)
    if stack:
        return SourceStatus(SourceState.OK, ntr("NVML sees {n} GPU ({stack}).",
                                                "NVML sees {n} GPUs ({stack}).", n, stack=stack))
    return SourceStatus(SourceState.OK, ntr("NVML sees {n} GPU.", "NVML sees {n} GPUs.", n))
