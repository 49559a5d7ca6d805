"""A real Prometheus server scraping real ``gpumon exporter`` processes, on loopback ports.

``Cluster`` starts them, waits (bounded) until the server has scraped everything, and stops
every process it started. Tests skip, saying why, only where the prometheus binary is missing.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
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
#: exist). Short, so that a test waits little for each new scrape.
SCRAPE_S = 0.25


def _launch_server(folder: Path, port: int) -> subprocess.Popen[bytes]:
    """Prometheus on ``port``, its data in ``folder``, scraping the targets listed in
    ``folder/targets.json`` (file discovery: written later, they are read at once)."""
    targets = folder / "targets.json"
    if not targets.exists():
        targets.write_text("[]")
    config = folder / "prometheus.yml"
    ms = round(SCRAPE_S * 1000)
    config.write_text(f"global:\n  scrape_interval: {ms}ms\n  scrape_timeout: {ms - 50}ms\n"
                      "scrape_configs:\n  - job_name: gpumon\n"
                      f"    file_sd_configs:\n      - files: ['{targets}']\n")
    with open(folder / "prometheus.log", "ab") as log:
        return subprocess.Popen(
            [prometheus_binary(), f"--config.file={config}",
             f"--storage.tsdb.path={folder / 'data'}",
             f"--web.listen-address=127.0.0.1:{port}"],
            stdout=log, stderr=subprocess.STDOUT)


class _Spare:
    """One server started ahead for this process's next cluster. Prometheus hands new
    targets to its scrapers on a 5 s tick from its start, so a new server's first scrape
    comes 5 s after it starts; a server that has been running takes new targets at its next
    tick, 2.5 s later on average. Each cluster still gets a server of its own, with no
    series of another test's."""

    server: tuple[subprocess.Popen[bytes], int, Path] | None = None

    @classmethod
    def take(cls) -> tuple[subprocess.Popen[bytes], int, Path] | None:
        spare, cls.server = cls.server, None
        if spare is not None and spare[0].poll() is not None:
            shutil.rmtree(spare[2], ignore_errors=True)
            return None
        return spare

    @classmethod
    def start_next(cls) -> None:
        if cls.server is None:
            folder = Path(tempfile.mkdtemp(prefix="gpumon-test-prometheus-"))
            port = free_port()
            cls.server = (_launch_server(folder, port), port, folder)

    @classmethod
    def stop(cls) -> None:
        spare, cls.server = cls.server, None
        if spare is not None:
            spare[0].terminate()
            try:
                spare[0].wait(15)
            except subprocess.TimeoutExpired:
                spare[0].kill()
                spare[0].wait(5)
            shutil.rmtree(spare[2], ignore_errors=True)


atexit.register(_Spare.stop)


class Cluster:
    """Exporters (by host name) and one Prometheus server scraping them every SCRAPE_S."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.exporters: dict[str, tuple[subprocess.Popen[bytes], int]] = {}
        self.server: subprocess.Popen[bytes] | None = None
        self.port = free_port()  # the spare server's, when this cluster takes it
        self.url = f"http://127.0.0.1:{self.port}"
        self.folder = tmp  # the server's configuration, targets and data
        self._started = False

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
        log = open(log_path, "wb")
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
        """The server, scraping every exporter added so far: at first the spare one this
        process started ahead (its URL then becomes this cluster's); started again after
        ``stop_server``, a new one at the same URL on the same data."""
        spare = None if self._started else _Spare.take()
        if spare is not None:
            self.server, self.port, self.folder = spare
            self.url = f"http://127.0.0.1:{self.port}"
        self._write_targets()
        if spare is None:
            self.server = _launch_server(self.folder, self.port)
        self._started = True
        _Spare.start_next()  # for the next cluster of this process
        wait_for(lambda: http_ok(f"{self.url}/-/ready"), 30, "Prometheus to be ready")

    def _write_targets(self) -> None:
        targets = [f"127.0.0.1:{port}" for _, port in self.exporters.values()]
        path = self.folder / "targets.json"
        part = path.with_suffix(".part")
        part.write_text(json.dumps([{"targets": targets}]))
        part.replace(path)  # whole: the server never reads half a file

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
        if self.folder != self.tmp:  # the spare's folder: not under pytest's tmp_path
            shutil.rmtree(self.folder, ignore_errors=True)
        for proc, _ in self.exporters.values():
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(10)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(5)


__all__ = ["DCGM_PAGES", "Cluster", "free_port", "http_ok", "prometheus_binary", "wait_for"]
