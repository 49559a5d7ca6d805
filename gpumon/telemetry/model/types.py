"""Immutable values that carry GPU telemetry from a source to the views.

Units are in the field names (``mem_used_bytes``, ``power_w``). ``None`` always means
"the GPU or driver does not report this", which the views show as ``N/A``.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from gpumon.telemetry.model.activity import ActivityState, LinkRate
from gpumon.telemetry.model.topology import Topology


class SourceState(enum.Enum):
    """Why a source can or cannot deliver data."""

    OK = "ok"
    SIMULATED = "simulated"
    LIBRARY_NOT_FOUND = "library_not_found"
    DRIVER_NOT_LOADED = "driver_not_loaded"
    VERSION_MISMATCH = "version_mismatch"
    NO_PERMISSION = "no_permission"
    NO_GPUS = "no_gpus"
    ERROR = "error"
    CLOSED = "closed"


@dataclass(frozen=True, slots=True)
class SourceStatus:
    """A source's state as a person reads it: one sentence on what, one on what to do."""

    state: SourceState
    message: str
    hint: str = ""

    @property
    def usable(self) -> bool:
        """True when samples can be read (real or simulated)."""
        return self.state in (SourceState.OK, SourceState.SIMULATED, SourceState.NO_GPUS)


@dataclass(frozen=True, slots=True)
class MachineInfo:
    """Facts about the machine and its driver stack; strings as the driver reports them."""

    host_name: str
    source_name: str  # "NVML" or "simulated"
    driver_version: str | None = None
    cuda_driver_version: str | None = None  # e.g. "12.4"
    nvml_version: str | None = None
    simulated: bool = False
    # gpumon runs in a PID namespace of its own (a container without --pid=host): processes
    # of the host and of other containers hold GPU memory that it cannot list.
    own_pid_namespace: bool = False


@dataclass(frozen=True, slots=True)
class GpuInfo:
    """What does not change while the program runs."""

    index: int  # NVML index (PCI bus order)
    name: str
    uuid: str
    pci_bus_id: str
    mem_total_bytes: int | None = None
    simulated: bool = False
    host: str = ""  # the machine it is in, when read from elsewhere (a Prometheus source)
    source: str = ""  # the scrape target it was read from (a Prometheus source)
    duplicates: tuple[str, ...] = ()  # other scrape targets reporting this same GPU (UUID)


