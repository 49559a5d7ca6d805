"""PrometheusSource: every GPU a Prometheus server knows, from gpumon exporters or dcgm-exporters.

One instant query per metric per tick covers all machines. GPUs are grouped by host (the
``Hostname`` label, else the target's ``instance``). ``Snapshot.hosts`` carries every machine;
``Snapshot.gpus``/``samples`` are the machine in focus (the one whose panels are open), whose
history comes from range queries when the focus changes: gpumon keeps only what it draws.
A target whose ``up`` is 0 keeps its last known GPUs, shown lost with the reason.
"""

from __future__ import annotations

import dataclasses
import json
import math
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from gpumon.i18n import N_, ntr, tr
from gpumon.telemetry.exported import NVML_UP, PROCESS_MEMORY, READ_BACK
from gpumon.telemetry.metrics import HISTORY_KEYS
from gpumon.telemetry.promapi import PromClient, PromError, public_url
from gpumon.telemetry.types import (
    GpuInfo,
    GpuProcess,
    GpuSample,
    HostView,
    MachineInfo,
    ProcessType,
    Snapshot,
    SourceState,
    SourceStatus,
)

BACKFILL_POINTS = 720  # a range query's points per series: one hour at a 5 s step
# Prometheus metric -> (GpuSample field, factor to the field's unit): the exporter's table.
FIELDS: dict[str, tuple[str, float]] = READ_BACK
_INT_FIELDS = frozenset({"mem_used_bytes", "mem_free_bytes", "mem_total_bytes"})
GPU_UTIL = "DCGM_FI_DEV_GPU_UTIL"  # every exporter has it: the series that names a GPU
SCRAPE_FAILED = N_("the scrape failed")  # when Prometheus gives no reason of its own


def label_selector(name: str, value: str) -> str:
    """``{name="value"}`` with the value quoted as PromQL wants (quotes, backslashes,
    newlines escaped: JSON's string escapes are a subset of PromQL's)."""
    return "{" + name + "=" + json.dumps(value) + "}"


def _number(value: Any) -> float | None:
    """A sample's value (Prometheus sends numbers as strings); None when not finite."""
    try:
        v = float(value[1])
    except (TypeError, ValueError, IndexError):
        return None
    return v if math.isfinite(v) else None


@dataclass
class _Gpu:
    """What the source learned about one remote GPU: its labels and this tick's values."""

    host: str
    gpu: int
    labels: dict[str, str]
    values: dict[str, float] = field(default_factory=dict)


@dataclass
class _Host:
    """A machine's last known GPUs and how to select its series."""

    name: str
    instance: str
    by_hostname: bool
    gpus: tuple[GpuInfo, ...] = ()

    @property
    def selector(self) -> str:
        return label_selector("Hostname" if self.by_hostname else "instance", self.name)


