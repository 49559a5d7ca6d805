"""SimulatedSource: deterministic, scriptable GPUs for demos without hardware and for tests.

Every reading is a pure function of (seed, GPU, seconds since ``open()``), so two sources
with the same seed read at the same clock times agree exactly, and a test can fast-forward
by passing a fake clock. Each GPU runs workload phases (idle, training, inference, data
loading) with smooth transitions and noise. Faults (unsupported fields, a GPU that is lost
after T seconds, slow calls, a process that vanished) are injected with ``SimulatedFaults``.
Everything it returns is marked simulated.
"""

from __future__ import annotations

import dataclasses
import math
import os
import socket
import time
from collections.abc import Callable, Iterable, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field

from gpumon.i18n import ntr, tr
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
from gpumon.telemetry.sources.seeded import mix, smoothstep, unit
from gpumon.telemetry.sources.simulated_activity import NOT_FAULTABLE, activity, topology
from gpumon.telemetry.sources.simulated_health import (
    HBM,
    Energy,
    clock_reasons,
    slow_health,
    xids_by,
)
from gpumon.units import MIB

MAX_GPUS = 64
MIG_CAPABLE = ("A100", "H100")  # the simulated models that have a MIG mode (off here)
PHASE_S = 60.0  # length of one workload phase
TRANSITION_S = 8.0  # phases blend into each other over this many seconds
# GpuSample fields a fault may switch off (not the identity and state fields, nor activity).
FAULTABLE_FIELDS: frozenset[str] = frozenset(
    f.name for f in dataclasses.fields(GpuSample)
    if f.name not in ("index", "timestamp_s", "lost", "message", "failed_reads", "read_every_s",
                      "implausible", *NOT_FAULTABLE)
)


@dataclass(frozen=True, slots=True)
class _Model:
    """A GPU model as the driver reports it (memory in MiB as NVML counts it)."""

    name: str
    mem_mib: int
    power_limit_w: float
    idle_w: float
    max_sm_mhz: float
    max_mem_mhz: float
    has_fan: bool
    datacenter: bool
    reserved_mib: int


MODELS: tuple[_Model, ...] = (
    _Model("NVIDIA GeForce RTX 4090", 24564, 450, 22, 2520, 10501, True, False, 318),
    _Model("NVIDIA H100 80GB HBM3", 81559, 700, 72, 1980, 2619, False, True, 520),
    _Model("NVIDIA A100-SXM4-80GB", 81920, 400, 62, 1410, 1593, False, True, 512),
    _Model("NVIDIA RTX A6000", 49140, 300, 24, 2100, 8001, True, False, 410),
    _Model("NVIDIA L40S", 46068, 350, 36, 2520, 9001, False, True, 430),
    _Model("Tesla T4", 15360, 70, 10, 1590, 5001, False, True, 256),
    _Model("NVIDIA GeForce RTX 3090", 24576, 350, 26, 2100, 9751, True, False, 318),
    _Model("Tesla V100-SXM2-32GB", 32768, 300, 42, 1530, 877, False, True, 300),
)


@dataclass(frozen=True, slots=True)
class _Phase:
    name: str
    util: tuple[float, float]  # range the phase's utilization level is drawn from
    mem_frac: tuple[float, float]  # share of device memory its process holds
    pcie_gbps: float  # typical host<->device traffic, GB/s
    burst: float  # amplitude of fast utilization swings


PHASES: tuple[_Phase, ...] = (
    _Phase("idle", (0.0, 2.0), (0.0, 0.0), 0.0, 1.0),
    _Phase("training", (88.0, 99.0), (0.55, 0.92), 2.5, 4.0),
    _Phase("inference", (25.0, 65.0), (0.25, 0.5), 0.8, 25.0),
    _Phase("data loading", (8.0, 30.0), (0.15, 0.35), 9.0, 12.0),
)

_PROGRAMS: tuple[tuple[str, str], ...] = (
    ("python", "python train.py --config configs/resnet50.yaml"),
    ("python3", "python3 -m torch.distributed.run --nproc-per-node 4 pretrain.py"),
    ("python", "python finetune.py --model llama-7b --lora"),
    ("ollama", "ollama serve"),
    ("python3", "python3 -m vllm.entrypoints.openai.api_server --model mistral-7b"),
    ("jupyter-lab", "/opt/conda/bin/python -m ipykernel_launcher -f kernel-3f2a.json"),
    ("blender", "blender -b scene.blend -a"),
)
_USERS = ("alice", "bob", "carol", "dmitri", "eun-ji", "root")


