"""The exporter's /metrics text, rendered straight from a reading and kept for its interval.

``prometheus_client.generate_latest`` builds a Sample per value and escapes and validates every
label of every sample on every scrape: ~75 % of a scrape. A GPU's labels do not change, so
here each GPU's label set is escaped once (when the GPU list changes) and each reading is
rendered once, then served as the same bytes to every scraper within the interval. The text
is byte for byte what ``generate_latest`` writes for the same reading over ``GpuCollector``
(tests compare both, and parse both back with prometheus_client's parser).
"""

from __future__ import annotations

import gzip
import threading
from collections.abc import Sequence

from prometheus_client.utils import floatToGoString

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
from gpumon.telemetry.exporter import (
    GPU_LABELS,
    PROCESS_HELP,
    PROCESS_LABELS,
    GpuCollector,
    cut_command,
    gpu_label_values,
)
from gpumon.telemetry.types import GpuInfo, GpuProcess, GpuSample, Snapshot

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"  # Prometheus's text format 0.0.4
INF = float("inf")
MAX_CACHED_PROCESSES = 4096  # distinct process label sets kept; the cache is emptied beyond
MAX_CACHED_NUMBERS = 4096  # texts of large values (memory sizes, PCIe rates) kept, likewise


def escape_label_value(value: str) -> str:
    """A label value as the text format writes it (backslash, newline and quote escaped)."""
    return value.replace("\\", r"\\").replace("\n", r"\n").replace('"', r"\"")


def label_text(names: Sequence[str], values: Sequence[str]) -> str:
    """``{name="value",...}`` sorted by name, as ``generate_latest`` writes a label set."""
    pairs = sorted(zip(names, values, strict=True))
    return "{" + ",".join(f'{n}="{escape_label_value(v)}"' for n, v in pairs) + "}"


def number(value: float) -> str:
    """A sample value exactly as ``generate_latest`` writes it (``floatToGoString``), faster.

    ``repr`` below 1e6; above it ``floatToGoString`` moves the point into an exponent as Go
    does (``25757220864.0`` -> ``2.5757220864e+10``); infinities and NaN in Go's spelling.
    """
    if -1e6 < value < 1e6:
        return repr(value)
    if 0 < value < INF:
        text = repr(value)
        dot = text.find(".")
        if dot > 6:
            mantissa = f"{text[0]}.{text[1:dot]}{text[dot + 1:]}".rstrip("0.")
            return f"{mantissa}e+{dot - 1:02d}"
        return text
    return floatToGoString(value)


def _header(name: str, help_text: str) -> str:
    doc = help_text.replace("\\", r"\\").replace("\n", r"\n")
    return f"# HELP {name} {doc}\n# TYPE {name} gauge\n"


_NVML_UP_HEADER = _header(NVML_UP, NVML_UP_HELP)
_FIELDS = tuple((_header(f.name, f.help), f.key, f.scale) for f in DCGM_FIELDS + GPUMON_FIELDS)
_NAMES = tuple(f.name for f in DCGM_FIELDS + GPUMON_FIELDS) + (PSTATE, LOST)
_PSTATES = {f"P{i}": number(float(i)) for i in range(16)}
_PSTATE_HEADER = _header(PSTATE, PSTATE_HELP)
_LOST_HEADER = _header(LOST, LOST_HELP)
_PROCESS_HEADER = _header(PROCESS_MEMORY, PROCESS_HELP)