@dataclass(frozen=True, slots=True)
class GpuSample:
    """One reading of one GPU. Every field may be None: not supported by this GPU or driver."""

    index: int
    timestamp_s: float  # time.time() when read
    lost: bool = False  # the GPU fell off the bus or stopped answering
    mem_total_bytes: int | None = None
    mem_used_bytes: int | None = None
    mem_free_bytes: int | None = None
    mem_reserved_bytes: int | None = None
    gpu_util_pct: float | None = None
    mem_util_pct: float | None = None
    temperature_c: float | None = None
    power_w: float | None = None
    power_limit_w: float | None = None
    fan_pct: float | None = None
    sm_clock_mhz: float | None = None
    mem_clock_mhz: float | None = None
    pstate: str | None = None  # "P0" .. "P15"
    pcie_rx_bytes_per_s: float | None = None
    pcie_tx_bytes_per_s: float | None = None
    encoder_util_pct: float | None = None
    decoder_util_pct: float | None = None
    persistence_mode: bool | None = None
    compute_mode: str | None = None  # "Default", "Exclusive Process", "Prohibited"
    display_active: bool | None = None  # a display is driven by this GPU (nvidia-smi's Disp.A)
    mig_mode: bool | None = None  # MIG mode is on (nvidia-smi's MIG M.); None: no MIG
    # Why the clocks are where they are: NVML's clock event ("throttle") reasons bitmask
    # (telemetry/model/health.py decodes it into words); energy since the driver loaded (mJ).
    clocks_event_reasons: int | None = None
    energy_mj: float | None = None
    mem_temperature_c: float | None = None  # HBM/GDDR temperature (an NVML field value)
    # Health, read on slow ticks. ECC: corrected (single-bit) and uncorrected (double-bit)
    # counts since the driver loaded (volatile) and over the GPU's life (aggregate).
    ecc_enabled: bool | None = None
    ecc_corrected_volatile: int | None = None
    ecc_uncorrected_volatile: int | None = None
    ecc_corrected_aggregate: int | None = None
    ecc_uncorrected_aggregate: int | None = None
    # Memory repair: rows remapped (A100 and later) or pages retired (older GPUs).
    remapped_rows_correctable: int | None = None
    remapped_rows_uncorrectable: int | None = None
    remap_pending: bool | None = None
    remap_failure: bool | None = None
    retired_pages_sbe: int | None = None
    retired_pages_dbe: int | None = None
    retired_pages_pending: bool | None = None
    pcie_replay_count: int | None = None
    # XID errors since gpumon started (None: this GPU's XID events cannot be watched).
    xid_count: int | None = None
    xid_last: int | None = None
    xid_last_time_s: float | None = None  # time.time() when the last one arrived
    message: str = ""  # why the GPU is lost, in plain words
    processes_supported: bool = True  # False: the driver gives no process list for this GPU
    # NVML calls that failed on this tick ("nvmlDeviceGetTemperature: Unknown Error"): their
    # fields are None for this tick only; the GPU itself still answers.
    failed_reads: tuple[str, ...] = ()
    # Activity (GPM, Hopper and newer; model/activity.py): percent of the time since the last
    # reading. None: not read (activity_state says why) or not answered by this GPU.
    graphics_active_pct: float | None = None
    sm_active_pct: float | None = None
    sm_occupancy_pct: float | None = None
    tensor_active_pct: float | None = None  # any tensor pipe
    tensor_hmma_active_pct: float | None = None
    tensor_imma_active_pct: float | None = None
    tensor_dfma_active_pct: float | None = None
    dram_active_pct: float | None = None
    fp64_active_pct: float | None = None
    fp32_active_pct: float | None = None
    fp16_active_pct: float | None = None
    int_active_pct: float | None = None
    nvdec_active_pct: float | None = None  # the mean over the GPU's engines of each kind
    nvjpg_active_pct: float | None = None
    nvofa_active_pct: float | None = None
    nvenc_active_pct: float | None = None
    # NVLink data, all links together (GPM's, else the links' counters), and per active link.
    nvlink_rx_bytes_per_s: float | None = None
    nvlink_tx_bytes_per_s: float | None = None
    nvlink_links: tuple[LinkRate, ...] = ()
    activity_state: ActivityState | None = None  # None: the source does not say
    # Fields read less often than every tick because the driver's call is costly, with the
    # seconds between two reads: ("energy_mj", 14.0), ("pcie_rx_bytes_per_s", 5.0), and
    # ("processes", 15.0) for the per-process utilization (nvml/budget.py).
    read_every_s: tuple[tuple[str, float], ...] = ()
    # Readings outside what a GPU can report (model/plausible.py), with the raw value the
    # driver gave: their fields are None.
    implausible: tuple[tuple[str, float], ...] = ()


@dataclass(frozen=True, slots=True)
class MigSample:
    """One MIG device (a slice of a GPU in MIG mode), listed under its parent GPU as
    nvidia-smi does. Utilization and power are the parent's; NVML gives MIG devices none,
    but GPM gives each GPU instance its activity."""

    gpu_index: int  # the parent GPU's NVML index
    gpu_instance_id: int | None
    compute_instance_id: int | None
    uuid: str  # "MIG-..."
    name: str  # e.g. "NVIDIA A100-SXM4-40GB MIG 1g.5gb"
    mem_total_bytes: int | None = None
    mem_used_bytes: int | None = None
    # Its GPU instance's activity (GPM, per GPU instance: CIs of one GI share it), as the
    # GpuSample fields of the same names.
    graphics_active_pct: float | None = None
    sm_active_pct: float | None = None
    sm_occupancy_pct: float | None = None
    tensor_active_pct: float | None = None
    tensor_hmma_active_pct: float | None = None
    tensor_imma_active_pct: float | None = None
    tensor_dfma_active_pct: float | None = None
    dram_active_pct: float | None = None
    fp64_active_pct: float | None = None
    fp32_active_pct: float | None = None
    fp16_active_pct: float | None = None
    int_active_pct: float | None = None
    nvdec_active_pct: float | None = None
    nvjpg_active_pct: float | None = None
    nvofa_active_pct: float | None = None
    nvenc_active_pct: float | None = None
    activity_state: ActivityState | None = None


class ProcessType(enum.Enum):
    COMPUTE = "C"
    GRAPHICS = "G"
    COMPUTE_GRAPHICS = "C+G"


@dataclass(frozen=True, slots=True)
class GpuProcess:
    """A process holding memory on a GPU. Fields psutil could not read are None."""

    gpu_index: int
    pid: int
    type: ProcessType
    gpu_mem_bytes: int | None = None
    name: str | None = None
    user: str | None = None
    command: str | None = None
    is_self: bool = False  # this gpumon process
    seen: bool = True  # False: this machine's /proc does not know the PID (another namespace)
    container: str | None = None  # its container, batch job or systemd unit, when known
    # From NVML's per-process samples (percent of the GPU's time or bandwidth), newest since
    # the previous reading; None: no sample (the process did not run) or not supported.
    sm_util_pct: float | None = None
    mem_bw_util_pct: float | None = None
    enc_util_pct: float | None = None
    dec_util_pct: float | None = None
    # Its use of the host (psutil): CPU in percent of one core, resident memory, start time.
    cpu_pct: float | None = None
    host_rss_bytes: int | None = None
    started_s: float | None = None  # time.time() when it started