@dataclass(frozen=True)
class SimulatedFaults:
    """Faults to inject; the default is a healthy machine.

    ``unsupported``: GpuSample fields that are always None on every GPU;
    ``unsupported_by_gpu``: the same per GPU index; ``lost_after_s``: GPU index -> seconds
    after ``open()`` from which that GPU is lost; ``slow_sample_s``: each ``sample()`` sleeps
    this long first; ``vanished_pid_after_s``: from then on the first process on GPU 0 has
    exited, so only its PID and memory are known (name, user and command are None).
    """

    unsupported: AbstractSet[str] = frozenset()
    unsupported_by_gpu: Mapping[int, AbstractSet[str]] = field(default_factory=dict)
    lost_after_s: Mapping[int, float] = field(default_factory=dict)
    slow_sample_s: float = 0.0
    vanished_pid_after_s: float | None = None
    # GPU index -> (seconds after open, XID code) pairs: the XID errors it raises.
    xids: Mapping[int, tuple[tuple[float, int], ...]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "unsupported", _field_set(self.unsupported))
        by_gpu = {int(i): _field_set(names) for i, names in self.unsupported_by_gpu.items()}
        object.__setattr__(self, "unsupported_by_gpu", by_gpu)
        if self.slow_sample_s < 0:
            raise ValueError("slow_sample_s must not be negative")

    def unsupported_on(self, index: int) -> frozenset[str]:
        """The fields that GPU ``index`` does not report."""
        return frozenset(self.unsupported) | self.unsupported_by_gpu.get(index, frozenset())


def _field_set(names: Iterable[str]) -> frozenset[str]:
    """Names as a frozenset, refusing any that is not a GpuSample metric field."""
    result = frozenset([names] if isinstance(names, str) else names)
    unknown = result - FAULTABLE_FIELDS
    if unknown:
        raise ValueError(f"not GpuSample metric fields: {sorted(unknown)}")
    return result


