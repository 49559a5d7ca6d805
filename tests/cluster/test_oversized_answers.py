"""A Prometheus stand-in that answers every query with 200 MB, fast: memory stays bounded.

Each answer over the 64 MiB cap used to keep its body alive through the exception's
traceback, and a tick split into 37 queries held one each: ``--once`` peaked at 2.4 GB.
The stand-in streams its answer in 1 MiB writes and stops when gpumon closes the socket, so
what really crosses loopback is about 64 MiB a query, and the queries are counted.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from cluster_helpers import ROOT

pytestmark = pytest.mark.slow  # subprocesses that read a few hundred MiB over loopback
ANSWER_BYTES = 200_000_000
MAX_PEAK_RSS_MB = 400  # the bound; the fixed client peaks near 270 MB
_CHUNK = b"[" * (1 << 20)


class Flood:
    """Answers each GET with ``ANSWER_BYTES`` of JSON-looking text (Content-Length sent or
    not); counts the requests."""

    def __init__(self, content_length: bool) -> None:
        self.requests = 0
        flood = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *_: Any) -> None:
                pass

            def do_GET(self) -> None:
                flood.requests += 1
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                if content_length:
                    self.send_header("Content-Length", str(ANSWER_BYTES))
                self.end_headers()
                sent = 0
                try:
                    while sent < ANSWER_BYTES:
                        self.wfile.write(_CHUNK)
                        sent += len(_CHUNK)
                except OSError:  # gpumon closed the connection: it read enough
                    pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self._thread = threading.Thread(target=self.httpd.serve_forever, args=(0.02,),
                                        daemon=True)
        self._thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture(params=[False, True], ids=["streamed", "content-length"])
def flood(request: pytest.FixtureRequest) -> Iterator[Flood]:
    server = Flood(content_length=request.param)
    yield server
    server.close()


# Started from a small launcher, not from this test's process: the peak RSS Linux keeps for a
# child counts the memory it had before its exec, which for a child of a pytest worker is
# the worker's own (700 MB measured in a whole run).
LAUNCHER = """
import os, resource, subprocess, sys
done = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                      text=True, check=False)
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
sys.stderr.write(f"{done.returncode} {peak:.1f}\\n" + done.stderr)
"""


def run_measured(argv: list[str], timeout: float = 120) -> tuple[int, str, float]:
    """(exit status, stderr, peak RSS in MB) of one process, measured by its parent, a small
    launcher (``RUSAGE_CHILDREN``)."""
    done = subprocess.run([sys.executable, "-c", LAUNCHER, *argv], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout, check=False)
    head, _, err = done.stderr.partition("\n")
    code, peak = head.split()
    return int(code), err, float(peak)


def test_once_against_200_mb_answers_stays_bounded(flood: Flood) -> None:
    code, err, peak_mb = run_measured(
        [sys.executable, "-m", "gpumon", "--prometheus", flood.url, "--once"])
    assert code == 1 and "Traceback" not in err, err
    assert err.strip() == (f"gpumon: The Prometheus server at {flood.url} sent more than "
                           "64 MiB for one query.")
    assert peak_mb < MAX_PEAK_RSS_MB, peak_mb
    # the whole query, then its split into one query per metric, stopped at the first
    # oversized answer: at most the 4 that were running (there were 38)
    assert flood.requests <= 5, flood.requests


TICKS = """
import resource, sys
from gpumon.telemetry.cluster.prometheus import PrometheusSource
source = PrometheusSource(sys.argv[1])
source.open()
for _ in range(4):
    snapshot = source.sample()
    assert not snapshot.status.usable and "more than 64 MiB" in snapshot.status.message
source.close()
"""


def test_a_window_ticking_against_200_mb_answers_stays_bounded() -> None:
    """Tick after tick (the window's case): the peak does not climb with the ticks."""
    flood = Flood(content_length=False)
    try:
        code, err, peak_mb = run_measured([sys.executable, "-c", TICKS, flood.url])
    finally:
        flood.close()
    assert code == 0, err
    assert peak_mb < MAX_PEAK_RSS_MB, peak_mb
    assert flood.requests <= 1 + 4 * 4, flood.requests
