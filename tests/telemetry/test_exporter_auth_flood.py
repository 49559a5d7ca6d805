"""A flood of wrong passwords never makes an authorised scrape wait for a password check.

A check that could not start at once used to wait up to 1 s on a request thread, so 64
flooding clients held every worker and an authorised scrape, whose credentials are
remembered, queued behind them (7.2 s measured, TLS, cost 12). Now at most
``verify.MAX_WAITING`` requests wait for a check (two per address), the rest are answered 429
at once, and an address that sent ``FAILURES_PER_CLIENT`` wrong passwords gets 429 without a
check for a while (fairness across addresses: ``test_exporter_auth_fair.py``). Latency under
a real TLS flood is measured by ``benchmarks/bench_auth_flood.py``; these tests check the
behaviour, not a time.
"""

from __future__ import annotations

import base64
import http.client
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path

import bcrypt
import pytest

from gpumon.telemetry.exporter import webconfig
from gpumon.telemetry.exporter.page import Pages
from gpumon.telemetry.exporter.reader import GpuReader
from gpumon.telemetry.exporter.routes import serve
from gpumon.telemetry.exporter.server import HttpServer
from gpumon.telemetry.exporter.webconfig import WebConfig, load
from gpumon.telemetry.sources.simulated import SimulatedSource

pytestmark = pytest.mark.xdist_group("test_exporter_auth_flood")  # its module fixture: made once

PASSWORD = "right horse"
GOOD = "Basic " + base64.b64encode(f"prometheus:{PASSWORD}".encode()).decode()
WRONG = "Basic " + base64.b64encode(b"prometheus:wrong").decode()


@pytest.fixture(scope="module")
def web_yml(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("auth") / "web.yml"
    hashed = bcrypt.hashpw(PASSWORD.encode(), bcrypt.gensalt(10)).decode()
    path.write_text(f"basic_auth_users:\n  prometheus: '{hashed}'\n")
    return path


@contextmanager
def exporter(web: WebConfig) -> Iterator[HttpServer]:
    pages = Pages("h")
    reader = GpuReader(partial(SimulatedSource, n_gpus=1, seed=1), pages.publish, 0.1, 0.5)
    server = serve("127.0.0.1", 0, pages, web)
    reader.start()
    try:
        yield server
    finally:
        server.close()
        reader.stop(timeout_s=5.0)


def get(port: int, authorization: str, timeout: float = 30.0) -> tuple[int, str]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("GET", "/metrics", headers={"Authorization": authorization})
        response = conn.getresponse()
        response.read()
        return response.status, response.getheader("Retry-After") or ""
    finally:
        conn.close()


@contextmanager
def checks_taken(web: WebConfig) -> Iterator[None]:
    """Every thread of the password-check pool taken, as by checks that never end: whatever
    is answered 200 meanwhile was answered without a check."""
    gate, running = threading.Event(), threading.Semaphore(0)

    def blocked() -> bool:
        running.release()
        return gate.wait(60) and False

    holders = [threading.Thread(target=web.verifier.run, args=(f"holder{i}", blocked))
               for i in range(web.verifier.workers)]
    for t in holders:
        t.start()
    for _ in holders:
        assert running.acquire(timeout=10)
    try:
        yield
    finally:
        gate.set()
        for t in holders:
            t.join(10)


@pytest.mark.slow  # 64 client threads and a server: a few seconds under load
def test_while_every_check_is_taken_the_flood_is_refused_and_the_scrape_answered(
        web_yml: Path) -> None:
    web = load(web_yml)
    web.verifier.wait_s = 1.0  # the flood's waiting requests give up sooner
    with exporter(web) as server:
        assert get(server.port, GOOD) == (200, "")  # the one check Prometheus pays
        results: list[tuple[int, str]] = []
        lock = threading.Lock()

        def flood() -> None:
            for _ in range(3):
                answer = get(server.port, WRONG)
                with lock:
                    results.append(answer)

        with checks_taken(web):
            threads = [threading.Thread(target=flood) for _ in range(64)]
            for t in threads:
                t.start()
            scrapes = [get(server.port, GOOD)[0] for _ in range(5)]  # amid the flood
            for t in threads:
                t.join(60)
            assert not any(t.is_alive() for t in threads)
            # answered while no check could run: the scrapes needed none, the flood got 429
            assert scrapes == [200] * 5
            assert Counter(results) == {(429, "10"): 64 * 3}


def test_a_client_that_keeps_failing_is_refused_without_checks(
        web_yml: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    web = load(web_yml)
    assert web.authorized(GOOD)
    checked = []
    real = bcrypt.checkpw
    monkeypatch.setattr(bcrypt, "checkpw", lambda p, h: checked.append(p) or real(p, h))
    now = [1000.0]
    monkeypatch.setattr(webconfig.time, "monotonic", lambda: now[0])
    for _ in range(webconfig.FAILURES_PER_CLIENT):
        assert web.check(WRONG, "10.0.0.9") is webconfig.Verdict.DENIED
    assert len(checked) == webconfig.FAILURES_PER_CLIENT
    for _ in range(20):  # refused, and no check made for it
        assert web.check(WRONG, "10.0.0.9") is webconfig.Verdict.BUSY
    assert len(checked) == webconfig.FAILURES_PER_CLIENT
    # a remembered login from that address, and any login from another, are not held up
    assert web.check(GOOD, "10.0.0.9") is webconfig.Verdict.OK
    assert web.check(WRONG, "10.0.0.8") is webconfig.Verdict.DENIED
    with web._lock:
        assert web.retry_after("10.0.0.9") == pytest.approx(webconfig.FAILURE_WINDOW_S)
    now[0] += webconfig.FAILURE_WINDOW_S + 0.1  # the window passed: checked again
    assert web.check(WRONG, "10.0.0.9") is webconfig.Verdict.DENIED


def test_a_new_login_while_every_check_is_taken_is_busy_after_its_wait(web_yml: Path) -> None:
    web = load(web_yml)
    web.verifier.wait_s = 0.2
    with checks_taken(web):
        assert web.check(GOOD, "10.0.0.1") is webconfig.Verdict.BUSY
    assert web.check(GOOD, "10.0.0.1") is webconfig.Verdict.OK


def test_the_clients_remembered_are_capped() -> None:
    web = WebConfig(users={"u": bcrypt.hashpw(b"p", bcrypt.gensalt(4))})
    wrong = "Basic " + base64.b64encode(b"u:x").decode()
    for i in range(webconfig.MAX_CLIENTS_TRACKED + 50):
        web._failed(f"10.{i // 65536}.{i // 256 % 256}.{i % 256}")
    assert len(web._failures) == webconfig.MAX_CLIENTS_TRACKED
    assert web.check(wrong, "10.0.0.0") is webconfig.Verdict.DENIED  # the oldest forgotten

