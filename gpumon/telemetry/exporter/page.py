"""The exporter's /metrics bytes: each View rendered by prometheus_client once, then served.

The format is prometheus_client's content negotiation (``choose_encoder``: OpenMetrics to a
Prometheus that prefers it, the text format 0.0.4 otherwise), gzip when the client asks. A
View is rendered once per format and encoding the first time it is asked for, and every
scraper until the next View gets the same bytes. When a View is published that a scrape is
due to take, the format the last scraper asked for is rendered right away (in the reader's
thread, not a scrape's): at 16 GPUs one rendering costs a few milliseconds
(``benchmarks/bench_exporter.py``), so only what is asked for is rendered, and only for a
scrape that is coming. A reader at 1 s scraped every 15 s rendered 14 pages in 15 for no one:
4 ms of CPU a second at 8 GPUs, half of an idle exporter's CPU. So a View is rendered ahead
when the next scrape, at the pace scrapes have come so far, is due before the next View but
one, or when that pace is not known yet; a scraper that missed two scrapes counts as gone.
A scrape that comes sooner, or the first scrape, renders the View it takes itself. Only a
``name[]`` filter renders per request.
"""

from __future__ import annotations

import gzip
import socket
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from prometheus_client.core import Metric
from prometheus_client.exposition import choose_encoder, gzip_accepted

from gpumon.telemetry.exporter.series import DEFAULT_OPTIONS, Options, View, families
from gpumon.telemetry.model.exported import DCGM_FIELDS

MAX_NAMES = 64  # name[] values honoured per request; the rest are ignored
MAX_FORMATS = 8  # (content type, gzip) pairs kept per View: Accept headers vary
MAX_ACCEPT_CHARS = 512  # of the Accept header remembered for the next View
_SMOOTH = 0.25  # weight of the newest gap in the running averages of the two paces
LONE_SCRAPE_S = 60.0  # the pace assumed after a first scrape (Prometheus's default interval)


# prometheus_client's text format 0.0.4 names a counter's HELP and TYPE lines "<name>_total"
# (its OpenMetrics habit); dcgm-exporter's counters carry no such suffix, and dashboards query
# them as they are, so their two comment lines are put back on the samples' own name.
_COUNTER_LINES = tuple(
    (f"# {what} {f.name}_total ".encode(), f"# {what} {f.name} ".encode())
    for f in DCGM_FIELDS if f.kind == "counter" for what in ("HELP", "TYPE"))


def _encode(encoder: Callable[[Any], bytes], content_type: str, families: Any) -> bytes:
    if content_type.startswith("application/openmetrics-text"):
        return encoder(_Families([_openmetrics(m) for m in families.collect()]))
    data = encoder(families)
    if content_type.startswith("text/plain"):
        for wrong, right in _COUNTER_LINES:
            data = data.replace(wrong, right, 1)
    return data


def _openmetrics(family: Metric) -> Metric:
    """``family`` as OpenMetrics allows it. An OpenMetrics counter's samples must be named
    ``<name>_total``; dcgm-exporter's counters have no suffix, and a strict parser
    (prometheus_client's) refused the whole page ("Clashing name:
    DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"). Such a family goes out as type ``unknown``, which
    OpenMetrics allows under any sample name: the series keep dcgm-exporter's names, what
    dashboards and alerts query, in both formats; only OpenMetrics' type is lost."""
    if family.type != "counter" or all(s.name != family.name for s in family.samples):
        return family
    unknown = Metric(family.name, family.documentation, "unknown", family.unit)
    unknown.samples = family.samples
    return unknown


class _Families:
    """A fixed list of families, as prometheus_client's encoders want a collector."""

    def __init__(self, metrics: Sequence[Metric]) -> None:
        self._metrics = metrics

    def collect(self) -> Iterable[Metric]:
        return self._metrics


@dataclass(frozen=True)
class Body:
    """One answer to a GET /metrics."""

    content_type: str
    gzipped: bool
    data: bytes


