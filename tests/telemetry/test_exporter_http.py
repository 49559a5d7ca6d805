"""The exporter's HTTP server under load and abuse (loopback only, bounded): many scrapes at
once, idle connections by the thousand, oversized headers; and what each path answers."""

from __future__ import annotations

import gzip
import os
import resource
import selectors
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from functools import partial
from pathlib import Path

import psutil
import pytest
from exporter_helpers import Running, running
from prometheus_client.parser import text_string_to_metric_families
from testkit import wait_until

from gpumon.telemetry.sources.simulated import SimulatedSource

ROOT = Path(__file__).resolve().parents[2]
SIMULATED = partial(SimulatedSource, n_gpus=2, seed=1)
PROMETHEUS_ACCEPT = ("application/openmetrics-text;version=1.0.0,application/openmetrics-text;"
                     "version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1")
SCRAPE = b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def status_of(response: bytes) -> int:
    return int(response.split(b" ", 2)[1]) if response.startswith(b"HTTP/1.1 ") else 0


def read_all(sock: socket.socket, timeout: float = 5.0) -> bytes:
    sock.settimeout(timeout)
    out = b""
    try:
        while chunk := sock.recv(65536):
            out += chunk
    except (ConnectionResetError, TimeoutError):
        pass
    return out


def fd_room(n: int) -> None:
    """Skip unless this process may open ``n`` more descriptors (raising its soft limit)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < n:
        want = n if hard == resource.RLIM_INFINITY else min(hard, n)
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
        if want < n:
            pytest.skip(f"this test needs {n} file descriptors; the hard limit is {hard}")


@contextmanager
def idle_connections(port: int, n: int) -> Iterator[list[socket.socket]]:
    """``n`` loopback connections that never send a byte."""
    with ExitStack() as stack:
        socks = []
        for _ in range(n):
            s = stack.enter_context(socket.socket())
            s.settimeout(5)
            s.connect(("127.0.0.1", port))
            socks.append(s)
        yield socks


def closed_by_peer(socks: list[socket.socket]) -> int:
    """How many of ``socks`` the other end has closed (readable, and nothing to read)."""
    closed = 0
    with selectors.DefaultSelector() as sel:
        for s in socks:
            sel.register(s, selectors.EVENT_READ)
        for key, _ in sel.select(0):
            try:
                closed += key.fileobj.recv(1, socket.MSG_PEEK) == b""  # type: ignore[union-attr]
            except OSError:  # reset
                closed += 1
    return closed


@contextmanager
def exporter_process(*args: str, nofile: int | None = None) -> Iterator[tuple[int, psutil.Process]]:
    """``gpumon exporter --simulate 2`` on a free port, its file limit at ``nofile``."""
    port = free_port()
    preexec = None
    if nofile is not None:
        def preexec() -> None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))
    proc = subprocess.Popen([sys.executable, "-m", "gpumon", "exporter", "--simulate", "2",
                             "--listen", f"127.0.0.1:{port}", *args], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            preexec_fn=preexec)
    try:
        def up() -> bool:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
                    s.sendall(b"GET /health HTTP/1.1\r\n\r\n")
                    return status_of(read_all(s)) == 200
            except OSError:
                return False
        wait_until(up, 30, "the exporter to answer")
        yield port, psutil.Process(proc.pid)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def scrape(port: int, timeout: float = 2.0) -> int:
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(SCRAPE)
        return status_of(read_all(s, timeout))


def test_paths_methods_formats_and_filters() -> None:
    with running(SIMULATED) as ex:
        wait_until(lambda: ex.get("/health")[0] == 200, 10, "the first reading")
        status, page = ex.get("/")
        assert status == 200 and b'<a href="metrics">' in page
        assert ex.get("/nothing-here")[0] == 404 and ex.get("/metrics/x")[0] == 404
        with socket.create_connection(("127.0.0.1", ex.server.port), timeout=5) as s:
            s.sendall(b"POST /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n")
            assert status_of(read_all(s)) == 405
        with socket.create_connection(("127.0.0.1", ex.server.port), timeout=5) as s:
            s.sendall(b"nonsense\r\n\r\n")
            assert status_of(read_all(s)) == 400
        # Prometheus prefers OpenMetrics; a client with no Accept gets the text format 0.0.4.
        om = _get(ex, "/metrics", Accept=PROMETHEUS_ACCEPT)
        assert om[0].startswith("application/openmetrics-text; version=1.0.0")
        assert om[2].endswith(b"# EOF\n")
        text = _get(ex, "/metrics")
        assert text[0] == "text/plain; version=0.0.4; charset=utf-8" and b"# EOF" not in text[2]
        zipped = _get(ex, "/metrics", **{"Accept-Encoding": "gzip"})
        assert zipped[1] == "gzip" and gzip.decompress(zipped[2]) == text[2]
        _, _, one = _get(ex, "/metrics?name[]=DCGM_FI_DEV_GPU_UTIL&name[]=gpumon_nvml_up")
        names = [f.name for f in text_string_to_metric_families(one.decode())]
        assert names == ["gpumon_nvml_up", "DCGM_FI_DEV_GPU_UTIL"]


def _get(ex: Running, path: str, **headers: str) -> tuple[str, str | None, bytes]:
    import urllib.request

    with urllib.request.urlopen(urllib.request.Request(ex.url + path, headers=headers),
                                timeout=5) as r:
        return r.headers["Content-Type"], r.headers["Content-Encoding"], r.read()


def test_200_simultaneous_scrapes_are_all_answered() -> None:
    """Every one answered 200 and none refused (how soon: benchmarks/bench_http_burst.py)."""
    with running(SIMULATED) as ex:
        wait_until(lambda: ex.get("/health")[0] == 200, 10, "the first reading")
        with ExitStack() as stack:
            socks = [stack.enter_context(socket.socket()) for _ in range(200)]
            start = time.monotonic()
            for s in socks:
                s.connect(("127.0.0.1", ex.server.port))
                s.sendall(SCRAPE)
            answers = dict.fromkeys(socks, b"")
            sel = stack.enter_context(selectors.DefaultSelector())
            for s in socks:
                s.setblocking(False)
                sel.register(s, selectors.EVENT_READ)
            done = 0
            while done < len(socks) and time.monotonic() - start < 10:  # patience
                for key, _ in sel.select(timeout=0.5):
                    s = key.fileobj  # type: ignore[assignment]
                    chunk = s.recv(65536)
                    answers[s] += chunk
                    if not chunk:
                        sel.unregister(s)
                        done += 1
        assert [status_of(a) for a in answers.values()] == [200] * 200
        assert ex.server.refused == 0


def test_oversized_headers_are_refused_with_431() -> None:
    with running(SIMULATED) as ex, socket.create_connection(
            ("127.0.0.1", ex.server.port), timeout=5) as s:
        s.sendall(b"GET /metrics HTTP/1.1\r\n" + b"X-Big: " + b"a" * 9000 + b"\r\n")
        assert status_of(read_all(s)) == 431


def test_a_connection_that_sends_nothing_is_closed_after_the_head_timeout() -> None:
    with running(SIMULATED, head_timeout_s=0.5) as ex, socket.create_connection(
            ("127.0.0.1", ex.server.port), timeout=5) as s:
        start = time.monotonic()
        s.sendall(b"GET /metrics HTTP/1.1\r\n")  # and never the rest
        assert status_of(read_all(s)) == 408
        assert time.monotonic() - start >= 0.4  # not before the head timeout


def test_idle_connections_beyond_the_limit_make_room_for_a_real_scrape() -> None:
    with running(SIMULATED, max_connections=50) as ex:
        wait_until(lambda: ex.get("/health")[0] == 200, 10, "the first reading")
        with idle_connections(ex.server.port, 120):
            assert scrape(ex.server.port) == 200


@pytest.mark.slow  # a subprocess or a real server: seconds
def test_a_thousand_idle_connections_neither_block_a_scrape_nor_burn_cpu() -> None:
    """In a process whose descriptors run out first (a limit of 256, as a unit might set):
    the oldest idle connections are closed to make room, and the loop does not spin."""
    fd_room(1200)
    with exporter_process(nofile=256) as (port, proc):
        with idle_connections(port, 1000) as socks:
            kept = 256 - 64  # server.connection_limit() under a file limit of 256
            wait_until(lambda: closed_by_peer(socks) >= len(socks) - kept, 10,
                       "the exporter to accept them all, closing the oldest")
            cpu = proc.cpu_times()
            start = time.monotonic()
            assert scrape(port) == 200
            time.sleep(0.5)  # the window its CPU is measured over, while they idle
            used = sum(proc.cpu_times()[:2]) - sum(cpu[:2])
            assert scrape(port) == 200
        share = used / (time.monotonic() - start)
        assert share < 0.25, f"the exporter used {share:.0%} of a core while connections idled"


@pytest.mark.slow  # a subprocess or a real server: seconds
def test_forty_clients_sending_megabytes_of_headers_do_not_grow_its_memory() -> None:
    with exporter_process() as (port, proc):
        before = proc.memory_info().rss

        def flood() -> None:
            with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
                try:
                    s.sendall(b"GET /metrics HTTP/1.1\r\n")
                    line = b"X-Pad: " + b"p" * 8000 + b"\r\n"
                    for _ in range(800):  # 6.4 MB
                        s.sendall(line)
                except OSError:
                    pass  # refused with 431 and closed, as it should be

        threads = [threading.Thread(target=flood) for _ in range(40)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        grown = proc.memory_info().rss - before
        assert scrape(port) == 200
    assert grown < 20 * 2**20, f"memory grew by {grown / 2**20:.0f} MiB"


@pytest.mark.slow  # a subprocess or a real server: seconds
def test_sigterm_ends_it_while_a_driver_call_hangs(fake_nvml_lib: Path, tmp_path: Path) -> None:
    from fakenvml import fake_driver_env

    hang = tmp_path / "hung"
    env = fake_driver_env(fake_nvml_lib, tmp_path, gpus="2",
                          delay="nvmlDeviceGetUtilizationRates=-1", hang_file=str(hang))
    env["PYTHONPATH"] = str(ROOT)
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "gpumon", "exporter", "--read-timeout",
                             "0.5", "--listen", f"127.0.0.1:{port}"], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        wait_until(hang.exists, 30, "the driver call to hang")

        def health() -> bytes:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
                    s.sendall(b"GET /health HTTP/1.1\r\n\r\n")
                    return read_all(s, 1)
            except OSError:
                return b""
        said = b"the GPU driver has not answered for 0.5 s (a driver call hangs)\n"
        wait_until(lambda: health().endswith(said), 10, "/health to say the driver hangs")
        assert status_of(health()) == 503
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=10)  # it ends though a driver call hangs
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0
    assert "a GPU driver call still hangs; exiting without closing NVML" in out
    assert "Traceback" not in out
    assert os.path.exists(hang)


@pytest.mark.parametrize("head", [
    b"GET /metrics?" + b"&".join(b"a=%d" % i for i in range(400)) + b" HTTP/1.1\r\n\r\n",
    b"GET /\xff\xfe%zz%00 HTTP/1.1\r\nHost: \xff\r\n\r\n",
    b"GET /metrics HTTP/1.1\r\n" + b"".join(b"X-%d: y\r\n" % i for i in range(150)) + b"\r\n",
    b"GET /metrics HTTP/1.1\r\nno colon here\r\n\r\n",
    b"GET /metrics HTTP/9.9\r\n\r\n",
    b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + b"\x00" * 40 + b"\r\n\r\n",  # TLS hello
    b"\r\n\r\n",
])
def test_hostile_request_heads_get_an_answer_and_the_server_goes_on(head: bytes) -> None:
    with running(SIMULATED) as ex:
        wait_until(lambda: ex.get("/health")[0] == 200, 10, "the first reading")
        with socket.create_connection(("127.0.0.1", ex.server.port), timeout=5) as s:
            s.sendall(head)
            assert status_of(read_all(s)) in (200, 400, 404, 431)
        assert ex.get("/metrics")[0] == 200


def test_when_every_worker_is_busy_a_request_is_refused_at_once_with_503() -> None:
    from gpumon.telemetry.exporter.server import HttpServer, Request, Response, listen

    release = threading.Event()
    handling = threading.Event()

    def slow_handler(request: Request) -> Response:
        handling.set()
        release.wait(10)
        return Response(200, b"done\n")

    server = HttpServer(listen("127.0.0.1", 0), slow_handler, workers=1, queue_size=1)
    server.start()
    try:
        with ExitStack() as stack:
            busy = [stack.enter_context(socket.create_connection(("127.0.0.1", server.port)))
                    for _ in range(2)]  # one with the worker, one in the queue
            busy[0].sendall(SCRAPE)
            # The worker has taken the first before the second comes: on a loaded machine
            # the second could otherwise find the first still queued and be refused itself.
            assert handling.wait(5), "the worker never took the first request"
            busy[1].sendall(SCRAPE)
            wait_until(lambda: server.waiting == 1, 5, "the queue to fill")
            with socket.create_connection(("127.0.0.1", server.port), timeout=5) as third:
                third.sendall(SCRAPE)
                answer = read_all(third)  # refused now, not queued behind the two
            assert status_of(answer) == 503
            assert answer.endswith(b"Too many requests; try again.\n") and server.refused == 1
            release.set()
            assert [status_of(read_all(s)) for s in busy] == [200, 200]
    finally:
        release.set()
        server.close()


def test_a_reading_is_rendered_in_the_format_the_last_scraper_asked_for() -> None:
    with running(SIMULATED, interval_s=60.0) as ex:
        wait_until(lambda: ex.get("/health")[0] == 200, 10, "the first reading")
        _get(ex, "/metrics", Accept=PROMETHEUS_ACCEPT)  # Prometheus asks for OpenMetrics
        ex.pages.publish(ex.pages.current.view)  # the next reading
        page = ex.pages.current
        assert page.renders == 1  # rendered when published, in OpenMetrics
        for _ in range(5):
            assert _get(ex, "/metrics", Accept=PROMETHEUS_ACCEPT)[2].endswith(b"# EOF\n")
        assert page.renders == 1


def test_the_exporter_imports_where_there_is_no_resource_module() -> None:
    """Windows has no ``resource`` module: the exporter and its server still import."""
    import subprocess
    import sys

    code = ("import sys; sys.modules['resource'] = None\n"
            "import gpumon.cli.exporter, gpumon.telemetry.exporter.server as h\n"
            "gpumon.cli.exporter.raise_file_limit()\n"
            "print(h.connection_limit())")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "448"


def test_bare_lf_heads_get_400_at_once_and_head_is_get_without_its_body() -> None:
    """Issue 53: lines ending in a bare LF never make CRLF CRLF, so such a request waited for
    the head timeout's 408; HEAD got 405 where Prometheus's exporters answer it as GET."""
    with running(SIMULATED, head_timeout_s=600.0) as ex:
        wait_until(lambda: ex.get("/health")[0] == 200, 10, "the first reading")
        for head in (b"GET /metrics HTTP/1.1\nHost: x\n\n", b"GET /metrics HTTP/1.1\n"):
            with socket.create_connection(("127.0.0.1", ex.server.port), timeout=5) as s:
                s.sendall(head)
                answer = read_all(s, 60)  # the head timeout would be 600 s: 400 is at once
            assert status_of(answer) == 400 and b"CR LF" in answer
        with socket.create_connection(("127.0.0.1", ex.server.port), timeout=5) as s:
            s.sendall(SCRAPE)
            get = read_all(s)
        with socket.create_connection(("127.0.0.1", ex.server.port), timeout=5) as s:
            s.sendall(SCRAPE.replace(b"GET", b"HEAD", 1))
            head_answer = read_all(s)
        assert status_of(head_answer) == 200
        head_lines, _, body = head_answer.partition(b"\r\n\r\n")
        assert body == b""
        length = int(next(line.split(b":")[1] for line in head_lines.split(b"\r\n")
                          if line.lower().startswith(b"content-length:")))
        assert length > 1000 and abs(length - len(get.partition(b"\r\n\r\n")[2])) < 200
        assert b"Content-Type: text/plain; version=0.0.4" in head_lines
        with socket.create_connection(("127.0.0.1", ex.server.port), timeout=5) as s:
            s.sendall(b"DELETE /metrics HTTP/1.1\r\n\r\n")
            answer = read_all(s)
        assert status_of(answer) == 405 and b"Allow: GET, HEAD" in answer
