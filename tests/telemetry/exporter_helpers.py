"""Helpers of the exporter tests: a running exporter in this process, and reading it back."""

from __future__ import annotations

import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from prometheus_client.parser import text_string_to_metric_families

from gpumon.telemetry.exporter.page import Pages
from gpumon.telemetry.exporter.reader import GpuReader
from gpumon.telemetry.exporter.routes import serve
from gpumon.telemetry.exporter.server import HttpServer
from gpumon.telemetry.model.types import Source


@dataclass
class Running:
    reader: GpuReader
    pages: Pages
    server: HttpServer

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.port}"

    def get(self, path: str, timeout: float = 5.0,
            headers: dict[str, str] | None = None) -> tuple[int, bytes]:
        """Status and body of GET ``path`` (an error status too)."""
        request = urllib.request.Request(self.url + path, headers=headers or {})
        try:
            with urllib.request.urlopen(request, timeout=timeout) as r:
                return r.status, r.read()
        except urllib.error.HTTPError as err:
            with err:
                return err.code, err.read()

    def families(self) -> dict[str, list[tuple[dict[str, str], float]]]:
        """/metrics parsed by prometheus_client: name -> [(labels, value)]."""
        status, body = self.get("/metrics")
        assert status == 200
        return {f.name: [(s.labels, s.value) for s in f.samples]
                for f in text_string_to_metric_families(body.decode())}


@contextmanager
def running(factory: Callable[[], Source], interval_s: float = 0.1,
            read_timeout_s: float = 0.5, **limits: float) -> Iterator[Running]:
    """An exporter reading ``factory()``'s source, served on a free loopback port."""
    pages = Pages("h")
    reader = GpuReader(factory, pages.publish, interval_s, read_timeout_s)
    server = serve("127.0.0.1", 0, pages, **limits)
    reader.start()
    try:
        yield Running(reader, pages, server)
    finally:
        server.close()
        reader.stop(timeout_s=5.0)
