"""DRY RUN ONLY: a stand-in for ``nvidia-smi --query-gpu=... / --query-compute-apps=...``.

``tests/gpu/check.py --dry-run`` has no nvidia-smi, so it runs this instead, against the fake
NVML library (tests/telemetry/fakenvml, loaded as libnvidia-ml.so.1 by LD_LIBRARY_PATH). It
reads NVML through pynvml directly, not through gpumon, and prints what nvidia-smi prints
with ``--format=csv,noheader,nounits``: one row per GPU, ``[N/A]`` for a value NVML does not
give, and nvidia-smi's refusal for a field it does not know. Its numbers come from the fake
library, so a dry run checks the comparison's plumbing, never gpumon's readings of hardware.

``GPUMON_FAKE_SMI_SKEW="temperature.gpu=10,power.draw=-50"`` adds to those fields, so a test
can make the comparison fail on purpose.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

import pynvml

MIB = 2**20
_COMPUTE_MODES = {0: "Default", 1: "Exclusive_Thread", 2: "Prohibited", 3: "Exclusive_Process"}


def _memory(h: object) -> object:
    try:
        return pynvml.nvmlDeviceGetMemoryInfo(h, version=pynvml.nvmlMemory_v2)
    except pynvml.NVMLError_FunctionNotFound:
        return pynvml.nvmlDeviceGetMemoryInfo(h)


def _text(value: object) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


GPU_FIELDS: dict[str, Callable[[object], object]] = {
    "index": lambda h: pynvml.nvmlDeviceGetIndex(h),
    "uuid": lambda h: _text(pynvml.nvmlDeviceGetUUID(h)),
    "name": lambda h: _text(pynvml.nvmlDeviceGetName(h)),
    "pci.bus_id": lambda h: _text(pynvml.nvmlDeviceGetPciInfo(h).busId),
    "driver_version": lambda h: _text(pynvml.nvmlSystemGetDriverVersion()),
    "memory.total": lambda h: _memory(h).total // MIB,  # type: ignore[attr-defined]
    "memory.reserved": lambda h: _memory(h).reserved // MIB,  # type: ignore[attr-defined]
    "memory.used": lambda h: _memory(h).used // MIB,  # type: ignore[attr-defined]
    "memory.free": lambda h: _memory(h).free // MIB,  # type: ignore[attr-defined]
    "utilization.gpu": lambda h: pynvml.nvmlDeviceGetUtilizationRates(h).gpu,
    "utilization.memory": lambda h: pynvml.nvmlDeviceGetUtilizationRates(h).memory,
    "utilization.encoder": lambda h: pynvml.nvmlDeviceGetEncoderUtilization(h)[0],
    "utilization.decoder": lambda h: pynvml.nvmlDeviceGetDecoderUtilization(h)[0],
    "temperature.gpu": lambda h: pynvml.nvmlDeviceGetTemperature(h, pynvml.NVML_TEMPERATURE_GPU),
    "power.draw": lambda h: f"{pynvml.nvmlDeviceGetPowerUsage(h) / 1000:.2f}",
    "enforced.power.limit": lambda h: f"{pynvml.nvmlDeviceGetEnforcedPowerLimit(h) / 1000:.2f}",
    "fan.speed": lambda h: pynvml.nvmlDeviceGetFanSpeed(h),
    "clocks.sm": lambda h: pynvml.nvmlDeviceGetClockInfo(h, pynvml.NVML_CLOCK_SM),
    "clocks.mem": lambda h: pynvml.nvmlDeviceGetClockInfo(h, pynvml.NVML_CLOCK_MEM),
    "pstate": lambda h: f"P{pynvml.nvmlDeviceGetPerformanceState(h)}",
    "persistence_mode": lambda h: "Enabled" if pynvml.nvmlDeviceGetPersistenceMode(h)
    else "Disabled",
    "compute_mode": lambda h: _COMPUTE_MODES.get(pynvml.nvmlDeviceGetComputeMode(h), "Unknown"),
}


def _skews() -> dict[str, float]:
    text = os.environ.get("GPUMON_FAKE_SMI_SKEW", "")
    pairs = (item.split("=", 1) for item in text.split(",") if "=" in item)
    return {name.strip(): float(delta) for name, delta in pairs}


def _cell(name: str, read: Callable[[object], object], handle: object,
          skews: dict[str, float]) -> str:
    try:
        value = read(handle)
    except pynvml.NVMLError_NotSupported:
        return "[Not Supported]"
    except pynvml.NVMLError:
        return "[N/A]"
    if name in skews:
        value = float(value) + skews[name]  # type: ignore[arg-type]
        return f"{value:g}"
    return str(value)


def _query_gpus(names: list[str]) -> int:
    unknown = [n for n in names if n not in GPU_FIELDS]
    if unknown:
        print(f'Field "{unknown[0]}" is not a valid field to query.', file=sys.stderr)
        return 2
    skews = _skews()
    for i in range(pynvml.nvmlDeviceGetCount()):
        handle = pynvml.nvmlDeviceGetHandleByIndex(i)
        print(", ".join(_cell(n, GPU_FIELDS[n], handle, skews) for n in names))
    return 0


def _query_apps(names: list[str]) -> int:
    if names != ["gpu_uuid", "pid", "used_memory", "process_name"]:
        print(f"this stand-in answers gpu_uuid,pid,used_memory,process_name only, not {names}",
              file=sys.stderr)
        return 2
    for i in range(pynvml.nvmlDeviceGetCount()):
        handle = pynvml.nvmlDeviceGetHandleByIndex(i)
        uuid = _text(pynvml.nvmlDeviceGetUUID(handle))
        for p in pynvml.nvmlDeviceGetComputeRunningProcesses(handle):
            used = "[N/A]" if p.usedGpuMemory is None else str(p.usedGpuMemory // MIB)
            print(f"{uuid}, {p.pid}, {used}, [N/A]")
    return 0


def main(argv: list[str]) -> int:
    query = [a for a in argv if a.startswith("--query-")]
    if len(query) != 1 or "--format=csv,noheader,nounits" not in argv:
        print("usage: fake_smi.py --query-gpu=A,B|--query-compute-apps=A,B "
              "--format=csv,noheader,nounits", file=sys.stderr)
        return 2
    what, _, names = query[0].partition("=")
    pynvml.nvmlInit()
    try:
        if what == "--query-gpu":
            return _query_gpus(names.split(","))
        return _query_apps(names.split(","))
    finally:
        pynvml.nvmlShutdown()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
