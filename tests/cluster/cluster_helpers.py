"""A real Prometheus server scraping real ``gpumon exporter`` processes, on loopback ports.

``Cluster`` starts them, waits (bounded) until the server has scraped everything, and stops
every process it started. Tests skip, saying why, only where the prometheus binary is missing.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FAKE_EXPORTER = Path(__file__).with_name("fake_exporter.py")
STATIC_EXPORTER = Path(__file__).with_name("static_exporter.py")
DCGM_PAGES = Path(__file__).with_name("dcgm_pages")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def prometheus_binary() -> str:
    path = shutil.which("prometheus")
    if path is None:
        pytest.skip("the prometheus binary is not installed (Debian: apt-get install prometheus)")
    return path


def wait_for(check: Callable[[], bool], timeout_s: float, what: str) -> None:
    """Poll ``check`` every 0.1 s for at most ``timeout_s``; fail saying ``what``."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.1)
    pytest.fail(f"timed out after {timeout_s:g} s waiting for {what}")


def http_ok(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=1) as r:
            return bool(r.status == 200)
    except OSError:
        return False


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    return env


#: How often the test server scrapes (Prometheus' own default is a minute; 1 s dashboards
#: exist). Short, so that a test waits little for each new scrape; the first scrape of a new
#: server still comes about 5 s after it starts (its target discovery runs every 5 s).
SCRAPE_S = 0.25


class Cluster:
    """Exporters (by host name) and one Prometheus server scraping them every SCRAPE_S."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.exporters: dict[str, tuple[subprocess.Popen[bytes], int]] = {}
        self.server: subprocess.Popen[bytes] | None = None
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"

    def add_simulated(self, host: str, gpus: int, seed: int = 0) -> None:
        self._start(host, [sys.executable, "-m", "gpumon", "exporter", "--simulate",
                           str(gpus), "--seed", str(seed)])

    def add_fake_nvml(self, host: str, library: Path, gpus: int, interval_s: float = 0.5
                      ) -> None:
        self._start(host, [sys.executable, str(FAKE_EXPORTER), str(library), str(gpus)],
                    interval_s=interval_s)

    def add_static(self, name: str, page: Path) -> None:
        """A static exporter serving ``page`` (a dcgm-exporter page), known as ``name``."""
        self._start(name, [sys.executable, str(STATIC_EXPORTER), str(page)], gpumon=False)

    def instance(self, name: str) -> str:
        """The scrape target's ``instance`` label of the exporter ``name``."""
        return f"127.0.0.1:{self.exporters[name][1]}"

    def _start(self, host: str, command: list[str], gpumon: bool = True,
               interval_s: float = 0.5) -> None:
        port = free_port()
        log_path = self.tmp / f"exporter-{len(self.exporters)}.log"
        log = open(log_path, "wb")  # noqa: SIM115
        options = ["--hostname", host, "--interval", str(interval_s)] if gpumon else []
        proc = subprocess.Popen(
            command + options + ["--listen", f"127.0.0.1:{port}"],
            env=_env(), stdout=log, stderr=subprocess.STDOUT)
        log.close()
        self.exporters[host] = (proc, port)
        wait_for(lambda: proc.poll() is not None or http_ok(f"http://127.0.0.1:{port}/metrics"),
                 20, f"the exporter of {host}")
        assert proc.poll() is None, log_path.read_text(errors="replace")

    def start_server(self) -> None:
        targets = ", ".join(f"'127.0.0.1:{port}'" for _, port in self.exporters.values())
        config = self.tmp / "prometheus.yml"
        ms = round(SCRAPE_S * 1000)
        config.write_text(f"global:\n  scrape_interval: {ms}ms\n  scrape_timeout: {ms - 50}ms\n"
                          "scrape_configs:\n  - job_name: gpumon\n"
                          f"    static_configs:\n      - targets: [{targets}]\n")
        log = open(self.tmp / "prometheus.log", "ab")  # noqa: SIM115
        self.server = subprocess.Popen(
            [prometheus_binary(), f"--config.file={config}",
             f"--storage.tsdb.path={self.tmp / 'data'}",
             f"--web.listen-address=127.0.0.1:{self.port}"],
            stdout=log, stderr=subprocess.STDOUT)
        log.close()
        wait_for(lambda: http_ok(f"{self.url}/-/ready"), 30, "Prometheus to be ready")

    def query(self, promql: str) -> list[dict[str, object]]:
        url = f"{self.url}/api/v1/query?" + urllib.parse.urlencode({"query": promql})
        with urllib.request.urlopen(url, timeout=5) as r:
            return list(json.load(r)["data"]["result"])

    def wait_scraped(self, gpus: int, timeout_s: float = 30,
                     metric: str = "DCGM_FI_DEV_GPU_UTIL") -> None:
        """Until the server has every exporter up and ``gpus`` series of ``metric``."""
        def ready() -> bool:
            try:
                up = self.query("up")
                util = self.query(metric)
            except OSError:
                return False
            return (len(up) == len(self.exporters) and all(u["value"][1] == "1" for u in up)
                    and len(util) == gpus)
        wait_for(ready, timeout_s, f"Prometheus to scrape {gpus} GPUs")

    def kill_exporter(self, host: str) -> None:
        proc, _ = self.exporters[host]
        proc.kill()
        proc.wait(10)

    def stop_server(self) -> None:
        if self.server is not None and self.server.poll() is None:
            self.server.terminate()
            try:
                self.server.wait(15)
            except subprocess.TimeoutExpired:
                self.server.kill()
                self.server.wait(5)

    def stop(self) -> None:
        self.stop_server()
        for proc, _ in self.exporters.values():
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(10)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(5)


__all__ = ["DCGM_PAGES", "Cluster", "free_port", "http_ok", "prometheus_binary", "wait_for"]