class TextRenderer:
    """Renders a Snapshot as the text format, escaping each GPU's and process's labels once."""

    def __init__(self, host: str) -> None:
        self.host = host
        self._gpus: tuple[GpuInfo, ...] = ()
        self._simulated = False
        # _prefixes[family][position in snap.gpus]: 'name{labels} ', as in _NAMES's order.
        self._prefixes: list[list[str]] = [[] for _ in _NAMES]
        self._processes: dict[tuple[object, ...], str] = {}
        self._numbers: dict[float, str] = {}  # number() of values outside +-1e6, memoized
        self._up_lines = {(up, sim): self._up_line(up, sim) for up in (False, True)
                          for sim in (False, True)}

    def _up_line(self, up: bool, simulated: bool) -> str:
        names = ("Hostname", "simulated") if simulated else ("Hostname",)
        values = (self.host, "1") if simulated else (self.host,)
        return f"{_NVML_UP_HEADER}{NVML_UP}{label_text(names, values)} {number(float(up))}\n"

    def render(self, snap: Snapshot | None) -> bytes:
        """The /metrics body for one reading (None: no source could be opened)."""
        up = snap is not None and snap.status.usable
        out = [self._up_lines[up, snap is not None and snap.simulated]]
        if snap is not None and up:
            self._render_gpus(snap, out)
            self._render_processes(snap, out)
        return "".join(out).encode("utf-8")

    def _prefixes_for(self, gpus: tuple[GpuInfo, ...], simulated: bool) -> list[list[str]]:
        """Each family's line prefix per GPU, escaped again only when the GPUs change."""
        same = (simulated == self._simulated and len(gpus) == len(self._gpus)
                and all(a is b for a, b in zip(gpus, self._gpus, strict=True)))
        if not same:
            names = GPU_LABELS + (("simulated",) if simulated else ())
            extra = ["1"] if simulated else []
            labels = [label_text(names, gpu_label_values(g, self.host) + extra) for g in gpus]
            self._prefixes = [[f"{name}{lab} " for lab in labels] for name in _NAMES]
            self._gpus, self._simulated = gpus, simulated
        return self._prefixes

    def _render_gpus(self, snap: Snapshot, out: list[str]) -> None:
        prefixes = self._prefixes_for(snap.gpus, snap.simulated)
        samples = {s.index: s for s in snap.samples}
        live: list[tuple[int, GpuSample]] = []
        lost_prefix = prefixes[-1]
        lost_lines: list[str] = []
        for pos, info in enumerate(snap.gpus):
            sample = samples.get(info.index)
            if sample is None or sample.lost:
                lost_lines.append(f"{lost_prefix[pos]}1.0\n")
            else:
                lost_lines.append(f"{lost_prefix[pos]}0.0\n")
                live.append((pos, sample))
        append = out.append
        big = self._numbers
        if len(big) > MAX_CACHED_NUMBERS:
            big.clear()
        for (header, key, scale), prefix in zip(_FIELDS, prefixes, strict=False):
            append(header)
            for pos, sample in live:
                value = getattr(sample, key)
                if value is not None:
                    value = value / scale  # a float, as GpuCollector's float(v) / scale
                    if -1e6 < value < 1e6:
                        append(f"{prefix[pos]}{value!r}\n")
                    else:
                        text = big.get(value)
                        if text is None:
                            text = big[value] = number(value)
                        append(f"{prefix[pos]}{text}\n")
        append(_PSTATE_HEADER)
        pstate_prefix = prefixes[-2]
        for pos, sample in live:
            pstate = sample.pstate
            if pstate is not None:
                text = _PSTATES.get(pstate)
                if text is None and pstate[1:].isdigit():
                    text = number(float(pstate[1:]))
                if text is not None:
                    append(f"{pstate_prefix[pos]}{text}\n")
        append(_LOST_HEADER)
        out.extend(lost_lines)

    def _render_processes(self, snap: Snapshot, out: list[str]) -> None:
        out.append(_PROCESS_HEADER)
        uuids = {g.index: g.uuid for g in snap.gpus}
        simulated = snap.simulated
        cache, big = self._processes, self._numbers
        for p in snap.processes:
            if p.gpu_mem_bytes is None:
                continue
            key = (p.gpu_index, uuids.get(p.gpu_index, ""), p.pid, p.user, p.command, p.name,
                   simulated)
            lab = cache.get(key)  # 'gpumon_process_gpu_memory_bytes{labels} '
            if lab is None:
                if len(cache) >= MAX_CACHED_PROCESSES:
                    cache.clear()
                lab = cache[key] = self._process_labels(p, str(key[1]), simulated)
            value = p.gpu_mem_bytes / 1.0
            text = big.get(value)
            if text is None:
                text = big[value] = number(value)
            out.append(f"{lab}{text}\n")

    def _process_labels(self, p: GpuProcess, uuid: str, simulated: bool) -> str:
        names = PROCESS_LABELS + (("simulated",) if simulated else ())
        values = [str(p.gpu_index), uuid, str(p.pid), p.user or "",
                  cut_command(p.command or p.name), self.host] + (["1"] if simulated else [])
        return f"{PROCESS_MEMORY}{label_text(names, values)} "


class Exposition:
    """The collector's reading as /metrics bytes, rendered once per reading for all scrapers."""

    def __init__(self, collector: GpuCollector) -> None:
        self.collector = collector
        self._renderer = TextRenderer(collector.host)
        self._lock = threading.Lock()
        self._key: object = object()  # the reading the cached bytes were rendered from
        self._body = b""
        self._gzipped: bytes | None = None
        self.renders = 0  # readings rendered so far

    def body(self, gzipped: bool = False) -> bytes:
        """The text for the collector's current reading (gzip-compressed if asked)."""
        snap = self.collector.read()
        with self._lock:
            if snap is not self._key:
                self._body = self._renderer.render(snap)
                self._gzipped = None
                self._key = snap
                self.renders += 1
            if not gzipped:
                return self._body
            if self._gzipped is None:
                # level 1: 4x faster than the default, ~10 % larger
                self._gzipped = gzip.compress(self._body, compresslevel=1)
            return self._gzipped
