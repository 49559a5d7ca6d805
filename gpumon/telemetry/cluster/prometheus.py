"""PrometheusSource: every GPU a Prometheus server knows, from gpumon exporters or dcgm-exporters.

One instant query per tick reads every metric of every machine (a ``__name__`` regex over the
names gpumon understands, with ``up``); a second, beside it, the processes of the machine in
focus (the one whose panels are open). How series become machines and GPUs is ``fleet.py``.
``Snapshot.hosts`` carries every machine; ``Snapshot.gpus``/``samples`` are the machine in
focus, whose history comes from one range query when the focus changes: gpumon keeps only
what it draws. A target whose ``up`` is 0 keeps its last known GPUs, shown lost with the reason.
"""

from __future__ import annotations

import dataclasses
import json
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import Any

from gpumon.i18n import ntr, tr
from gpumon.telemetry.cluster.fleet import (
    SCRAPE_FAILED,
    Fleet,
    Target,
    from_values,
    number,
    parse_tick,
    target_of,
    usable,
)
from gpumon.telemetry.cluster.promapi import PromClient, PromError, TooLarge, public_url
from gpumon.telemetry.model.exported import NVML_UP, PROCESS_MEMORY, READ_BACK
from gpumon.telemetry.model.metrics import HISTORY_KEYS
from gpumon.telemetry.model.types import (
    GpuInfo,
    GpuProcess,
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
GPU_UTIL = "DCGM_FI_DEV_GPU_UTIL"  # every exporter has it: the series that names a GPU
TICK_NAMES = (*sorted(READ_BACK), NVML_UP, "up")
TICK_QUERY = '{__name__=~"' + "|".join(TICK_NAMES) + '"}'
HISTORY_QUERY = '{__name__=~"' + "|".join(
    sorted(m for m, (key, _) in READ_BACK.items() if key in HISTORY_KEYS)) + '"'
REASONS_MAX_AGE_S = 10.0  # the targets list (why a scrape failed) is asked at most this often


def _regex_quote(text: str) -> str:
    """``text`` matched literally by an RE2 regex (PromQL's ``=~``)."""
    return "".join("\\" + c if c in "\\.+*?()|[]{}^$" else c for c in text)


def instances_matcher(targets: set[Target]) -> str:
    """``instance=~"a|b"`` for these targets (the caller keeps only their jobs' series);
    json.dumps quotes it as PromQL wants: JSON's string escapes are a subset of PromQL's."""
    alternatives = "|".join(sorted({_regex_quote(t[1]) for t in targets}))
    return "instance=~" + json.dumps(alternatives)


def _type(labels: dict[str, str]) -> ProcessType:
    """A process's type as the exporter labels it (C, G or C+G); compute where it does not
    say (an exporter before the label, or a value it does not know)."""
    try:
        return ProcessType(labels.get("type", "C"))
    except ValueError:
        return ProcessType.COMPUTE


def processes_of(series: Iterable[Mapping[str, Any]],
                 members: Mapping[tuple[Target, str], int]) -> tuple[GpuProcess, ...]:
    """The processes of a machine's GPUs (``members``: its GPUs by target and id) among
    ``gpumon_process_gpu_memory_bytes`` series, by GPU then PID; labels checked, capped."""
    gpus = {(target, index) for (target, _), index in members.items()}
    out = []
    for s in series:
        labels, value = s["metric"], number(s.get("value"))
        value = None if value is None else usable("gpu_mem_bytes", value)
        gpu, pid = labels.get("gpu", ""), labels.get("pid", "")
        if not (gpu.isascii() and gpu.isdigit() and pid.isascii() and pid.isdigit()
                and len(gpu) <= 6 and len(pid) <= 10):
            continue
        if (target_of(labels), int(gpu)) not in gpus:
            continue
        command = labels.get("command") or None
        out.append(GpuProcess(gpu_index=int(gpu), pid=int(pid), type=_type(labels),
                              gpu_mem_bytes=None if value is None else int(value),
                              name=command.split(" ")[0] if command else None,
                              user=labels.get("user") or None, command=command))
    return tuple(sorted(out, key=lambda p: (p.gpu_index, p.pid)))


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
        self._fleet = Fleet()
        self._views: dict[str, HostView] = {}
        self._ghosts_asked: set[Target] = set()
        self._reasons: dict[Target, str] = {}
        self._reasons_at = -float("inf")
        self._pool: ThreadPoolExecutor | None = None
        # A fleet whose one answer is over the size cap (some 1,700 machines of 8 GPUs at
        # 64 MiB) is read one metric per query from then on, four at a time.
        self._split = False
        self._split_pool: ThreadPoolExecutor | None = None
        self.queries = 0  # HTTP queries so far (benchmarks read it)
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
        view = self._views.get(self.focus or "")
        return list(view.gpus) if view is not None else []

    def close(self) -> None:
        self._filled_focus = None
        for pool in (self._pool, self._split_pool):
            if pool is not None:
                pool.shutdown(wait=True)
        self._pool = self._split_pool = None

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
            hosts, processes, backfill = self._read(now)
        except PromError as exc:
            self._filled_focus = None
            status = SourceStatus(SourceState.ERROR, str(exc),
                                  tr("gpumon tries again at every interval."))
            return Snapshot(timestamp_s=now, machine=self._machine, status=status,
                            read_duration_s=time.monotonic() - start)
        view = self._views.get(self._current_focus(hosts) or "")
        n = sum(len(h.gpus) for h in hosts)
        status = SourceStatus(SourceState.OK if n else SourceState.NO_GPUS,
                              tr("{gpus} on {machines}, from {url}.",
                                 gpus=ntr("{n} GPU", "{n} GPUs", n),
                                 machines=ntr("{n} machine", "{n} machines", len(hosts)),
                                 url=self.client.source_text))
        machine = self._machine
        if view is not None and view.driver_version:
            machine = dataclasses.replace(machine, driver_version=view.driver_version)
        return Snapshot(
            timestamp_s=now, machine=machine, status=status,
            gpus=view.gpus if view else (), samples=view.samples if view else (),
            migs=view.migs if view else (), processes=processes,
            read_duration_s=time.monotonic() - start,
            simulated=any(g.simulated for h in hosts for g in h.gpus),
            hosts=tuple(hosts), backfill=backfill)

    def _current_focus(self, hosts: list[HostView]) -> str | None:
        focus = self.focus
        if focus in self._views:
            return focus
        return hosts[0].host if hosts else None

    def _read(self, now: float
              ) -> tuple[list[HostView], tuple[GpuProcess, ...], tuple[Snapshot, ...]]:
        """The tick's query, and beside it the focused machine's processes and (when the
        focus changed) its history: the machine as the last tick knew it."""
        if self._pool is None:
            self._pool = ThreadPoolExecutor(3, thread_name_prefix="gpumon-prometheus")
        before = self._views.get(self._current_focus(list(self._views.values())) or "")
        tick_f = self._pool.submit(self._tick_series)
        proc_f: Future[tuple[GpuProcess, ...]] | None = None
        back_f: Future[tuple[Snapshot, ...]] | None = None
        if before is not None and before.up:
            proc_f = self._pool.submit(self._processes, self._members(before.host))
        if before is not None and before.host != self._filled_focus:
            back_f = self._pool.submit(self._backfill, before, self._members(before.host), now)
        try:
            hosts = self._hosts(tick_f.result(), now)
            processes = proc_f.result() if proc_f else ()
            backfill = back_f.result() if back_f else ()
        finally:  # a failed query: the others end within their own deadlines
            for f in (tick_f, proc_f, back_f):
                if f is not None:
                    f.cancel()
        if back_f is not None and before is not None:
            self._filled_focus = before.host
        focus = self._current_focus(hosts)
        view = self._views.get(focus or "")
        if view is not None and (before is None or before.host != focus):
            # a machine not known at the last tick (the first tick): ask now
            members = self._members(view.host)
            processes = self._processes(members) if view.up else ()
            if focus != self._filled_focus:
                backfill = self._backfill(view, members, now)
                self._filled_focus = focus
        return hosts, processes, backfill

    def _tick_series(self) -> list[dict[str, Any]]:
        """Every series a tick reads: one query, or one per metric for a fleet too large.
        Split, the first answer over the cap ends the tick: the server sends too much
        whatever gpumon asks, and each query still running would read its own 64 MiB."""
        if not self._split:
            try:
                return self._query(TICK_QUERY, None, False)
            except TooLarge:
                self._split = True
        if self._split_pool is None:
            self._split_pool = ThreadPoolExecutor(4, thread_name_prefix="gpumon-prometheus")
        stop = threading.Event()

        def one(name: str) -> list[dict[str, Any]]:
            if stop.is_set():
                return []
            try:
                return self._query("{__name__=" + json.dumps(name) + "}", None, False, stop)
            except PromError:
                stop.set()
                raise

        parts = [self._split_pool.submit(one, name) for name in TICK_NAMES]
        wait(parts)  # quick once one failed: the others stop reading or never start
        errors = [e for e in (part.exception() for part in parts) if e is not None]
        if errors:  # the cause (too large) before the queries it stopped
            raise next((e for e in errors if isinstance(e, TooLarge)), errors[0])
        return [s for part in parts for s in part.result()]

    def _query(self, promql: str, at: float | None = None, clean: bool = True,
               stop: threading.Event | None = None) -> list[dict[str, Any]]:
        self.queries += 1
        return self.client.query(promql, at, clean=clean, stop=stop)

    def _hosts(self, series: list[dict[str, Any]], now: float) -> list[HostView]:
        tick = parse_tick(series)
        self._ghosts_asked &= tick.up.keys()  # only targets still configured
        down = {t for t, v in tick.up.items() if v == 0.0}
        unknown = down - self._fleet.known_targets() - self._ghosts_asked
        if unknown:
            self._remember_down_targets(now)
            self._ghosts_asked |= unknown
        relevant = down & (self._fleet.known_targets() | set(tick.nvml))
        if relevant and time.monotonic() - self._reasons_at > REASONS_MAX_AGE_S:
            self._reasons = self._scrape_errors()
            self._reasons_at = time.monotonic()
        hosts = self._fleet.update(tick, self._reasons, now)
        self._views = {h.host: h for h in hosts}
        return hosts

    def _remember_down_targets(self, now: float) -> None:
        """The GPUs of targets that are down and that this source never saw up (it started
        after they went down): their last series within ``backfill_s``, shown lost."""
        window = f"{max(60, int(self.backfill_s))}s"
        found = self._query(f"last_over_time({GPU_UTIL}[{window}]) "
                            "unless on(job, instance) (up == 1)", at=now)
        for s in found:
            s["metric"]["__name__"] = GPU_UTIL  # last_over_time drops the name
        self._fleet.remember(parse_tick(found).readings.values(), now)

    def _scrape_errors(self) -> dict[Target, str]:
        try:
            self.queries += 1
            targets = self.client.targets()
        except PromError:
            return {}
        out = {}
        for t in targets:
            labels = t.get("labels")
            if t.get("health") == "down" and isinstance(labels, dict):
                key = (str(labels.get("job", "")), str(labels.get("instance", "")))
                out[key] = str(t.get("lastError") or tr(SCRAPE_FAILED))[:200]
        return out

    def _members(self, host: str) -> dict[tuple[Target, str], int]:
        return self._fleet.members.get(host, {})

    def _processes(self, members: Mapping[tuple[Target, str], int]
                   ) -> tuple[GpuProcess, ...]:
        targets = {target for target, _ in members}
        if not targets:
            return ()
        return processes_of(
            self._query(PROCESS_MEMORY + "{" + instances_matcher(targets) + "}"), members)

    def _backfill(self, view: HostView, members: Mapping[tuple[Target, str], int],
                  now: float) -> tuple[Snapshot, ...]:
        """The last ``backfill_s`` seconds of the host's GPUs, one Snapshot per step, from
        one range query over every history metric of the machine's targets."""
        targets = {target for target, _ in members}
        if not targets:
            return ()
        step = max(1.0, self.backfill_s / BACKFILL_POINTS)
        start, end = now - self.backfill_s, now - step
        self.queries += 1
        found = self.client.query_range(
            HISTORY_QUERY + "," + instances_matcher(targets) + "}", start, end, step)
        rows: dict[float, dict[int, dict[str, float]]] = {}
        for series in found:
            labels = series["metric"]
            read = READ_BACK.get(labels.get("__name__", ""))
            uuid = labels.get("UUID", "")
            key = (target_of(labels), uuid or "#" + labels.get("gpu", ""))
            index = members.get(key)
            points = series.get("values")
            if read is None or index is None or labels.get("GPU_I_ID") or not isinstance(
                    points, list):
                continue
            for point in points:
                v = number(point)
                t = number([None, point[0]]) if isinstance(point, list) and point else None
                v = None if v is None else usable(read[0], v * read[1])
                # a time outside the range asked for is no point of it (1e308 s is no date)
                if v is not None and t is not None and start - step <= t <= end + step:
                    rows.setdefault(t, {}).setdefault(index, {})[read[0]] = v
        return tuple(
            Snapshot(timestamp_s=t, machine=self._machine,
                     status=SourceStatus(SourceState.OK, "history"), gpus=view.gpus,
                     samples=tuple(from_values(gpu, t, values)
                                   for gpu, values in sorted(per_gpu.items())))
            for t, per_gpu in sorted(rows.items()))