class Page:
    """One View, rendered lazily per format and kept."""

    def __init__(self, view: View, metrics: Sequence[Metric]) -> None:
        self.view = view
        self._families = _Families(metrics)
        self._lock = threading.Lock()
        self._cache: dict[tuple[str, bool], bytes] = {}
        self.renders = 0  # encodings made of this View (not counting name[] filters)

    def body(self, accept: str | None = None, accept_encoding: str | None = None,
             names: Sequence[str] = ()) -> Body:
        """What to answer a scraper that sent these headers and ``name[]`` values."""
        encoder, content_type = choose_encoder(accept or "")
        zipped = gzip_accepted(accept_encoding or "")
        if names:
            data = _encode(encoder, content_type,
                           _Families([m for m in self._families.collect()
                                      if m.name in set(names[:MAX_NAMES])]))
            return Body(content_type, zipped, gzip.compress(data, 1) if zipped else data)
        key = (content_type, zipped)
        with self._lock:
            cached = self._cache.get(key)
            if cached is not None:
                return Body(content_type, zipped, cached)
            plain = self._cache.get((content_type, False))
            if plain is None:
                plain = _encode(encoder, content_type, self._families)
                self.renders += 1
            # level 1: 4x faster than the default, ~10 % larger
            data = gzip.compress(plain, compresslevel=1) if zipped else plain
            if len(self._cache) >= MAX_FORMATS:
                self._cache.clear()
            self._cache[(content_type, False)] = plain
            self._cache[key] = data
        return Body(content_type, zipped, data)


class Pages:
    """The latest Page; ``publish`` is GpuReader's hand-off (it renders the text format)."""

    def __init__(self, host: str | None = None, options: Options = DEFAULT_OPTIONS,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.host = host or socket.gethostname()
        self.options = options
        self._clock = clock
        self._accept = ""  # what the last scraper accepted: the next View is rendered so
        self._gzip = ""
        self._scraped_at: float | None = None  # the last scrape, and the paces (seconds)
        self._scrape_every: float | None = None
        self._published_at: float | None = None
        self._publish_every: float | None = None
        start = View(None, False, "starting: not read yet", False)
        self._page = Page(start, families(start, self.host, self.options))
        self.published = 0

    def asked(self, accept: str | None, accept_encoding: str | None) -> None:
        """A scraper's headers: the format to render the next View in, and when it came."""
        self._accept = (accept or "")[:MAX_ACCEPT_CHARS]
        self._gzip = (accept_encoding or "")[:MAX_ACCEPT_CHARS]
        now = self._clock()
        if self._scraped_at is not None:
            self._scrape_every = _pace(self._scrape_every, now - self._scraped_at)
        self._scraped_at = now

    def _render_ahead(self, now: float) -> bool:
        """Whether a scrape will take the View published ``now`` (module doc)."""
        if self._scraped_at is None:
            return False  # no scraper yet: the first one renders what it takes
        since = now - self._scraped_at
        if since > 2 * (self._scrape_every or LONE_SCRAPE_S):
            return False  # the scraper is gone, or two scrapes late: the next one renders
        if self._scrape_every is None or self._publish_every is None:
            return True
        return since + 1.5 * self._publish_every >= self._scrape_every

    def publish(self, view: View) -> None:
        now = self._clock()
        if self._published_at is not None:
            self._publish_every = _pace(self._publish_every, now - self._published_at)
        self._published_at = now
        page = Page(view, families(view, self.host, self.options))
        if self._render_ahead(now):
            page.body(self._accept, self._gzip)  # now, rather than in the next scrape
        self._page = page  # one reference assignment: scrapers see the old or the new page
        self.published += 1

    @property
    def current(self) -> Page:
        return self._page


def _pace(average: float | None, gap: float) -> float:
    return gap if average is None else average + _SMOOTH * (gap - average)
