"""gpumon's readings as ``{NVML index: {JSON key: value}}``, from each of its outputs.

``--once --json`` is the reference (units in its keys); the ``--once`` text table and the
exporter's ``/metrics`` page are read back into the same keys and units, so each is compared
with nvidia-smi by the same code (``compare.py``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

MIB = 2**20

Readings = dict[int, dict[str, object]]

# nvidia-smi-like rows of gpumon's table (gpumon/text/smi_text.py), as nvidia-smi has them:
# |   0  NVIDIA H200                     On |   00000000:17:00.0 Off |                    0 |
# |  N/A   32C    P0           76W /  700W |       1MiB / 143771MiB |       0%     Default |
# |                                         |                        |             Disabled |
_FIRST = re.compile(r"^\|\s+(\d+)\s+.*?\s(On|Off|N/A)\s+\|\s+(\S+)\s+(?:On|Off|N/A)\s+\|"
                    r"\s+(\S+)\s+\|$")
_SECOND = re.compile(r"^\|\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s*/\s*(\S+)\s+\|"
                     r"\s+(\S+)\s*/\s*(\S+)\s+\|\s+(\S+)\s+(.+?)\s+\|$")
_NA = "N/A"
_COMPUTE = {"E. Process": "Exclusive Process", "E. Thread": "Exclusive Thread"}


def from_json(text: str) -> tuple[Readings, dict[str, Any]]:
    """``gpumon --once --json``: each GPU's keys plus ``machine.driver_version``; and the
    whole document (processes, machine) for what else needs it."""
    doc = json.loads(text)
    driver = doc.get("machine", {}).get("driver_version")
    readings: Readings = {}
    for gpu in doc.get("gpus", []):
        readings[int(gpu["index"])] = {**gpu, "machine.driver_version": driver}
    return readings, doc


def json_apps(doc: Mapping[str, Any], types: tuple[str, ...] = ("C", "C+G")
              ) -> dict[tuple[str, int], int | None]:
    """Processes of a ``--json`` document (compute ones, as nvidia-smi's
    ``--query-compute-apps`` lists) as ``{(GPU UUID, pid): bytes}``."""
    uuids = {int(g["index"]): g.get("uuid") for g in doc.get("gpus", [])}
    return {(str(uuids.get(int(p["gpu_index"]))), int(p["pid"])): p.get("gpu_mem_bytes")
            for p in doc.get("processes", []) if p.get("type") in types}


def _number(text: str, unit: str) -> float | None:
    if text == _NA:
        return None
    if not text.endswith(unit):
        raise ValueError(f"expected a value in {unit!r}, got {text!r}")
    return float(text[: -len(unit)] if unit else text)


def from_text(text: str) -> Readings:
    """The ``--once`` table: the fields each GPU block shows, in the JSON's keys and units
    (MiB as bytes). Raises ValueError when a GPU's first row is not followed by its second."""
    readings: Readings = {}
    lines = text.splitlines()
    for i, line in enumerate(lines):
        first = _FIRST.match(line)
        if first is None:
            continue
        second = _SECOND.match(lines[i + 1]) if i + 1 < len(lines) else None
        if second is None:
            raise ValueError(f"GPU row without its values row: {line!r}")
        fan, temp, perf, power, cap, used, total, util, compute = second.groups()
        persistence = first.group(2)
        mib = [_number(v, "MiB") for v in (used, total)]
        readings[int(first.group(1))] = {
            "persistence_mode": None if persistence == _NA else persistence == "On",
            "pci_bus_id": first.group(3),
            "fan_pct": _number(fan, "%"),
            "temperature_c": _number(temp, "C"),
            "pstate": None if perf == _NA else perf,
            "power_w": _number(power, "W"),
            "power_limit_w": _number(cap, "W"),
            "mem_used_bytes": None if mib[0] is None else mib[0] * MIB,
            "mem_total_bytes": None if mib[1] is None else mib[1] * MIB,
            "gpu_util_pct": _number(util, "%"),
            "compute_mode": None if compute == _NA else _COMPUTE.get(compute, compute),
        }
    return readings


#: The exporter's metrics (dcgm-exporter's names and units) as JSON keys and the factor from
#: the metric's unit to the key's. Written out here, not taken from gpumon's own table, so a
#: wrong unit in the exporter shows up as a mismatch.
EXPORTED: dict[str, tuple[str, float]] = {
    "DCGM_FI_DEV_SM_CLOCK": ("sm_clock_mhz", 1.0),
    "DCGM_FI_DEV_MEM_CLOCK": ("mem_clock_mhz", 1.0),
    "DCGM_FI_DEV_GPU_TEMP": ("temperature_c", 1.0),
    "DCGM_FI_DEV_POWER_USAGE": ("power_w", 1.0),
    "DCGM_FI_DEV_GPU_UTIL": ("gpu_util_pct", 1.0),
    "DCGM_FI_DEV_MEM_COPY_UTIL": ("mem_util_pct", 1.0),
    "DCGM_FI_DEV_ENC_UTIL": ("encoder_util_pct", 1.0),
    "DCGM_FI_DEV_DEC_UTIL": ("decoder_util_pct", 1.0),
    "DCGM_FI_DEV_FB_FREE": ("mem_free_bytes", MIB),
    "DCGM_FI_DEV_FB_USED": ("mem_used_bytes", MIB),
    "gpumon_memory_total_bytes": ("mem_total_bytes", 1.0),
    "gpumon_power_limit_watts": ("power_limit_w", 1.0),
    "gpumon_fan_speed_percent": ("fan_pct", 1.0),
}
PROCESS_METRIC = "gpumon_process_gpu_memory_bytes"


def from_exposition(text: str) -> tuple[Readings, dict[tuple[str, int], int]]:
    """The exporter's /metrics page: per-GPU readings (only the metrics in EXPORTED, and a
    GPU's ``uuid``, ``pci_bus_id`` and ``name`` from its labels) and its process memory."""
    from prometheus_client.parser import text_string_to_metric_families

    readings: Readings = {}
    apps: dict[tuple[str, int], int] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            labels = sample.labels
            if sample.name == PROCESS_METRIC:
                apps[(labels["UUID"], int(labels["pid"]))] = int(sample.value)
                continue
            if sample.name not in EXPORTED or "gpu" not in labels:
                continue
            key, factor = EXPORTED[sample.name]
            gpu = readings.setdefault(int(labels["gpu"]), {
                "uuid": labels.get("UUID"), "pci_bus_id": labels.get("pci_bus_id"),
                "name": labels.get("modelName")})
            gpu[key] = sample.value * factor
    for gpu in readings.values():  # a field left out is one the GPU does not report
        for key, _factor in EXPORTED.values():
            gpu.setdefault(key, None)
    return readings, apps