class SimulatedSource:
    """N simulated GPUs behind the ``Source`` protocol; see the module docstring."""

    def __init__(
        self,
        n_gpus: int = 4,
        seed: int = 0,
        faults: SimulatedFaults | None = None,
        clock: Callable[[], float] = time.time,
        *,
        self_process_gpu: int | None = None,
        sleep: Callable[[float], None] = time.sleep,
        gpm: bool = True,
        history_s: float = 0.0,
    ) -> None:
        """``self_process_gpu``: also list this process (is_self=True) on that GPU;
        ``gpm=False``: no activity, as ``--no-gpm`` (simulated_activity.py); ``history_s``:
        the GPUs ran that long before ``open()``, and the first reading brings those seconds
        along (``Snapshot.backfill``, one a second): a demo opens on graphs already drawn."""
        if not 1 <= n_gpus <= MAX_GPUS:
            raise ValueError(f"n_gpus must be from 1 to {MAX_GPUS}, got {n_gpus}")
        self._n = n_gpus
        self._seed = seed
        self._faults = faults or SimulatedFaults()
        self._clock = clock
        self._sleep = sleep
        self._self_gpu = self_process_gpu
        self._gpm = gpm
        self._t0: float | None = None
        self._history_s = max(0.0, float(history_s))
        self._backfill_due = False
        self._open = False
        self._slow_cache: dict[int, dict[str, object]] = {}
        self._energy = Energy()
        self._gpus = self._make_gpus()
        self._models = [self._model_for(i) for i in range(n_gpus)]

    # --- Source protocol -------------------------------------------------------------
    def open(self) -> SourceStatus:
        """Start the simulated clock (on the first open only) and report SIMULATED."""
        if self._t0 is None:
            self._t0 = self._clock() - self._history_s
            self._topology = topology(self._gpus, self._t0)
            self._backfill_due = self._history_s >= 1.0
        self._open = True
        return self.status()

    def status(self) -> SourceStatus:
        if not self._open:
            return SourceStatus(SourceState.CLOSED, tr("The simulated source is closed."))
        return SourceStatus(
            SourceState.SIMULATED,
            ntr("This GPU is simulated; no real GPU is being read.",
                "These {n} GPUs are simulated; no real GPU is being read.", self._n),
            tr("The numbers come from a seeded model, not from hardware."),
        )

    def machine(self) -> MachineInfo:
        return MachineInfo(
            host_name=socket.gethostname(),
            source_name="simulated",
            driver_version="550.54.15",
            cuda_driver_version="12.4",
            nvml_version="12.550.54.15",
            simulated=True,
        )

    def gpus(self) -> list[GpuInfo]:
        return list(self._gpus)

    def sample(self, include_slow: bool = True) -> Snapshot:
        """Read every simulated GPU at the clock's current time; never raises."""
        if self._faults.slow_sample_s > 0:
            self._sleep(self._faults.slow_sample_s)
        now = self._clock()
        if not self._open or self._t0 is None:
            return Snapshot(now, self.machine(), self.status(), simulated=True)
        backfill: tuple[Snapshot, ...] = ()
        if self._backfill_due:  # the seconds before open(), oldest first
            self._backfill_due = False
            start = math.ceil(now - self._history_s)
            backfill = tuple(self._reading(float(when), True)
                             for when in range(start, math.ceil(now)) if when < now)
        snap = self._reading(now, include_slow)
        return dataclasses.replace(snap, backfill=backfill) if backfill else snap

    def _reading(self, now: float, include_slow: bool) -> Snapshot:
        t = 0.0 if self._t0 is None else now - self._t0
        samples = tuple(self._sample_gpu(i, now, t, include_slow) for i in range(self._n))
        processes = tuple(
            p for s in samples if not s.lost for p in self._processes(s.index, t)
        )
        return Snapshot(
            timestamp_s=now,
            machine=self.machine(),
            status=self.status(),
            gpus=tuple(self._gpus),
            samples=samples,
            processes=processes,
            simulated=True,
            topology=self._topology,
        )

    def close(self) -> None:
        self._open = False

    # --- identity --------------------------------------------------------------------
    def _model_for(self, index: int) -> _Model:
        order = sorted(range(len(MODELS)), key=lambda k: mix(self._seed, 1, k))
        return MODELS[order[index % len(MODELS)]]

    def _make_gpus(self) -> tuple[GpuInfo, ...]:
        buses = sorted(range(1, 256), key=lambda b: mix(self._seed, 2, b))[: self._n]
        result = []
        for i, bus in enumerate(sorted(buses)):
            model = self._model_for(i)
            h = f"{mix(self._seed, 3, i):016x}{mix(self._seed, 4, i):016x}"
            uuid = f"GPU-{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"
            result.append(GpuInfo(
                index=i,
                name=model.name,
                uuid=uuid,
                pci_bus_id=f"00000000:{bus:02X}:00.0",
                mem_total_bytes=model.mem_mib * MIB,
                simulated=True,
            ))
        return tuple(result)

    # --- the workload model: pure functions of (seed, gpu, t) ------------------------
    def _segment(self, gpu: int, t: float) -> tuple[int, float]:
        """The phase segment GPU ``gpu`` is in at time t, and seconds into it."""
        shifted = t + unit(self._seed, 5, gpu) * PHASE_S  # GPUs do not switch in step
        k = math.floor(shifted / PHASE_S)
        return k, shifted - k * PHASE_S

    def _phase(self, gpu: int, k: int) -> _Phase:
        if k <= 0 and gpu == 0:
            return PHASES[1]  # GPU 0 starts busy, so a demo shows motion at once
        return PHASES[mix(self._seed, 6, gpu, k) % len(PHASES)]

    def _level(self, gpu: int, k: int, what: int, lo_hi: tuple[float, float]) -> float:
        lo, hi = lo_hi
        return lo + (hi - lo) * unit(self._seed, 7, gpu, k, what)

    def _blend(self, gpu: int, t: float, fn: Callable[[int], float]) -> float:
        """fn(segment) blended smoothly into the previous segment's value at the boundary."""
        k, into = self._segment(gpu, t)
        w = smoothstep(into / TRANSITION_S)
        return fn(k) if w >= 1.0 else w * fn(k) + (1.0 - w) * fn(k - 1)

    def _noise(self, gpu: int, channel: int, t: float, period: float) -> float:
        """Smooth value noise in [-1, 1] that changes over about ``period`` seconds."""
        x = t / period
        i = math.floor(x)
        a = unit(self._seed, 8, gpu, channel, i) * 2 - 1
        b = unit(self._seed, 8, gpu, channel, i + 1) * 2 - 1
        return a + (b - a) * smoothstep(x - i)

    def _power(self, gpu: int, t: float) -> float:
        m = self._models[gpu]
        power = m.idle_w + (m.power_limit_w - m.idle_w) * (0.92 * self._util(gpu, t) / 100.0)
        power += 0.02 * m.power_limit_w * self._noise(gpu, 2, t, 1.5)
        return max(power, m.idle_w * 0.8)

    def _util(self, gpu: int, t: float) -> float:
        base = self._blend(gpu, t, lambda k: self._level(gpu, k, 0, self._phase(gpu, k).util))
        burst = self._blend(gpu, t, lambda k: self._phase(gpu, k).burst)
        return min(max(base + burst * self._noise(gpu, 0, t, 2.0), 0.0), 100.0)

    def _process_mib(self, gpu: int, t: float) -> list[int]:
        """MiB held by each workload process at time t (none when idle).

        A phase's processes start with the phase, allocate over the first seconds, and
        exit (freeing their memory at once) when it ends.
        """
        k, into = self._segment(gpu, t)
        phase = self._phase(gpu, k)
        if phase.mem_frac[1] <= 0:
            return []
        total = self._level(gpu, k, 1, phase.mem_frac) * self._models[gpu].mem_mib
        total *= 0.1 + 0.9 * smoothstep(into / TRANSITION_S)
        n = 1 + mix(self._seed, 9, gpu, k) % 2
        shares = (1.0,) if n == 1 else (0.62, 0.38)  # a main job and a smaller helper
        return [int(total * share) for share in shares]

    def _mem_used_mib(self, gpu: int, t: float) -> float:
        model = self._models[gpu]
        base = 4.0 if model.datacenter else 380.0  # desktop cards run a display server
        own = 512.0 if self._self_gpu == gpu else 0.0
        return min(base + sum(self._process_mib(gpu, t)) + own,
                   model.mem_mib - model.reserved_mib)

    def _sample_gpu(self, gpu: int, now: float, t: float, include_slow: bool) -> GpuSample:
        lost_at = self._faults.lost_after_s.get(gpu)
        if lost_at is not None and t >= lost_at:
            return GpuSample(
                index=gpu, timestamp_s=now, lost=True,
                message=tr("Simulated GPU {gpu} fell off the bus {seconds} s after start "
                           "(GPU is lost); the other GPUs keep running.",
                           gpu=gpu, seconds=f"{lost_at:g}"),
            )
        m = self._models[gpu]
        util = self._util(gpu, t)
        # Temperature follows power with a lag: average the load over the last half minute.
        heat = sum(self._util(gpu, t - lag) for lag in (0.0, 8.0, 16.0, 24.0, 32.0)) / 500.0
        temp = 31.0 + 4.0 * unit(self._seed, 10, gpu) + 48.0 * heat + self._noise(gpu, 1, t, 7)
        power = self._power(gpu, t)
        busy = util > 5.0
        used = self._mem_used_mib(gpu, t)
        pcie = self._blend(gpu, t, lambda k: self._phase(gpu, k).pcie_gbps) * 1e9
        pcie *= 0.75 + 0.25 * self._noise(gpu, 3, t, 1.0)
        values: dict[str, object] = {
            "mem_total_bytes": m.mem_mib * MIB,
            "mem_used_bytes": int(used) * MIB,
            "mem_free_bytes": int(m.mem_mib - m.reserved_mib - used) * MIB,
            "mem_reserved_bytes": m.reserved_mib * MIB,
            "gpu_util_pct": round(util),
            "mem_util_pct": round(util * (0.35 + 0.2 * unit(self._seed, 11, gpu))),
            "temperature_c": round(temp),
            "power_w": round(power, 2),
            "fan_pct": round(30 + max(temp - 40.0, 0.0) * 1.6) if m.has_fan else None,
            "sm_clock_mhz": round(m.max_sm_mhz - 45 * abs(self._noise(gpu, 4, t, 3)))
            if busy else 210.0,
            "mem_clock_mhz": m.max_mem_mhz if busy else 405.0,
            "pcie_rx_bytes_per_s": max(pcie, 0.0),
            "pcie_tx_bytes_per_s": max(pcie * 0.18, 0.0),
            "encoder_util_pct": 0.0,
            "decoder_util_pct": 0.0,
            "mem_temperature_c": round(temp + 6) if any(h in m.name for h in HBM) else None,
        }
        values.update(self._slow_fields(gpu, busy, include_slow))
        values["clocks_event_reasons"] = clock_reasons(busy, power, m.power_limit_w, temp)
        values["energy_mj"] = round(self._energy.at(
            gpu, t, lambda at: self._power(gpu, at), power,
            3.6e9 * (1 + unit(self._seed, 12, gpu))))
        values.update(xids_by(t, tuple(self._faults.xids.get(gpu, ())), now - t))
        values.update(activity(m.name, self._phase(gpu, self._segment(gpu, t)[0]).name, util,
                               self._noise(gpu, 6, t, 5.0), self._gpm))
        for name in self._faults.unsupported_on(gpu):
            values[name] = None
        return GpuSample(index=gpu, timestamp_s=now, **values)  # type: ignore[arg-type]

    def _slow_fields(self, gpu: int, busy: bool, include_slow: bool) -> dict[str, object]:
        """Persistence, compute mode, display, MIG mode, power limit, pstate, health: re-read
        only when asked."""
        cached = self._slow_cache.get(gpu)
        if include_slow or cached is None:
            m = self._models[gpu]
            cached = {
                "persistence_mode": m.datacenter,
                "compute_mode": "Default",
                "display_active": not m.datacenter and gpu == 0,  # a desk's first card
                "mig_mode": False if any(g in m.name for g in MIG_CAPABLE) else None,
                "power_limit_w": float(m.power_limit_w),
                "pstate": ("P0" if m.datacenter else "P2") if busy else "P8",
                **slow_health(m.name, m.datacenter),
            }
            self._slow_cache[gpu] = cached
        return cached

    def _processes(self, gpu: int, t: float) -> list[GpuProcess]:
        k, _ = self._segment(gpu, t)
        # the phase's start, from k alone: the same float at every tick of the phase
        started = (self._t0 or 0.0) + (k - unit(self._seed, 5, gpu)) * PHASE_S
        util = self._util(gpu, t)
        result = []
        mibs = self._process_mib(gpu, t)
        for j, mib in enumerate(mibs):
            pick = mix(self._seed, 12, gpu, k, j)
            name, command = _PROGRAMS[pick % len(_PROGRAMS)]
            ptype = ProcessType.COMPUTE_GRAPHICS if name == "blender" else ProcessType.COMPUTE
            share = mib / max(1, sum(mibs))
            result.append(GpuProcess(
                gpu_index=gpu,
                pid=1000 + (pick >> 8) % 4_000_000,
                type=ptype,
                gpu_mem_bytes=mib * MIB,
                name=name,
                user=_USERS[(pick >> 40) % len(_USERS)],
                command=command,
                sm_util_pct=round(util * share, 1),
                cpu_pct=round(20.0 + 80.0 * share * util / 100.0
                              + 5.0 * self._noise(gpu, 5 + j, t, 3.0), 1),
                host_rss_bytes=int((1.5 + 6.0 * unit(self._seed, 14, gpu, k, j)) * 1024) * MIB,
                started_s=started,
            ))
        if not self._models[gpu].datacenter:
            result.insert(0, GpuProcess(
                gpu, 1000 + mix(self._seed, 13) % 3000, ProcessType.GRAPHICS, 180 * MIB,
                "Xorg", "root", "/usr/lib/xorg/Xorg vt2 -displayfd 3",
            ))
        if self._self_gpu == gpu:
            result.append(GpuProcess(
                gpu, os.getpid(), ProcessType.COMPUTE, 512 * MIB, "gpumon", None,
                "python -m gpumon --simulate", is_self=True,
            ))
        vanish = self._faults.vanished_pid_after_s
        if gpu == 0 and result and vanish is not None and t >= vanish:
            result[0] = dataclasses.replace(result[0], name=None, user=None, command=None)
        return result
