"""A recorded Prometheus for benchmarks and screenshots: many machines without many processes.

``RecordedPrometheus(hosts, gpus)`` serves, on a loopback port, the query API answers that a
real Prometheus gives when it scrapes ``gpumon exporter --simulate`` on each machine: the
series come from the exporter's own collector (``GpuCollector.collect()`` over a
SimulatedSource per machine), with ``instance`` and ``job`` added as Prometheus adds them.
Each instant query re-reads the collectors (one interval's cache), so values move with time.
Only what PrometheusSource asks is answered: ``query`` (a metric name with an optional
``{Hostname="…"}``), ``query_range`` (the same, with points every step) and ``targets``.
"""

from __future__ import annotations

import json
import re
import threading
import time
import urllib.parse
from functools import partial
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from gpumon.telemetry.exporter import GpuCollector
from gpumon.telemetry.simulated import SimulatedSource

_SELECTOR = re.compile(r'^([A-Za-z_:][A-Za-z0-9_:]*)(?:\{Hostname=("(?:[^"\\]|\\.)*")\})?$')


class RecordedPrometheus:
    """Serves ``hosts`` machines of ``gpus`` simulated GPUs each; ``url`` once started."""

    def __init__(self, hosts: int = 64, gpus: int = 8, interval_s: float = 1.0) -> None:
        self.collectors = {
            f"node-{i:02d}": GpuCollector(partial(SimulatedSource, n_gpus=gpus, seed=i),
                                          interval_s, host=f"node-{i:02d}")
            for i in range(hosts)}
        self.queries = 0
        self.interval_s = interval_s
        self._lock = threading.Lock()
        self._scraped: dict[str, list[tuple[str, dict[str, str], float]]] = {}
        self._scraped_at = -float("inf")
        handler = partial(_Handler, self)
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> RecordedPrometheus:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        for c in self.collectors.values():
            c.close()

    def series(self, name: str, host: str | None) -> list[tuple[dict[str, str], float]]:
        """The series named ``name`` (of ``host`` only, if given) as a scrape left them."""
        with self._lock:
            now = time.monotonic()
            if now - self._scraped_at >= self.interval_s:  # a scrape per interval, as a
                self._scraped = self._scrape()  # server does, not one per query
                self._scraped_at = now
            found = self._scraped.get(name, [])
        return [(labels, v) for h, labels, v in found if host is None or h == host]

    def _scrape(self) -> dict[str, list[tuple[str, dict[str, str], float]]]:
        out: dict[str, list[tuple[str, dict[str, str], float]]] = {}
        for i, (host, collector) in enumerate(self.collectors.items()):
            instance = {"instance": f"10.0.{i // 250}.{i % 250 + 1}:9401", "job": "gpumon"}
            out.setdefault("up", []).append((host, instance, 1.0))
            for family in collector.collect():
                for s in family.samples:
                    out.setdefault(s.name, []).append(
                        (host, {"__name__": s.name, **s.labels, **instance}, s.value))
        return out


class _Handler(BaseHTTPRequestHandler):
    def __init__(self, recorded: RecordedPrometheus, *args: Any) -> None:
        self.recorded = recorded
        super().__init__(*args)

    def log_message(self, *_: Any) -> None:  # quiet
        pass

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        url = urllib.parse.urlsplit(self.path)
        params = dict(urllib.parse.parse_qsl(url.query))
        self.recorded.queries += 1
        if url.path == "/api/v1/targets":
            return self._send({"activeTargets": []})
        match = _SELECTOR.match(params.get("query", ""))
        if match is None or url.path not in ("/api/v1/query", "/api/v1/query_range"):
            return self._send(None, error="unsupported query")
        host = json.loads(match.group(2)) if match.group(2) else None
        found = self.recorded.series(match.group(1), host)
        if url.path == "/api/v1/query":
            t = float(params.get("time", 0) or 0)
            return self._send({"resultType": "vector", "result": [
                {"metric": labels, "value": [t, repr(v)]} for labels, v in found]})
        start, end, step = (float(params[k]) for k in ("start", "end", "step"))
        times = [start + k * step for k in range(int((end - start) // step) + 1)]
        return self._send({"resultType": "matrix", "result": [
            {"metric": labels, "values": [[t, repr(v)] for t in times]}
            for labels, v in found]})

    def _send(self, data: Any, error: str = "") -> None:
        body = json.dumps({"status": "error", "errorType": "bad_data", "error": error}
                          if error else {"status": "success", "data": data}).encode()
        self.send_response(400 if error else 200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


if __name__ == "__main__":  # serve in its own process (benchmarks measure the client's RSS)
    import argparse
    import sys

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", type=int, default=64)
    parser.add_argument("--gpus", type=int, default=8)
    args = parser.parse_args()
    with RecordedPrometheus(args.hosts, args.gpus) as recorded:
        print(recorded.url, flush=True)
        sys.stdin.read()  # until the parent closes our stdin
