"""gpumon's readings beside nvidia-smi's: the fields both show, their units, their tolerances.

nvidia-smi is read twice, just before and just after gpumon, and a moving value (utilization,
power, clocks, memory used) passes when gpumon's reading lies between the two readings,
widened by the field's tolerance. Values that do not move (total memory, UUID, name, power
limit, persistence and compute mode) must agree to the rounding of nvidia-smi's units.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

MIB = 2**20
PASS, FAIL, SKIP = "PASS", "FAIL", "SKIP"
Kind = Literal["num", "mib", "text", "bool", "compute_mode", "pci"]
Value = float | str | bool | None

#: What nvidia-smi prints for a value the GPU or driver does not give (csv, nounits).
NOT_GIVEN = frozenset({"", "N/A", "[N/A]", "[Not Supported]", "Not Supported",
                       "[Unknown Error]", "[Insufficient Permissions]", "[GPU requires reset]"})


@dataclass(frozen=True)
class Field:
    """One field nvidia-smi and gpumon both show: nvidia-smi's name, gpumon's key, the tolerance.

    ``key`` is a per-GPU key of ``gpumon --once --json`` (``machine.driver_version`` for the
    machine's). ``mib`` fields are bytes in gpumon and MiB in nvidia-smi; they are compared
    in MiB. The tolerance is ``max(abs_tol, rel_tol * value)`` in nvidia-smi's unit.
    """

    smi: str
    key: str
    kind: Kind
    abs_tol: float = 0.0
    rel_tol: float = 0.0
    why: str = ""

    def tolerance(self, scale: float) -> float:
        return max(self.abs_tol, self.rel_tol * abs(scale))


GPU_FIELDS: tuple[Field, ...] = (
    Field("uuid", "uuid", "text"),
    Field("name", "name", "text"),
    Field("pci.bus_id", "pci_bus_id", "pci"),
    Field("driver_version", "machine.driver_version", "text"),
    Field("memory.total", "mem_total_bytes", "mib", 1, why="MiB rounding"),
    Field("memory.reserved", "mem_reserved_bytes", "mib", 1, why="MiB rounding"),
    Field("memory.used", "mem_used_bytes", "mib", 16,
          why="other processes allocate between the readings"),
    Field("memory.free", "mem_free_bytes", "mib", 16,
          why="other processes allocate between the readings"),
    Field("utilization.gpu", "gpu_util_pct", "num", 20,
          why="a share of the last sample period (1/6 s to 1 s): it moves"),
    Field("utilization.memory", "mem_util_pct", "num", 20, why="as utilization.gpu"),
    Field("utilization.encoder", "encoder_util_pct", "num", 10, why="moves"),
    Field("utilization.decoder", "decoder_util_pct", "num", 10, why="moves"),
    Field("temperature.gpu", "temperature_c", "num", 2, why="±2 °C between readings"),
    Field("power.draw", "power_w", "num", 5, 0.05,
          why="a few W, or 5 %, between readings"),
    Field("enforced.power.limit", "power_limit_w", "num", 1, why="rounding to 1 W"),
    Field("fan.speed", "fan_pct", "num", 5, why="the fan controller moves it"),
    Field("clocks.sm", "sm_clock_mhz", "num", 50, 0.10, why="clocks boost and drop"),
    Field("clocks.mem", "mem_clock_mhz", "num", 50, 0.05, why="clocks boost and drop"),
    Field("pstate", "pstate", "text"),
    Field("persistence_mode", "persistence_mode", "bool"),
    Field("compute_mode", "compute_mode", "compute_mode"),
)
FIELDS_BY_SMI = {f.smi: f for f in GPU_FIELDS}
#: ``--query-compute-apps`` columns, in this order.
APP_COLUMNS = ("gpu_uuid", "pid", "used_memory", "process_name")
APP_MEMORY_TOL_MIB = 2.0

_INVALID_FIELD = re.compile(r'Field "([^"]+)" is not a valid field to query')


def smi_gpu_args(fields: Sequence[Field]) -> list[str]:
    """nvidia-smi's arguments for these fields (index first, so rows can be matched)."""
    names = ",".join(["index", *(f.smi for f in fields)])
    return [f"--query-gpu={names}", "--format=csv,noheader,nounits"]


def smi_app_args() -> list[str]:
    return [f"--query-compute-apps={','.join(APP_COLUMNS)}", "--format=csv,noheader,nounits"]


def invalid_field(output: str) -> str | None:
    """The field an older nvidia-smi refuses ('Field "x" is not a valid field to query')."""
    match = _INVALID_FIELD.search(output)
    return match.group(1) if match else None


def parse_csv(text: str, columns: Sequence[str]) -> list[dict[str, str | None]]:
    """Rows of nvidia-smi's ``csv,noheader,nounits`` output; a 'not given' cell is None.

    Raises ValueError when a row has the wrong number of cells (a changed nvidia-smi).
    """
    rows = []
    for cells in csv.reader(io.StringIO(text.strip()), skipinitialspace=True):
        if not cells:
            continue
        if len(cells) != len(columns):
            raise ValueError(f"nvidia-smi gave {len(cells)} cells for {len(columns)} columns: "
                             f"{cells!r}")
        rows.append({c: (None if v.strip() in NOT_GIVEN else v.strip())
                     for c, v in zip(columns, cells, strict=True)})
    return rows


def _pci(text: str) -> str:
    """``00000000:17:00.0`` and ``0000:17:00.0`` alike: domain without leading zeros, lower."""
    domain, _, rest = text.strip().lower().partition(":")
    return f"{int(domain, 16):x}:{rest}" if rest and re.fullmatch(r"[0-9a-f]+", domain) \
        else text.strip().lower()


def _compute_mode(text: str) -> str:
    """nvidia-smi's ``Exclusive_Process`` and gpumon's ``Exclusive Process`` alike."""
    return " ".join(text.replace("_", " ").split()).lower()


def smi_value(field: Field, raw: str | None) -> Value:
    """A cell of nvidia-smi in the unit compared; None when not given. ValueError if garbled."""
    if raw is None:
        return None
    if field.kind in ("num", "mib"):
        return float(raw)
    if field.kind == "bool":
        if raw not in ("Enabled", "Disabled"):
            raise ValueError(f"{field.smi}: expected Enabled or Disabled, got {raw!r}")
        return raw == "Enabled"
    if field.kind == "compute_mode":
        return _compute_mode(raw)
    if field.kind == "pci":
        return _pci(raw)
    return raw


def gpumon_value(field: Field, value: object) -> Value:
    """gpumon's JSON value in nvidia-smi's unit (bytes to MiB); None when gpumon has none."""
    if value is None:
        return None
    if field.kind == "mib":
        return float(value) / MIB  # type: ignore[arg-type]
    if field.kind == "num":
        return float(value)  # type: ignore[arg-type]
    if field.kind == "bool":
        return bool(value)
    if field.kind == "compute_mode":
        return _compute_mode(str(value))
    if field.kind == "pci":
        return _pci(str(value))
    return str(value)


@dataclass(frozen=True)
class Row:
    """One compared value: the reference before and after (nvidia-smi; for the exporter,
    ``--once --json``), what gpumon's output said, and the verdict."""

    source: str  # "--once --json", "--once", "exporter"
    gpu: str  # NVML index, or "pid 1234 on GPU 0" for a process
    field: str
    reference_before: Value
    reference_after: Value
    gpumon: Value
    tolerance: str
    outcome: str
    note: str = ""


def judge(field: Field, before: Value, after: Value, got: Value) -> tuple[str, str]:
    """PASS or FAIL, and why, for gpumon's ``got`` against the reference's two readings
    (nvidia-smi's; ``--once --json``'s for the exporter)."""
    given = [v for v in (before, after) if v is not None]
    if not given:
        if got is None:
            return PASS, "both N/A"
        return FAIL, "the reference gives no value, gpumon does"
    if got is None:
        return FAIL, "gpumon gives no value, the reference does"
    if field.kind in ("num", "mib"):
        numbers = [float(v) for v in given]
        lo, hi = min(numbers), max(numbers)
        tol = field.tolerance(hi)
        if lo - tol <= float(got) <= hi + tol:
            return PASS, ""
        return FAIL, f"outside [{lo - tol:g}, {hi + tol:g}]"
    if got in given:
        return PASS, ""
    return FAIL, "differs"


def tolerance_text(field: Field) -> str:
    if field.kind not in ("num", "mib"):
        return "exact"
    unit = "MiB" if field.kind == "mib" else ""
    parts = [f"±{field.abs_tol:g}{unit}"] + ([f"±{field.rel_tol:.0%}"] if field.rel_tol else [])
    return " or ".join(parts) + (f" ({field.why})" if field.why else "")


Reference = Mapping[int, Mapping[str, Value]]


def smi_reference(rows: Sequence[Mapping[str, str | None]],
                  fields: Iterable[Field]) -> dict[int, dict[str, Value]]:
    """nvidia-smi's rows as ``{index: {nvidia-smi field: value in its unit}}``."""
    fields = list(fields)
    return {int(str(r["index"])): {f.smi: smi_value(f, r.get(f.smi)) for f in fields
                                   if f.smi in r} for r in rows}


def gpumon_reference(readings: Mapping[int, Mapping[str, object]],
                     fields: Iterable[Field]) -> dict[int, dict[str, Value]]:
    """gpumon's ``--json`` readings as a reference for another output (the exporter)."""
    fields = list(fields)
    return {i: {f.smi: gpumon_value(f, g[f.key]) for f in fields if f.key in g}
            for i, g in readings.items()}


def compare_gpus(source: str, fields: Iterable[Field], before: Reference, after: Reference,
                 gpumon: Mapping[int, Mapping[str, object]]) -> list[Row]:
    """One Row per GPU and field; GPUs matched by NVML index (nvidia-smi's ``index``).

    A field gpumon's output does not show (the text table has no UUID) or the reference
    lacks (an older nvidia-smi) gives no row; a GPU one side lacks gives one FAIL row.
    """
    fields = list(fields)
    rows: list[Row] = []
    for index in sorted(set(before) | set(after) | set(gpumon)):
        b, a, g = before.get(index), after.get(index), gpumon.get(index)
        if g is None or (b is None and a is None):
            missing = "gpumon" if g is None else "the reference"
            rows.append(Row(source, str(index), "GPU", None, None, None, "exact", FAIL,
                            f"{missing} does not list this GPU"))
            continue
        for field in fields:
            if field.key not in g or not any(s is not None and field.smi in s
                                             for s in (b, a)):
                continue
            sb = b.get(field.smi) if b is not None else None
            sa = a.get(field.smi) if a is not None else None
            got = gpumon_value(field, g[field.key])
            outcome, note = judge(field, sb, sa, got)
            rows.append(Row(source, str(index), field.smi, sb, sa, got,
                            tolerance_text(field), outcome, note))
    return rows


def compare_apps(source: str, before: Sequence[Mapping[str, str | None]],
                 after: Sequence[Mapping[str, str | None]],
                 gpumon: Mapping[tuple[str, int], int | None]) -> list[Row]:
    """Compute processes: ``gpumon`` maps (GPU UUID, pid) to bytes. A process nvidia-smi
    lists both times must be in gpumon's list; one gpumon lists must be in one of nvidia-smi's."""
    def keyed(rows: Sequence[Mapping[str, str | None]]) -> dict[tuple[str, int], str | None]:
        return {(str(r["gpu_uuid"]), int(r["pid"] or -1)): r["used_memory"] for r in rows}

    sb, sa = keyed(before), keyed(after)
    field = Field("used_memory", "gpu_mem_bytes", "mib", APP_MEMORY_TOL_MIB, why="MiB rounding")
    rows = []
    for key in sorted(set(sb) | set(sa) | set(gpumon)):
        uuid, pid = key
        where = f"pid {pid} on {uuid}"
        if key not in gpumon:
            steady = key in sb and key in sa
            rows.append(Row(source, where, "process", key in sb, key in sa, False, "listed",
                            FAIL if steady else PASS,
                            "missing from gpumon" if steady else "came or went meanwhile"))
            continue
        if key not in sb and key not in sa:
            rows.append(Row(source, where, "process", False, False, True, "listed", FAIL,
                            "gpumon lists a process nvidia-smi does not"))
            continue
        b = smi_value(field, sb.get(key)) if key in sb else None
        a = smi_value(field, sa.get(key)) if key in sa else None
        got = gpumon_value(field, gpumon[key])
        outcome, note = judge(field, b, a, got)
        rows.append(Row(source, where, "used_memory", b, a, got, tolerance_text(field),
                        outcome, note))
    return rows