class PrometheusSource:
    """The GPUs of every machine a Prometheus server scrapes. Plain blocking calls."""

    def __init__(self, url: str, headers: Mapping[str, str] | None = None, *,
                 timeout_s: float = 5.0, backfill_s: float = 3600.0,
                 clock: Callable[[], float] = time.time) -> None:
        self.client = PromClient(url, headers, timeout_s)
        self.backfill_s = backfill_s
        self._clock = clock
        self._lock = threading.Lock()
        self._focus: str | None = None
        self._filled_focus: str | None = None  # the host whose history was last sent
        self._hosts: dict[str, _Host] = {}
        self._infos: dict[tuple[str, int], GpuInfo] = {}
        self._machine = MachineInfo(host_name=tr("Prometheus at {url}",
                                                 url=public_url(self.client.url)),
                                    source_name="Prometheus")

    # -- the Source protocol ---------------------------------------------------------------
    def open(self) -> SourceStatus:
        """Nothing to connect yet: each tick asks the server, so a server that is down
        now is retried on every tick (its sentence arrives with the snapshot)."""
        self._filled_focus = None
        return SourceStatus(SourceState.OK, tr("Reading GPUs from {url}.",
                                               url=self.client.shown_url))

    def machine(self) -> MachineInfo:
        return self._machine

    def gpus(self) -> list[GpuInfo]:
        host = self._hosts.get(self.focus or "")
        return list(host.gpus) if host is not None else []

    def close(self) -> None:
        self._filled_focus = None

    # -- focus (set from any thread) -------------------------------------------------------
    @property
    def focus(self) -> str | None:
        with self._lock:
            return self._focus

    def set_focus(self, host: str | None) -> None:
        """Show ``host``'s GPUs as the snapshot's own (None: the first machine)."""
        with self._lock:
            self._focus = host

    # -- reading ---------------------------------------------------------------------------
    def sample(self, include_slow: bool = True) -> Snapshot:
        """All machines' GPUs now; a server that cannot be read gives a status that says
        why and no GPUs. Never raises."""
        start = time.monotonic()
        now = self._clock()
        try:
            hosts = self._read_hosts(now)
            focus = self.focus
            if focus not in self._hosts:
                focus = hosts[0].host if hosts else None
            view = next((h for h in hosts if h.host == focus), None)
            processes: tuple[GpuProcess, ...] = ()
            if focus is not None and view is not None and view.up:
                processes = self._processes(self._hosts[focus])
            backfill: tuple[Snapshot, ...] = ()
            if focus is not None and focus != self._filled_focus and view is not None:
                backfill = self._backfill(self._hosts[focus], view, now)
                self._filled_focus = focus
        except PromError as exc:
            self._filled_focus = None
            status = SourceStatus(SourceState.ERROR, str(exc),
                                  tr("gpumon tries again at every interval."))
            return Snapshot(timestamp_s=now, machine=self._machine, status=status,
                            read_duration_s=time.monotonic() - start)
        n = sum(len(h.gpus) for h in hosts)
        status = SourceStatus(SourceState.OK if n else SourceState.NO_GPUS,
                              tr("{gpus} on {machines}, from {url}.",
                                 gpus=ntr("{n} GPU", "{n} GPUs", n),
                                 machines=ntr("{n} machine", "{n} machines", len(hosts)),
                                 url=self.client.shown_url))
        return Snapshot(
            timestamp_s=now, machine=self._machine, status=status,
            gpus=view.gpus if view else (), samples=view.samples if view else (),
            processes=processes, read_duration_s=time.monotonic() - start,
            simulated=any(g.simulated for h in hosts for g in h.gpus),
            hosts=tuple(hosts), backfill=backfill)

    def _read_hosts(self, now: float) -> list[HostView]:
        gpus: dict[tuple[str, int], _Gpu] = {}
        for metric, (key, factor) in FIELDS.items():
            for series in self.client.query(metric):
                g = self._gpu_of(series["metric"], gpus)
                value = _number(series.get("value"))
                if g is not None and value is not None:
                    g.values[key] = value * factor
        up = {s["metric"].get("instance", ""): _number(s.get("value"))
              for s in self.client.query("up")}
        nvml: dict[str, float | None] = {}
        nvml_labels: dict[str, dict[str, str]] = {}
        for s in self.client.query(NVML_UP):
            host = self._host_key(s["metric"])[0]
            nvml[host], nvml_labels[host] = _number(s.get("value")), s["metric"]
        for host in {g.host for g in gpus.values()} | set(nvml):
            record = self._hosts.get(host)
            labels = next((g.labels for g in gpus.values() if g.host == host), None)
            if labels is None:  # no GPU series now: an exporter without NVML, or down
                if record is None:
                    name, by_hostname = self._host_key(nvml_labels[host])
                    self._hosts[host] = _Host(name, nvml_labels[host].get("instance", ""),
                                              by_hostname)
                continue
            name, by_hostname = self._host_key(labels)
            infos = tuple(self._info(g) for g in sorted(
                (g for g in gpus.values() if g.host == host), key=lambda g: g.gpu))
            self._hosts[host] = _Host(name, labels.get("instance", ""), by_hostname, infos)
        for host in [h for h, r in self._hosts.items() if r.instance and r.instance not in up]:
            del self._hosts[host]  # its target left the server's configuration
        known = {r.instance for r in self._hosts.values()}
        if any(v == 0.0 and instance not in known for instance, v in up.items()):
            self._remember_down_targets(now)
        down = {r.instance for r in self._hosts.values() if up.get(r.instance) == 0.0}
        errors = self._scrape_errors() if down else {}
        return [self._view(r, gpus, up, nvml, errors, now)
                for _, r in sorted(self._hosts.items())]

    def _remember_down_targets(self, now: float) -> None:
        """The GPUs of targets that are down and that this source never saw up (it started
        after they went down): their last series within ``backfill_s``, shown lost."""
        ghosts: dict[tuple[str, int], _Gpu] = {}
        window = f"{max(60, int(self.backfill_s))}s"
        for series in self.client.query(f"last_over_time({GPU_UTIL}[{window}]) "
                                        "unless on(instance) (up == 1)", at=now):
            self._gpu_of(series["metric"], ghosts)
        for host in sorted({g.host for g in ghosts.values()} - set(self._hosts)):
            gpus = sorted((g for g in ghosts.values() if g.host == host), key=lambda g: g.gpu)
            name, by_hostname = self._host_key(gpus[0].labels)
            self._hosts[host] = _Host(name, gpus[0].labels.get("instance", ""), by_hostname,
                                      tuple(self._info(g) for g in gpus))

    def _host_key(self, labels: Mapping[str, str]) -> tuple[str, bool]:
        hostname = labels.get("Hostname", "")
        return (hostname, True) if hostname else (labels.get("instance", "?"), False)

    def _gpu_of(self, labels: dict[str, str], gpus: dict[tuple[str, int], _Gpu]) -> _Gpu | None:
        host, _ = self._host_key(labels)
        try:
            index = int(labels.get("gpu", ""))
        except ValueError:
            return None
        g = gpus.get((host, index))
        if g is None:
            g = gpus[(host, index)] = _Gpu(host, index, labels)
        return g

    def _info(self, g: _Gpu) -> GpuInfo:
        total = g.values.get("mem_total_bytes")
        if total is None and "mem_used_bytes" in g.values and "mem_free_bytes" in g.values:
            total = g.values["mem_used_bytes"] + g.values["mem_free_bytes"]
        info = GpuInfo(index=g.gpu, name=g.labels.get("modelName", "GPU"),
                       uuid=g.labels.get("UUID", ""), pci_bus_id=g.labels.get("pci_bus_id", ""),
                       mem_total_bytes=None if total is None else int(total),
                       simulated=g.labels.get("simulated") == "1", host=g.host)
        key = (g.host, g.gpu)
        if self._infos.get(key) != info:  # keep one object per GPU while nothing changes
            self._infos[key] = info
        return self._infos[key]

    def _view(self, record: _Host, gpus: dict[tuple[str, int], _Gpu],
              up: dict[str, float | None], nvml: dict[str, float | None],
              errors: dict[str, str], now: float) -> HostView:
        if record.instance and up.get(record.instance) == 0.0:
            reason = errors.get(record.instance) or tr(SCRAPE_FAILED)
            message = tr("Prometheus cannot scrape {host} ({instance}): {reason}.",
                         host=record.name, instance=record.instance, reason=reason)
            lost = tuple(GpuSample(index=i.index, timestamp_s=now, lost=True, message=message)
                         for i in record.gpus)
            return HostView(record.name, False, message, record.gpus, lost)
        if nvml.get(record.name) == 0.0:  # GPUs it had before, if any, are shown lost
            message = tr("The exporter on {host} cannot read its GPUs "
                         "(gpumon_nvml_up is 0); its log says why.", host=record.name)
            lost = tuple(GpuSample(index=i.index, timestamp_s=now, lost=True, message=message)
                         for i in record.gpus)
            return HostView(record.name, True, message, record.gpus, lost)
        samples = tuple(_sample(gpus.get((record.name, i.index)), i, now) for i in record.gpus)
        return HostView(record.name, True, "", record.gpus, samples)

    def _scrape_errors(self) -> dict[str, str]:
        try:
            targets = self.client.targets()
        except PromError:
            return {}
        return {str(t.get("labels", {}).get("instance", "")): str(t.get("lastError") or
                                                                  tr(SCRAPE_FAILED))[:200]
                for t in targets if t.get("health") == "down"}

    def _processes(self, record: _Host) -> tuple[GpuProcess, ...]:
        out = []
        for s in self.client.query(PROCESS_MEMORY + record.selector):
            labels, value = s["metric"], _number(s.get("value"))
            try:
                gpu, pid = int(labels.get("gpu", "")), int(labels.get("pid", ""))
            except ValueError:
                continue
            command = labels.get("command") or None
            out.append(GpuProcess(gpu_index=gpu, pid=pid, type=ProcessType.COMPUTE,
                                  gpu_mem_bytes=None if value is None else int(value),
                                  name=command.split(" ")[0] if command else None,
                                  user=labels.get("user") or None, command=command))
        return tuple(sorted(out, key=lambda p: (p.gpu_index, p.pid)))

    def _backfill(self, record: _Host, view: HostView, now: float) -> tuple[Snapshot, ...]:
        """The last ``backfill_s`` seconds of the host's GPUs, one Snapshot per step."""
        step = max(1.0, self.backfill_s / BACKFILL_POINTS)
        rows: dict[float, dict[int, dict[str, float]]] = {}
        wanted = set(HISTORY_KEYS)
        for metric, (key, factor) in FIELDS.items():
            if key not in wanted:
                continue
            for series in self.client.query_range(metric + record.selector,
                                                  now - self.backfill_s, now - step, step):
                try:
                    gpu = int(series["metric"].get("gpu", ""))
                except ValueError:
                    continue
                for point in series.get("values") or ():
                    v = _number(point)
                    if v is not None:
                        t = float(point[0])
                        rows.setdefault(t, {}).setdefault(gpu, {})[key] = v * factor
        infos = {i.index: i for i in view.gpus}
        return tuple(
            Snapshot(timestamp_s=t, machine=self._machine,
                     status=SourceStatus(SourceState.OK, "history"), gpus=view.gpus,
                     samples=tuple(_from_values(gpu, t, values) for gpu, values in
                                   sorted(per_gpu.items()) if gpu in infos))
            for t, per_gpu in sorted(rows.items()))


def _from_values(index: int, t: float, values: Mapping[str, float]) -> GpuSample:
    kwargs: dict[str, Any] = {k: (int(v) if k in _INT_FIELDS else v) for k, v in values.items()
                              if k not in ("pstate", "lost")}
    return GpuSample(index=index, timestamp_s=t, **kwargs)


def _sample(g: _Gpu | None, info: GpuInfo, now: float) -> GpuSample:
    if g is None:  # known, but its series are gone while its target is up
        return GpuSample(index=info.index, timestamp_s=now, lost=True,
                         message=tr("The server has no current values for this GPU."))
    if g.values.get("lost", 0.0) >= 1.0:
        return GpuSample(index=g.gpu, timestamp_s=now, lost=True,
                         message=tr("The exporter reports this GPU as lost "
                                    "(gpumon_gpu_lost 1)."))
    sample = _from_values(g.gpu, now, g.values)
    pstate = g.values.get("pstate")
    if pstate is not None and 0 <= pstate <= 15:
        sample = dataclasses.replace(sample, pstate=f"P{int(pstate)}")
    return sample
