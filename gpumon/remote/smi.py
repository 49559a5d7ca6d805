"""A machine without gpumon: its GPUs from the ``nvidia-smi`` every NVIDIA machine has.

What runs there (one ssh command, :func:`smi_command`): a marker line, then
``nvidia-smi --query-gpu=FIELDS --format=csv,noheader,nounits -lms MS`` (a line per GPU every
interval) beside a loop that prints ``--query-compute-apps`` between two markers every few
seconds. The two write to one stdout; a GPU line begins with its index, a process line with
its GPU's UUID, so the lines tell themselves apart. :class:`SmiParser` turns them into
Snapshots: one each time every GPU has had its line.

nvidia-smi's CSV gives fewer fields than gpumon reads from NVML: no activity (GPM), no health
counters (ECC, remapped rows, XID), no PCIe or NVLink rates, no topology, no energy and no
per-process utilization or host figures. :data:`MISSING` names them in one sentence; the
window shows it with what brings the rest (gpumon installed there). Every value is untrusted
text, parsed as a number or kept as capped text, never evaluated.
"""

from __future__ import annotations

import time

from gpumon.i18n import tr
from gpumon.telemetry.cluster.fleet import usable
from gpumon.telemetry.model.types import (
    GpuInfo,
    GpuProcess,
    GpuSample,
    MachineInfo,
    ProcessType,
    Snapshot,
    SourceState,
    SourceStatus,
)

MARK = "#gpumon-smi/1"
APPS_BEGIN, APPS_END = "#apps", "#end"
APPS_EVERY_S = 5
MIB = 1 << 20
MAX_GPUS = 256
MAX_APPS = 4096
MAX_TEXT = 256
SOURCE_NAME = "nvidia-smi"
# --query-gpu fields, in order: (nvidia-smi's name, GpuSample field, factor to its unit).
GPU_FIELDS: tuple[tuple[str, str, float], ...] = (
    ("index", "", 1.0), ("uuid", "", 1.0), ("name", "", 1.0), ("pci.bus_id", "", 1.0),
    ("driver_version", "", 1.0), ("pstate", "pstate", 1.0),
    ("persistence_mode", "persistence_mode", 1.0), ("compute_mode", "compute_mode", 1.0),
    ("display_active", "display_active", 1.0),
    ("memory.total", "mem_total_bytes", MIB), ("memory.used", "mem_used_bytes", MIB),
    ("memory.free", "mem_free_bytes", MIB), ("utilization.gpu", "gpu_util_pct", 1.0),
    ("utilization.memory", "mem_util_pct", 1.0), ("temperature.gpu", "temperature_c", 1.0),
    ("power.draw", "power_w", 1.0), ("power.limit", "power_limit_w", 1.0),
    ("fan.speed", "fan_pct", 1.0), ("clocks.sm", "sm_clock_mhz", 1.0),
    ("clocks.mem", "mem_clock_mhz", 1.0))
APP_FIELDS = ("gpu_uuid", "pid", "process_name", "used_memory")
_MODES = {"Default": "Default", "Exclusive_Process": "Exclusive Process",
          "Exclusive_Thread": "Exclusive Thread", "Prohibited": "Prohibited"}
_FLAGS = {"Enabled": True, "Disabled": False}


def missing_fields() -> str:
    """The sentence on what nvidia-smi does not give, and what brings it."""
    return tr("Read through nvidia-smi: no activity (SM, tensor, DRAM), health counters (ECC, "
              "XID), PCIe and NVLink rates, topology, energy or per-process utilization. "
              "Install gpumon there (pip install gpumon) for all of them.")


def smi_command(interval_s: float) -> str:
    """The remote shell text of the fallback; exit status 127 where nvidia-smi is not."""
    gpu = ",".join(name for name, _, _ in GPU_FIELDS)
    ms = max(100, round(interval_s * 1000))
    return (f"command -v nvidia-smi >/dev/null 2>&1 || exit 127; echo '{MARK}'; "
            f"nvidia-smi --query-gpu={gpu} --format=csv,noheader,nounits -lms {ms} & "
            f"while echo '{APPS_BEGIN}'; do nvidia-smi --query-compute-apps="
            f"{','.join(APP_FIELDS)} --format=csv,noheader,nounits; echo '{APPS_END}'; "
            f"sleep {APPS_EVERY_S}; done")


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.split(",")]


