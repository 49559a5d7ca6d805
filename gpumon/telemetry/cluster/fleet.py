"""A Prometheus answer as machines and GPUs: a GPU is its UUID, a machine its host label.

Pure data work, no I/O, linear in the number of series (each series is looked at once, each
GPU a few times), so a tick of 12,500 machines costs ten times one of 1,250.

- A series belongs to the GPU of its ``UUID`` label (``job``/``instance``/``gpu`` when an
  exporter sends none). Two scrape targets reporting one UUID are one GPU, shown once from one
  of them; the others are named in ``GpuInfo.duplicates``.
- A machine is the ``Hostname`` label (dcgm-exporter before 4.x, gpumon before it followed),
  else ``hostname`` (dcgm-exporter from 4.x, gpumon), else the target's ``instance``. Two
  targets with one host name whose GPUs share an index are two machines (two containers with
  one name): each is shown as ``host (instance)``, so names and numbers never mix.
- Each target (``job``, ``instance``) has its own ``up``: when one of two exporters on a
  machine stops, only its GPUs are shown lost, with the server's reason.
- dcgm-exporter's MIG series (``GPU_I_ID``, ``GPU_I_PROFILE``) become MIG devices under their
  parent GPU; ``DCGM_FI_DRIVER_VERSION`` is the machine's driver version.
- What is remembered is bounded (``FORGET_AFTER_S``, ``MAX_GPUS_PER_TARGET``): a target whose
  UUIDs change at every scrape costs at most its cap of GPUs, and its row says so.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from gpumon.i18n import N_, tr
from gpumon.telemetry.cluster.promapi import clean_labels
from gpumon.telemetry.model.exported import NVML_UP, READ_BACK
from gpumon.telemetry.model.health import HEALTH_KEYS, from_exporter
from gpumon.telemetry.model.plausible import physical_range
from gpumon.telemetry.model.types import GpuInfo, GpuSample, HostView, MigSample

Target = tuple[str, str]  # (job, instance): one scrape target
MIG_ID, MIG_PROFILE = "GPU_I_ID", "GPU_I_PROFILE"
DRIVER_LABEL = "DCGM_FI_DRIVER_VERSION"
_INT_FIELDS = frozenset({"mem_used_bytes", "mem_free_bytes", "mem_total_bytes"})
SCRAPE_FAILED = N_("the scrape failed")  # when Prometheus gives no reason of its own
# A number past 2**53 is no exact count any more, and the views turn values into ints and
# pixels: DCGM_FI_DEV_FB_USED = 1e308 (MiB, so inf bytes) once raised OverflowError and
# blanked the whole cluster. Nothing gpumon reads back can be that large.
MAX_VALUE = float(1 << 53)
# What the fleet remembers is bounded whatever a server sends: a target whose GPU UUIDs
# change at every scrape (a relabel gone wrong, MIG reconfigured in a loop) took the window
# from 238 MB to 3.25 GB in 240 s while every UUID ever seen was kept. A GPU of a target that
# is up but has had no series for FORGET_AFTER_S is forgotten (a down target keeps its GPUs,
# shown lost), and a target keeps at most MAX_GPUS_PER_TARGET GPUs, the ones seen last
# (the largest machines have 16 GPUs; dcgm-exporter's MIG devices are under their GPU).
FORGET_AFTER_S = 300.0
MAX_GPUS_PER_TARGET = 64


def value_range(key: str) -> tuple[float, float]:
    """The values a GpuSample field read back can take (in its unit): what a GPU can report
    (``plausible.physical_range``, as for NVML's readings), else from 0; within MAX_VALUE."""
    low, high = physical_range(key) or (0.0, MAX_VALUE)
    return low, min(high, MAX_VALUE)


# Prometheus metric -> (field, factor to the field's unit, lowest and highest usable value)
_READ: dict[str, tuple[str, float, float, float]] = {
    name: (key, scale, *value_range(key)) for name, (key, scale) in READ_BACK.items()}


def usable(key: str, value: float) -> float | None:
    """``value`` (already in the field's unit) when a GpuSample field can hold it, else None:
    not finite, negative, beyond its range (see ``value_range``). That one field of that one
    GPU is then not available; the rest of the GPU and the cluster stay."""
    low, high = value_range(key)
    return value if low <= value <= high else None  # NaN compares False


def number(value: Any) -> float | None:
    """A sample's value (Prometheus sends ``[time, "value"]``); None unless finite."""
    try:
        v = float(value[1])
    except (TypeError, ValueError, IndexError, KeyError):
        return None
    return v if math.isfinite(v) else None


def host_of(labels: Mapping[str, str]) -> str:
    """The machine a series comes from: its host label, else its scrape target."""
    return (labels.get("Hostname") or labels.get("hostname") or labels.get("instance")
            or "?")


def target_of(labels: Mapping[str, str]) -> Target:
    return labels.get("job", ""), labels.get("instance", "")


def target_text(target: Target) -> str:
    """``instance (job)``, or the instance alone when the job is unnamed."""
    job, instance = target
    return f"{instance} ({job})" if job else instance


@dataclass
class Reading:
    """One GPU as one scrape target reports it: its labels and, this tick, its values."""

    target: Target
    index: int
    uuid: str
    labels: dict[str, str]
    values: dict[str, float] | None = field(default_factory=dict)  # None: no series now
    migs: dict[str, dict[str, float]] = field(default_factory=dict)  # GPU_I_ID -> values
    mig_labels: dict[str, dict[str, str]] = field(default_factory=dict)

    @property
    def key(self) -> tuple[Target, str]:
        return self.target, self.uuid or f"#{self.index}"


@dataclass
class Tick:
    """One query's answer, sorted: GPU readings, each target's up and gpumon_nvml_up."""

    readings: dict[tuple[Target, str], Reading] = field(default_factory=dict)
    up: dict[Target, float | None] = field(default_factory=dict)
    nvml: dict[Target, tuple[float | None, dict[str, str]]] = field(default_factory=dict)


def parse_tick(series: Iterable[Mapping[str, Any]]) -> Tick:
    """Sort an instant query's series (with ``__name__``) into a Tick, in one pass.

    Labels may be anything JSON holds (the client does not clean the tick's answer, which is
    most of a tick's cost): a GPU's labels are checked and cleaned once, when its first series
    is met, and the series after it are matched by their raw identifying labels."""
    tick = Tick()
    seen: dict[Any, tuple[Reading, str] | None] = {}  # raw identity -> reading, MIG id
    for s in series:
        try:
            labels = s["metric"]
            name = labels.get("__name__")
            read = _READ.get(name) if name.__class__ is str else None
            if read is None:
                if name == "up" or name == NVML_UP:
                    _liveness(tick, name, clean_labels(labels), s.get("value"))
                continue
            raw = (labels.get("job"), labels.get("instance"), labels.get("UUID"),
                   labels.get("gpu"), labels.get(MIG_ID))
            found = seen.get(raw, _UNSEEN)
            if found is _UNSEEN:
                found = seen[raw] = _reading_of(clean_labels(labels), tick.readings)
            if found is None:
                continue
            value = float(s["value"][1]) * read[1]
        except (TypeError, ValueError, KeyError, IndexError, AttributeError):
            continue  # an unhashable label, a value that is not a number: not a series
        if read[2] <= value <= read[3]:  # usable(), inlined: a tick reads 100,000 of them
            r, mig = found
            values = r.migs[mig] if mig else r.values
            if values is not None:
                values[read[0]] = value
    return tick


_UNSEEN: Any = object()


def _small_int(text: str) -> bool:
    """Digits int() reads ("²" is a digit to str.isdigit, not to int), at most six."""
    return text.isascii() and text.isdigit() and len(text) <= 6


def _liveness(tick: Tick, name: str, labels: dict[str, str], value: Any) -> None:
    if name == "up":
        tick.up[target_of(labels)] = number(value)
    else:
        tick.nvml[target_of(labels)] = (number(value), labels)


def _reading_of(labels: dict[str, str], readings: dict[tuple[Target, str], Reading]
                ) -> tuple[Reading, str] | None:
    """The GPU (and MIG id) a series with these labels belongs to; None when it has no
    usable ``gpu`` label."""
    gpu = labels.get("gpu", "")
    if not _small_int(gpu):
        return None
    target = target_of(labels)
    uuid = labels.get("UUID", "")
    key = (target, uuid or f"#{gpu}")
    r = readings.get(key)
    if r is None:
        r = readings[key] = Reading(target, int(gpu), uuid, labels)
    mig = labels.get(MIG_ID, "")
    if mig and mig not in r.migs:
        r.migs[mig], r.mig_labels[mig] = {}, labels
    return r, mig


def from_values(index: int, t: float, values: Mapping[str, float], **more: Any) -> GpuSample:
    """A GpuSample from READ_BACK fields (already in the sample's units), and ``more``."""
    kwargs: dict[str, Any] = {k: (int(v) if k in _INT_FIELDS else v) for k, v in values.items()
                              if k not in ("pstate", "lost") and k not in HEALTH_KEYS}
    kwargs.update(from_exporter(values))  # counts, flags, the bitmask and the last XID
    pstate = values.get("pstate")
    if pstate is not None and 0 <= pstate <= 15:
        kwargs["pstate"] = f"P{int(pstate)}"
    return GpuSample(index=index, timestamp_s=t, **kwargs, **more)


@dataclass
class _Machine:
    name: str
    readings: list[Reading] = field(default_factory=list)
    targets: set[Target] = field(default_factory=set)


class Fleet:
    """What a source knows of every machine across ticks: GPUs are remembered while their
    target is configured, so a target that goes down shows its GPUs lost, not gone."""

    def __init__(self) -> None:
        self._known: dict[tuple[Target, str], Reading] = {}
        self._seen: dict[tuple[Target, str], float] = {}  # when each was last in a tick
        self._infos: dict[tuple[Target, str], GpuInfo] = {}
        self._capped: dict[Target, int] = {}  # targets over the cap -> GPUs left out
        # machine name -> its GPUs' keys and indexes, as of the last update
        self.members: dict[str, dict[tuple[Target, str], int]] = {}

    def __len__(self) -> int:
        """How many GPUs the fleet remembers (every table of it is as long or shorter)."""
        return len(self._known)

    def remember(self, readings: Iterable[Reading], now: float) -> None:
        """GPUs of targets never seen up (a source started after they went down)."""
        for r in readings:
            if r.key not in self._known:
                self._known[r.key] = dataclasses.replace(r, values=None)
                self._seen[r.key] = now
        self._cap()

    def _forget(self, key: tuple[Target, str]) -> None:
        del self._known[key]
        self._seen.pop(key, None)
        self._infos.pop(key, None)

    def _cap(self) -> None:
        """At most MAX_GPUS_PER_TARGET GPUs per target: those seen last, then by index."""
        by_target: dict[Target, list[tuple[Target, str]]] = {}
        for key in self._known:
            by_target.setdefault(key[0], []).append(key)
        self._capped = {}
        for target, keys in by_target.items():
            if len(keys) <= MAX_GPUS_PER_TARGET:
                continue
            keys.sort(key=lambda k: (-self._seen.get(k, 0.0), self._known[k].index, k[1]))
            for key in keys[MAX_GPUS_PER_TARGET:]:
                self._forget(key)
            self._capped[target] = len(keys) - MAX_GPUS_PER_TARGET

    def known_targets(self) -> set[Target]:
        return {r.target for r in self._known.values()}

    def update(self, tick: Tick, reasons: Mapping[Target, str], now: float) -> list[HostView]:
        """Every machine as of this tick, sorted by name."""
        for key, r in tick.readings.items():
            self._known[key] = r
            self._seen[key] = now
        for key, r in list(self._known.items()):
            if key not in tick.readings:
                if r.target not in tick.up:  # its target left the server's configuration
                    self._forget(key)
                elif (tick.up[r.target] != 0.0
                      and now - self._seen.get(key, now) > FORGET_AFTER_S):
                    self._forget(key)  # its target is up and has not named it for minutes
                elif r.values is not None:
                    self._known[key] = dataclasses.replace(r, values=None)
        self._cap()
        chosen = self._one_per_uuid(tick)
        machines: dict[str, _Machine] = {}
        for r, _ in chosen:
            m = machines.setdefault(host_of(r.labels), _Machine(host_of(r.labels)))
            m.readings.append(r)
            m.targets.add(r.target)
        for target, (_, labels) in tick.nvml.items():
            m = machines.setdefault(host_of(labels), _Machine(host_of(labels)))
            m.targets.add(target)
        duplicates = {r.key: d for r, d in chosen}
        drivers = {r.uuid: r.labels[DRIVER_LABEL] for r in self._known.values()
                   if r.labels.get(DRIVER_LABEL)}  # by GPU: duplicates' labels count too
        views = []
        members = {}  # built aside: other threads read the last one meanwhile
        for m in _split_mixed(machines.values()):
            driver = next((drivers[r.uuid] for r in m.readings if r.uuid in drivers), None)
            views.append(self._view(m, tick, reasons, duplicates, now, driver))
            members[m.name] = {r.key: r.index for r in m.readings}
        self.members = members
        return sorted(views, key=lambda v: v.host)

    def _one_per_uuid(self, tick: Tick) -> list[tuple[Reading, tuple[str, ...]]]:
        """Each GPU once: of the targets that report one UUID, the one that is up and has
        the most values (then the first by name); the others are its duplicates."""
        by_uuid: dict[str, list[Reading]] = {}
        out: list[tuple[Reading, tuple[str, ...]]] = []
        for r in self._known.values():
            if r.uuid:
                by_uuid.setdefault(r.uuid, []).append(r)
            else:
                out.append((r, ()))
        for group in by_uuid.values():
            if len(group) == 1:
                out.append((group[0], ()))
                continue
            group.sort(key=lambda r: (tick.up.get(r.target) == 0.0, r.values is None,
                                      -len(r.values or ()), r.target))
            out.append((group[0], tuple(target_text(r.target) for r in group[1:])))
        return out

    def _view(self, m: _Machine, tick: Tick, reasons: Mapping[Target, str],
              duplicates: Mapping[tuple[Target, str], tuple[str, ...]], now: float,
              driver: str | None) -> HostView:
        down = {t for t in m.targets if tick.up.get(t) == 0.0}
        no_nvml = {t for t in m.targets if tick.nvml.get(t, (None,))[0] == 0.0}
        messages = {t: tr("Prometheus cannot scrape {host} ({instance}): {reason}.",
                          host=m.name, instance=t[1],
                          reason=reasons.get(t) or tr(SCRAPE_FAILED)) for t in sorted(down)}
        for t in sorted(no_nvml - down):
            messages[t] = tr("The exporter on {host} cannot read its GPUs "
                             "(gpumon_nvml_up is 0); its log says why.", host=m.name)
        notes = [tr("{instance} reported more GPUs than gpumon keeps for one scrape target "
                    "({cap}): {n} left out, the ones seen longest ago. Are its GPU UUIDs "
                    "changing at every scrape?", instance=t[1], cap=MAX_GPUS_PER_TARGET,
                    n=self._capped[t]) for t in sorted(m.targets & self._capped.keys())]
        infos, samples, migs = [], [], []
        for r in sorted(m.readings, key=lambda r: (r.index, r.target)):
            info = self._info(r, m.name, duplicates.get(r.key, ()))
            infos.append(info)
            samples.append(_sample(r, info, messages.get(r.target), now))
            migs += _migs(r, info)
        return HostView(m.name, up=not m.targets or bool(m.targets - down),
                        message=" ".join([*messages.values(), *notes]), gpus=tuple(infos),
                        samples=tuple(samples), migs=tuple(migs), driver_version=driver)

    def _info(self, r: Reading, host: str, duplicates: tuple[str, ...]) -> GpuInfo:
        values = r.values or {}
        total = values.get("mem_total_bytes")
        if total is None and "mem_used_bytes" in values and "mem_free_bytes" in values:
            total = values["mem_used_bytes"] + values["mem_free_bytes"]
        old = self._infos.get(r.key)
        if total is None and old is not None:  # a lost GPU keeps the size it had
            total = old.mem_total_bytes
        total_bytes = None if total is None else int(total)
        name, pci = r.labels.get("modelName") or "GPU", r.labels.get("pci_bus_id", "")
        if (old is not None and old.mem_total_bytes == total_bytes and old.host == host
                and old.duplicates == duplicates and old.index == r.index
                and old.name == name and old.pci_bus_id == pci):
            return old  # one object per GPU while nothing changes
        info = self._infos[r.key] = GpuInfo(
            index=r.index, name=name, uuid=r.uuid, pci_bus_id=pci, mem_total_bytes=total_bytes,
            simulated=r.labels.get("simulated") == "1", host=host,
            source=target_text(r.target), duplicates=duplicates)
        return info


def _split_mixed(machines: Iterable[_Machine]) -> list[_Machine]:
    """A host name whose targets report one GPU index with different GPUs is several
    machines: one per target, named ``host (instance)``."""
    out = []
    for m in machines:
        seen: dict[int, Target] = {}
        mixed = False
        for r in m.readings:
            first = seen.setdefault(r.index, r.target)
            mixed = mixed or first != r.target
        if not mixed:
            out.append(m)
            continue
        instances = [t[1] for t in m.targets]
        parts: dict[Target, _Machine] = {}
        for t in m.targets:
            label = t[1] if instances.count(t[1]) == 1 else target_text(t)
            parts[t] = _Machine(f"{m.name} ({label})", targets={t})
        for r in m.readings:
            parts[r.target].readings.append(r)
        out += parts.values()
    return out


def _sample(r: Reading, info: GpuInfo, why_lost: str | None, now: float) -> GpuSample:
    if why_lost:
        return GpuSample(index=r.index, timestamp_s=now, lost=True, message=why_lost)
    if r.values is None:  # known, but its series are gone while its target is up
        return GpuSample(index=r.index, timestamp_s=now, lost=True,
                         message=tr("The server has no current values for this GPU."))
    if r.values.get("lost", 0.0) >= 1.0:
        return GpuSample(index=r.index, timestamp_s=now, lost=True,
                         message=tr("The exporter reports this GPU as lost "
                                    "(gpumon_gpu_lost 1)."))
    if info.mem_total_bytes is not None and "mem_total_bytes" not in r.values:
        return from_values(r.index, now, r.values, mem_total_bytes=info.mem_total_bytes)
    return from_values(r.index, now, r.values)


def _migs(r: Reading, info: GpuInfo) -> list[MigSample]:
    """The MIG devices of a GPU, by GPU instance id, named as nvidia-smi names them."""
    out = []
    for gi, values in r.migs.items():
        labels = r.mig_labels.get(gi, {})
        used, free = values.get("mem_used_bytes"), values.get("mem_free_bytes")
        profile = labels.get(MIG_PROFILE, "")
        out.append(MigSample(
            gpu_index=r.index, gpu_instance_id=int(gi) if _small_int(gi) else None,
            compute_instance_id=None, uuid=labels.get("UUID", info.uuid),
            name=f"{info.name} MIG {profile}".strip(),
            mem_total_bytes=None if used is None or free is None else int(used + free),
            mem_used_bytes=None if used is None else int(used)))
    return sorted(out, key=lambda m: (m.gpu_instance_id is None, m.gpu_instance_id or 0))
