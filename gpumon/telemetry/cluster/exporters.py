"""ExporterSource: many machines read straight from their exporters, with no Prometheus.

``gpumon --exporter URL[,URL...]`` scrapes each gpumon exporter's or dcgm-exporter's
``/metrics`` itself, every tick, all at once (a pool of threads, each GET with the cluster
reader's deadline, size cap and redirect rules: ``promhttp.py``), and reads the page with
prometheus_client's parser. Each exporter is a scrape target (job ``exporter``, instance
its ``host:port``), with an ``up`` of its own: what Prometheus would have stored, so the same
``fleet.py`` makes machines and GPUs of it, and a machine whose exporter does not answer
keeps its GPUs, shown lost with the reason. The machine in focus brings its processes; there
is no history to fill the graphs with (no server keeps one).
"""

from __future__ import annotations

import threading
import time
import urllib.parse
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from gpumon.i18n import ntr, tr
from gpumon.telemetry.cluster.fleet import Fleet, Target, parse_tick
from gpumon.telemetry.cluster.prometheus import TICK_NAMES, processes_of
from gpumon.telemetry.cluster.promhttp import Fetcher, PromError, shown
from gpumon.telemetry.model.exported import PROCESS_MEMORY
from gpumon.telemetry.model.types import (
    GpuInfo,
    HostView,
    MachineInfo,
    Snapshot,
    SourceState,
    SourceStatus,
)

JOB = "exporter"
MAX_PAGE_BYTES = 16 << 20  # a page of 8 GPUs with 200 processes is ~200 KB
_WANTED = frozenset(TICK_NAMES) | {PROCESS_MEMORY}


def metrics_url(url: str) -> str:
    """``http://host:9401`` -> ``http://host:9401/metrics``; a path given is kept."""
    parts = urllib.parse.urlsplit(url)
    return url if parts.path not in ("", "/") else url.rstrip("/") + "/metrics"


def page_series(text: str, target: Target, now: float) -> list[dict[str, Any]]:
    """The series gpumon reads from one exporter's page, shaped as a Prometheus instant
    query returns them (``metric`` labels with the target's job and instance, ``value``)."""
    out: list[dict[str, Any]] = []
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name not in _WANTED:
                continue
            labels = {str(k)[:128]: str(v)[:1024] for k, v in sample.labels.items()}
            labels.update(__name__=sample.name, job=target[0], instance=target[1])
            out.append({"metric": labels, "value": [now, repr(float(sample.value))]})
    return out


class ExporterSource:
    """The GPUs of the machines whose exporters are at ``urls``. Plain blocking calls."""

    def __init__(self, urls: Sequence[str], headers: Mapping[str, str] | None = None, *,
                 timeout_s: float = 5.0, clock: Callable[[], float] = time.time) -> None:
        self.urls = [metrics_url(u) for u in urls]
        self._headers = dict(headers or {})
        self.timeout_s = timeout_s
        self._clock = clock
        self._lock = threading.Lock()
        self._focus: str | None = None
        self._fleet = Fleet()
        self._pool: ThreadPoolExecutor | None = None
        self.where = ntr("{n} exporter", "{n} exporters", len(self.urls))
        self._machine = MachineInfo(host_name=tr("Exporters: {urls}", urls=", ".join(
            shown(u) for u in self.urls[:3]) + (", …" if len(self.urls) > 3 else "")),
            source_name="Prometheus")

    def _target(self, url: str) -> Target:
        return JOB, urllib.parse.urlsplit(url).netloc.rpartition("@")[2]

    # -- the Source protocol -------------------------------------------------------------------
    def open(self) -> SourceStatus:
        return SourceStatus(SourceState.OK, tr("Reading GPUs from {where}.", where=self.where))

    def machine(self) -> MachineInfo:
        return self._machine

    def gpus(self) -> list[GpuInfo]:
        return []

    def close(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True)

    def set_focus(self, host: str | None) -> None:
        with self._lock:
            self._focus = host

    # -- reading -------------------------------------------------------------------------------
    def _scrape(self, url: str, now: float) -> tuple[list[dict[str, Any]], str]:
        """One exporter's series, or none and the sentence why."""
        fetcher = Fetcher(url, self._headers, self.timeout_s)
        fetcher.max_bytes = MAX_PAGE_BYTES
        try:
            reply = fetcher.get(url)
            if reply.code != 200:
                return [], tr("{url} answered HTTP {code} {reason}", url=shown(url),
                              code=reply.code, reason=reply.reason[:80])
            return page_series(bytes(reply.body).decode("utf-8", "replace"),
                               self._target(url), now), ""
        except PromError as exc:
            return [], str(exc)
        except ValueError as exc:  # not the exposition format
            return [], tr("{url} does not serve Prometheus metrics ({error})",
                          url=shown(url), error=str(exc)[:120])

    def sample(self, include_slow: bool = True) -> Snapshot:
        """Every exporter scraped now; never raises."""
        start, now = time.monotonic(), self._clock()
        if self._pool is None:
            self._pool = ThreadPoolExecutor(min(16, max(1, len(self.urls))),
                                            thread_name_prefix="gpumon-exporters")
        answers = list(self._pool.map(lambda u: self._scrape(u, now), self.urls))
        series: list[dict[str, Any]] = []
        reasons: dict[Target, str] = {}
        for url, (found, why) in zip(self.urls, answers, strict=True):
            target = self._target(url)
            series += found
            series.append({"metric": {"__name__": "up", "job": target[0],
                                      "instance": target[1]},
                           "value": [now, "0" if why else "1"]})
            if why:
                reasons[target] = why
        hosts = self._fleet.update(parse_tick(series), reasons, now)
        with self._lock:
            focus = self._focus
        view = next((h for h in hosts if h.host == focus), hosts[0] if hosts else None)
        processes = processes_of([s for s in series
                                  if s["metric"]["__name__"] == PROCESS_MEMORY],
                                 self._fleet.members.get(view.host, {})) if view else ()
        return self._snapshot(now, hosts, view, processes, time.monotonic() - start)

    def _snapshot(self, now: float, hosts: list[HostView], view: HostView | None,
                  processes: tuple[Any, ...], took_s: float) -> Snapshot:
        n = sum(len(h.gpus) for h in hosts)
        status = SourceStatus(SourceState.OK if n else SourceState.NO_GPUS,
                              tr("{gpus} on {machines}, from {where}.",
                                 gpus=ntr("{n} GPU", "{n} GPUs", n),
                                 machines=ntr("{n} machine", "{n} machines", len(hosts)),
                                 where=self.where))
        return Snapshot(timestamp_s=now, machine=self._machine, status=status,
                        gpus=view.gpus if view else (), samples=view.samples if view else (),
                        migs=view.migs if view else (), processes=processes,
                        read_duration_s=max(1e-6, took_s), hosts=tuple(hosts),
                        simulated=any(g.simulated for h in hosts for g in h.gpus))