def _value(text: str, key: str, scale: float) -> object:
    if text.startswith("[") or text in ("", "N/A"):  # [N/A], [Not Supported], [Unknown Error]
        return None
    if key == "pstate":
        return text if text[:1] == "P" and text[1:].isdigit() and int(text[1:]) <= 15 else None
    if key == "compute_mode":
        return _MODES.get(text)
    if key in ("persistence_mode", "display_active"):
        return _FLAGS.get(text)
    try:
        number = float(text) * scale
    except ValueError:
        return None
    got = usable(key, number)
    if got is not None and key.endswith("_bytes"):
        return int(got)
    return got


class SmiParser:
    """nvidia-smi's lines in, Snapshots out; a line it cannot read is skipped and counted."""

    def __init__(self, host: str) -> None:
        self.host = host
        self.bad_lines = 0
        self._round: dict[int, tuple[GpuInfo, GpuSample]] = {}
        self._count: int | None = None  # GPUs in a round, once one round was seen whole
        self._last_index = -1
        self._apps: list[tuple[str, int, str | None, int | None]] = []
        self._reading_apps: list[tuple[str, int, str | None, int | None]] | None = None
        self._driver: str | None = None

    def feed(self, line: str, now: float | None = None) -> Snapshot | None:
        """One line; the Snapshot of a round once all its GPUs came, else None."""
        now = time.time() if now is None else now
        line = line.strip()
        if line == APPS_BEGIN:
            self._reading_apps = []
            return None
        if line == APPS_END:
            if self._reading_apps is not None:
                self._apps = self._reading_apps
            self._reading_apps = None
            return None
        if line.startswith("GPU-") or line.startswith("MIG-"):
            self._app(line)
            return None
        return self._gpu(line, now)

    def _app(self, line: str) -> None:
        cells = _cells(line)  # a process name may hold commas: it is what lies between
        if len(cells) < len(APP_FIELDS) or not cells[1].isdigit() or \
                self._reading_apps is None or len(self._reading_apps) >= MAX_APPS:
            self.bad_lines += 1
            return
        used = _value(cells[-1], "gpu_mem_bytes", MIB)
        name = ",".join(line.split(",")[2:-1]).strip()
        self._reading_apps.append((cells[0][:MAX_TEXT], int(cells[1]),
                                   name[:MAX_TEXT] or None,
                                   used if isinstance(used, int) else None))

    def _gpu(self, line: str, now: float) -> Snapshot | None:
        cells = _cells(line)
        if len(cells) != len(GPU_FIELDS) or not cells[0].isdigit() \
                or int(cells[0]) >= MAX_GPUS:
            self.bad_lines += 1
            return None
        index = int(cells[0])
        done = None
        if index <= self._last_index and self._round:  # a new round began: the last is whole
            self._count = len(self._round)
            done = self._snapshot(now)
            self._round = {}
        self._last_index = index
        values = {key: _value(text, key, scale)
                  for (_, key, scale), text in zip(GPU_FIELDS, cells, strict=True) if key}
        self._driver = cells[4][:MAX_TEXT] or None
        info = GpuInfo(index=index, name=cells[2][:MAX_TEXT], uuid=cells[1][:MAX_TEXT],
                       pci_bus_id=cells[3][:MAX_TEXT],
                       mem_total_bytes=values["mem_total_bytes"])  # type: ignore[arg-type]
        self._round[index] = (info, GpuSample(index=index, timestamp_s=now, **values))  # type: ignore[arg-type]
        if self._count is not None and len(self._round) >= self._count:
            done = self._snapshot(now)
            self._round = {}
        return done

    def _snapshot(self, now: float) -> Snapshot:
        pairs = [self._round[i] for i in sorted(self._round)]
        index_of = {info.uuid: info.index for info, _ in pairs}
        processes = tuple(
            GpuProcess(gpu_index=index_of[uuid], pid=pid, type=ProcessType.COMPUTE,
                       gpu_mem_bytes=used, name=name)
            for uuid, pid, name, used in self._apps if uuid in index_of)
        return Snapshot(
            timestamp_s=now,
            machine=MachineInfo(host_name=self.host, source_name=SOURCE_NAME,
                                driver_version=self._driver),
            status=SourceStatus(SourceState.OK if pairs else SourceState.NO_GPUS,
                                missing_fields()),
            gpus=tuple(info for info, _ in pairs), samples=tuple(s for _, s in pairs),
            processes=processes, read_duration_s=1e-6)
