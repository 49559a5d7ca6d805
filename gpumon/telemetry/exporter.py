"""The Prometheus exporter: a ``prometheus_client`` collector that reads a Source when scraped.

Metric names, types, units and labels follow NVIDIA dcgm-exporter's defaults
(``etc/default-counters.csv``: ``DCGM_FI_DEV_FB_USED`` in MiB, ``DCGM_FI_DEV_POWER_USAGE`` in W,
labels ``gpu``, ``UUID``, ``pci_bus_id``, ``device``, ``modelName``, ``Hostname``), so that a
Grafana dashboard written for dcgm-exporter works unchanged. What dcgm-exporter lacks is
under ``gpumon_``, in base units. A field the GPU does not report is left out, never sent as 0.
Readings are cached for one interval, so two scrapers do not double the NVML calls.
"""

from __future__ import annotations

import logging
import socket
import threading
import time
from collections.abc import Callable, Iterator

from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from gpumon.interval import EXPORTER
from gpumon.telemetry.exported import (
    DCGM_FIELDS,
    GPUMON_FIELDS,
    LOST,
    LOST_HELP,
    NVML_UP,
    NVML_UP_HELP,
    PROCESS_MEMORY,
    PSTATE,
    PSTATE_HELP,
)
from gpumon.telemetry.sampler import Sampler
from gpumon.telemetry.types import (
    GpuInfo,
    GpuSample,
    Snapshot,
    Source,
    SourceState,
    SourceStatus,
)

log = logging.getLogger(__name__)

DEFAULT_PORT = 9401  # beside dcgm-exporter's 9400, so both can run on one machine
DEFAULT_LISTEN = f"127.0.0.1:{DEFAULT_PORT}"
MAX_COMMAND_CHARS = 64  # a process's command line is cut here: labels of bounded size

GPU_LABELS = ("gpu", "UUID", "pci_bus_id", "device", "modelName", "Hostname")
PROCESS_LABELS = ("gpu", "UUID", "pid", "user", "command", "Hostname")


PROCESS_HELP = ("GPU memory a process holds (bytes); the command is cut to "
                f"{MAX_COMMAND_CHARS} characters.")


def gpu_label_values(info: GpuInfo, host: str) -> list[str]:
    """dcgm-exporter's labels of one GPU, in GPU_LABELS's order."""
    return [str(info.index), info.uuid, info.pci_bus_id, f"nvidia{info.index}", info.name, host]


def cut_command(command: str | None, limit: int = MAX_COMMAND_CHARS) -> str:
    """A command line on one line, cut to ``limit`` characters (an ellipsis says it was cut)."""
    text = " ".join((command or "").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


class GpuCollector(Collector):
    """Builds the metric families from one Source reading per interval, at scrape time.

    A source that cannot open (no driver) is tried again at most once per interval, so the
    exporter picks the GPUs up when the driver appears; meanwhile ``gpumon_nvml_up`` is 0.
    """

    def __init__(self, source_factory: Callable[[], Source], interval_s: float = EXPORTER.default,
                 host: str | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        self._factory = source_factory
        self.interval_s = interval_s
        self.host = host or socket.gethostname()
        self._clock = clock
        self._lock = threading.Lock()
        self._sampler: Sampler | None = None
        self._snapshot: Snapshot | None = None
        self._read_at = -float("inf")
        self._logged: str | None = None
        self.reads = 0  # source readings so far (scrapes within one interval share one)

    def read(self) -> Snapshot | None:
        """The cached snapshot, read again when it is older than one interval."""
        with self._lock:
            now = self._clock()
            if self._snapshot is not None and now - self._read_at < self.interval_s:
                return self._snapshot
            self._read_at = now
            status = self._sampler.status if self._sampler is not None else None
            if status is None or not status.usable:  # first read, or no driver yet: (re)open
                status = self._open()
            self._log_status(status)
            sampler = self._sampler
            self._snapshot = sampler.tick() if sampler is not None and status.usable else None
            self.reads += 1
            if self._snapshot is not None:
                self._log_status(self._snapshot.status)
            return self._snapshot

    def _open(self) -> SourceStatus:
        if self._sampler is not None:
            self._sampler.close()
        try:
            self._sampler = Sampler(self._factory(), clock=self._clock)
        except Exception as exc:  # e.g. nvidia-ml-py is not installed
            self._sampler = None
            return SourceStatus(SourceState.ERROR, f"gpumon could not load its NVML support "
                                f"({type(exc).__name__}: {exc}).", "Install nvidia-ml-py.")
        return self._sampler.open()

    def close(self) -> None:
        with self._lock:
            if self._sampler is not None:
                self._sampler.close()
                self._sampler = None

    def collect(self) -> Iterator[Metric]:
        snap = self.read()
        up = snap is not None and snap.status.usable
        simulated = snap is not None and snap.simulated
        extra = ["1"] if simulated else []
        host_labels = ["Hostname"] + (["simulated"] if simulated else [])
        nvml = GaugeMetricFamily(NVML_UP, NVML_UP_HELP, labels=host_labels)
        nvml.add_metric([self.host, *extra], 1.0 if up else 0.0)
        yield nvml
        if snap is None or not up:
            return
        yield from self._gpu_families(snap, extra)
        yield self._process_family(snap, extra)

    def _gpu_families(self, snap: Snapshot, extra: list[str]) -> Iterator[Metric]:
        labels = list(GPU_LABELS) + (["simulated"] if extra else [])
        families = {f.name: GaugeMetricFamily(f.name, f.help, labels=labels)
                    for f in DCGM_FIELDS + GPUMON_FIELDS}
        pstate = GaugeMetricFamily(PSTATE, PSTATE_HELP, labels=labels)
        lost = GaugeMetricFamily(LOST, LOST_HELP, labels=labels)
        samples = {s.index: s for s in snap.samples}
        for info in snap.gpus:
            values = gpu_label_values(info, self.host) + extra
            sample = samples.get(info.index)
            is_lost = sample is None or sample.lost
            lost.add_metric(values, 1.0 if is_lost else 0.0)
            if sample is None or is_lost:
                continue
            for f in DCGM_FIELDS + GPUMON_FIELDS:
                value = _value(sample, f.key)
                if value is not None:
                    families[f.name].add_metric(values, value / f.scale)
            if sample.pstate is not None and sample.pstate[1:].isdigit():
                pstate.add_metric(values, float(sample.pstate[1:]))
        yield from families.values()
        yield pstate
        yield lost

    def _process_family(self, snap: Snapshot, extra: list[str]) -> Metric:
        labels = list(PROCESS_LABELS) + (["simulated"] if extra else [])
        family = GaugeMetricFamily(PROCESS_MEMORY, PROCESS_HELP, labels=labels)
        uuids = {g.index: g.uuid for g in snap.gpus}
        for p in snap.processes:
            if p.gpu_mem_bytes is None:
                continue
            command = cut_command(p.command or p.name)
            family.add_metric([str(p.gpu_index), uuids.get(p.gpu_index, ""), str(p.pid),
                               p.user or "", command, self.host, *extra],
                              float(p.gpu_mem_bytes))
        return family

    def _log_status(self, status: SourceStatus) -> None:
        """Log the source's state when it changes (not on every scrape)."""
        text = status.message if not status.hint else f"{status.message} {status.hint}"
        if text == self._logged:
            return
        self._logged = text
        if status.usable:
            log.info("GPU source ready: %s", status.message)
        else:
            log.warning("no GPU data (gpumon_nvml_up 0): %s", text)


def _value(sample: GpuSample, key: str) -> float | None:
    v = getattr(sample, key)
    return None if v is None else float(v)