class FrozenMap(Mapping[Any, Any]):
    """A read-only copy of a dict (nested dicts become FrozenMaps too); picklable, unlike
    ``types.MappingProxyType``, so a Snapshot can cross a process boundary."""

    __slots__ = ("_data",)

    def __init__(self, data: Mapping[Any, Any] | None = None) -> None:
        self._data = {k: FrozenMap(v) if isinstance(v, Mapping) else v
                      for k, v in (data or {}).items()}

    def __getitem__(self, key: Any) -> Any:
        return self._data[key]

    def __iter__(self) -> Iterator[Any]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __repr__(self) -> str:
        return f"FrozenMap({self._data!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return FrozenMap, (self._data,)


_NO_EXTRA = FrozenMap()


def _no_extra() -> FrozenMap:
    """The one empty FrozenMap every Snapshot without extra series shares (it cannot change;
    making a new one per snapshot was ~0.5 us of a 1-GPU tick)."""
    return _NO_EXTRA


@dataclass(frozen=True, slots=True)
class HostView:
    """One machine's GPUs as a Prometheus server knows them; indices are the machine's own."""

    host: str
    up: bool  # its exporter answered the server's last scrape
    message: str = ""  # why not, or what the exporter says instead of GPUs
    gpus: tuple[GpuInfo, ...] = ()
    samples: tuple[GpuSample, ...] = ()
    migs: tuple[MigSample, ...] = ()  # MIG devices of its GPUs, by parent then slot
    driver_version: str | None = None  # when an exporter says (dcgm-exporter's label)


@dataclass(frozen=True, slots=True)
class Snapshot:
    """Everything one tick read, in one immutable value."""

    timestamp_s: float
    machine: MachineInfo
    status: SourceStatus
    gpus: tuple[GpuInfo, ...] = ()
    samples: tuple[GpuSample, ...] = ()
    processes: tuple[GpuProcess, ...] = ()
    read_duration_s: float = 0.0  # 0.0: the source did not time its read; the Sampler does
    simulated: bool = False
    migs: tuple[MigSample, ...] = ()  # MIG devices of GPUs in MIG mode, by parent then slot
    # Extra per-GPU series keyed by NVML index, recorded into history beside the GPU's own
    # metrics, e.g. {0: {"torch_allocated_bytes": ..., "torch_reserved_bytes": ...}}.
    # Given as plain dicts; kept as a read-only copy (FrozenMap), like the rest of the value.
    extra: Mapping[int, Mapping[str, float]] = field(default_factory=_no_extra)
    # A Prometheus source: every machine (gpus/samples above are the one in focus), and
    # earlier readings of the GPUs in focus from its range queries, oldest first, to fill
    # the graphs' window before this snapshot is recorded.
    hosts: tuple[HostView, ...] = ()
    backfill: tuple[Snapshot, ...] = ()
    # How the GPUs are joined (NVLink, PCIe paths, affinities); read at open and about once a
    # minute, the same value on the ticks between. None: the source does not know.
    topology: Topology | None = None
    # The seconds between readings the sampling keeps now: longer than the interval chosen
    # when reading takes too long to keep up (cadence.Cadence); 0.0: not said.
    period_s: float = 0.0

    def __post_init__(self) -> None:
        if not isinstance(self.extra, FrozenMap):
            object.__setattr__(self, "extra", FrozenMap(self.extra))

    def sample_for(self, index: int) -> GpuSample | None:
        for s in self.samples:
            if s.index == index:
                return s
        return None


class Source(Protocol):
    """Where GPU numbers come from. Plain blocking calls; callers choose the thread."""

    def open(self) -> SourceStatus:
        """Initialise; never raises. Safe to call again after close()."""
        ...

    def machine(self) -> MachineInfo: ...

    def gpus(self) -> list[GpuInfo]: ...

    def sample(self, include_slow: bool = True) -> Snapshot:
        """Read all GPUs and their processes; never raises.

        With ``include_slow=False`` a source may reuse its last reading of slow-changing
        fields (persistence mode, compute mode, power limit, pstate, and PCIe throughput,
        which real NVML measures over ~20 ms per call) instead of asking again, and may
        trust that a PID it described on the last tick is still the same process.
        """
        ...

    def close(self) -> None: ...
