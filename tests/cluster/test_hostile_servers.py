"""``gpumon --prometheus URL --once`` against servers that misbehave: redirects elsewhere (a
second loopback address logs what reaches it: the token never does), answers that are not
what Prometheus sends, and a server that drips. Each ends in one sentence, never a traceback."""

from __future__ import annotations

import json
import socket
import ssl
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from cluster_helpers import ROOT

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "telemetry"))
from scripted_http import Answer, ScriptedServer
from scripted_prometheus import answer_from

pytestmark = [
    pytest.mark.slow,  # subprocesses: a second or more each
    pytest.mark.xdist_group("test_hostile_servers"),  # its module fixture: made once
]
TOKEN = "SECRET-TOKEN-123"
ELSEWHERE = "127.0.0.2"  # another loopback address: "another host"


def once(url: str, *options: str, env: dict[str, str] | None = None,
         timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gpumon", "--prometheus", url, "--once",
                           *options], capture_output=True, text=True, timeout=timeout,
                          cwd=ROOT, check=False, env=env)


class Logger:
    """A Prometheus look-alike on ``ELSEWHERE`` that logs every request's headers."""

    def __init__(self) -> None:
        self.seen: list[dict[str, str]] = []
        answer = answer_from({"up": [({"instance": "x:1", "job": "j"}, 1.0)]})
        logger = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *_: Any) -> None:
                pass

            def do_GET(self) -> None:
                logger.seen.append(dict(self.headers))
                if self.path.startswith("/old/"):  # moved on the same server
                    self.send_response(301)
                    self.send_header("Location", "/new/" + self.path[len("/old/"):])
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                status, ctype, body, _ = answer(self.path.removeprefix("/new"))
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.httpd = ThreadingHTTPServer((ELSEWHERE, 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://{ELSEWHERE}:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, args=(0.02,), daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


class Redirector:
    """Answers every request with a 302 to the same path on ``target``; TLS when given."""

    def __init__(self, target: str, tls: ssl.SSLContext | None = None) -> None:
        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *_: Any) -> None:
                pass

            def do_GET(self) -> None:
                self.send_response(302)
                self.send_header("Location", target + self.path)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        scheme = "https" if tls else "http"
        if tls is not None:
            self.httpd.socket = tls.wrap_socket(self.httpd.socket, server_side=True)
        self.url = f"{scheme}://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, args=(0.02,), daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def logger() -> Iterator[Logger]:
    server = Logger()
    yield server
    server.close()


@pytest.fixture(scope="module")
def tls(tmp_path_factory: pytest.TempPathFactory) -> tuple[ssl.SSLContext, Path]:
    """A server context with a self-signed certificate for 127.0.0.1, and the certificate
    file the client is told to trust (SSL_CERT_FILE)."""
    tmp = tmp_path_factory.mktemp("tls")
    cert, key = tmp / "cert.pem", tmp / "key.pem"
    made = subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes",
                           "-keyout", str(key), "-out", str(cert), "-days", "1",
                           "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
                          capture_output=True, check=False)
    if made.returncode != 0:
        pytest.skip("openssl cannot make a test certificate: " + made.stderr.decode()[-200:])
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    return context, cert


def _env_trusting(cert: Path) -> dict[str, str]:
    import os

    return {**os.environ, "SSL_CERT_FILE": str(cert)}


def test_a_redirect_to_another_host_never_gets_the_token(logger: Logger) -> None:
    redirector = Redirector(logger.url)
    try:
        out = once(redirector.url, "--prometheus-header", f"Authorization: Bearer {TOKEN}")
    finally:
        redirector.close()
    assert out.returncode == 1 and out.stdout == ""
    assert out.stderr.strip() == (
        f"gpumon: The server at {redirector.url} redirects to {logger.url}/api/v1/query "
        "(another host, and gpumon sends its credentials (--prometheus-header, or "
        f"user:password in the address) only to {redirector.url}); "
        "gpumon does not follow. Give the Prometheus server's own address with --prometheus.")
    assert logger.seen == []  # not one request, so no token


def test_https_to_http_is_refused_with_or_without_a_token(
        logger: Logger, tls: tuple[ssl.SSLContext, Path]) -> None:
    context, cert = tls
    redirector = Redirector(logger.url, context)
    try:
        with_token = once(redirector.url, "--prometheus-header",
                          f"Authorization: Bearer {TOKEN}", env=_env_trusting(cert))
        without = once(redirector.url, env=_env_trusting(cert))
    finally:
        redirector.close()
    for out in (with_token, without):
        assert out.returncode == 1, out.stderr
        assert "(from https to plain http); gpumon does not follow." in out.stderr
        assert "Traceback" not in out.stderr and len(out.stderr.splitlines()) == 1
    assert logger.seen == []


def test_a_redirect_without_credentials_is_followed_and_the_source_says_where(
        logger: Logger) -> None:
    redirector = Redirector(logger.url)
    try:
        out = once(redirector.url)
    finally:
        redirector.close()
    assert out.returncode == 0, out.stderr
    first = out.stdout.splitlines()[0]
    assert first.endswith(f"from {logger.url} (redirected from {redirector.url}).")
    assert logger.seen and all("Authorization" not in h for h in logger.seen)


def test_a_redirect_on_the_same_server_keeps_the_header(logger: Logger) -> None:
    out = once(logger.url + "/old", "--prometheus-header", f"Authorization: Bearer {TOKEN}")
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[0].endswith(
        f"from {logger.url}/new (redirected from {logger.url}/old).")
    assert logger.seen and all(h.get("Authorization") == f"Bearer {TOKEN}" for h in logger.seen)


def _scripted_once(answer: Answer | None = None, series: dict | None = None,
                   range_answer: Answer | None = None) -> subprocess.CompletedProcess[str]:
    serve = answer_from(series or {})

    def respond(path: str) -> Answer:
        if range_answer is not None and path.startswith("/api/v1/query_range"):
            return range_answer
        return answer if answer is not None else serve(path)

    with ScriptedServer(respond) as server:
        return once(server.url)


def test_deeply_nested_json_is_a_sentence() -> None:
    body = b"[" * 200_000 + b"]" * 200_000
    out = _scripted_once((200, "application/json", body, 0))
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert "answered, but not as a Prometheus server does (HTTP 200 OK)" in out.stderr


def test_null_and_numeric_labels_are_skipped_not_fatal() -> None:
    good = {"Hostname": "h", "gpu": "0", "UUID": "GPU-0", "instance": "i:1", "job": "j"}
    series: dict = {"DCGM_FI_DEV_GPU_UTIL": [(good, 5.0), ({**good, "gpu": None}, 1.0),
                                             ({**good, "Hostname": 7, "UUID": "GPU-1"}, 2.0)],
                    "up": [({"instance": "i:1", "job": "j"}, 1.0)]}
    out = _scripted_once(series=series)
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    assert "h: 1 GPU" in out.stdout and "i:1: 1 GPU" in out.stdout


def test_a_range_point_whose_time_is_not_a_number_is_skipped() -> None:
    g = {"Hostname": "h", "gpu": "0", "UUID": "GPU-0", "instance": "i:1", "job": "j",
         "__name__": "DCGM_FI_DEV_GPU_UTIL"}
    matrix = {"status": "success", "data": {"resultType": "matrix", "result": [
        {"metric": g, "values": [["abc", "1"], [None, "2"], [5.0], "x", [1.0, "3"]]}]}}
    out = _scripted_once(series={"DCGM_FI_DEV_GPU_UTIL": [(g, 5.0)],
                                 "up": [({"instance": "i:1", "job": "j"}, 1.0)]},
                         range_answer=(200, "application/json", json.dumps(matrix).encode(), 0))
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    assert "h: 1 GPU" in out.stdout


def test_a_url_with_a_space_and_an_endless_header_file_are_sentences() -> None:
    space = once("http://127.0.0.1:9/prom etheus")
    zero = once("http://127.0.0.1:9", "--prometheus-header", "@/dev/zero")
    for out in (space, zero):
        assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr
        assert out.stderr.splitlines()[0].startswith("gpumon: error: ")
    assert "contains a space or a control character" in space.stderr
    assert "the header file '/dev/zero' is larger than 64 KiB" in zero.stderr


def test_a_server_that_drips_cannot_keep_once_running() -> None:
    """One byte every 2 s: each read is well within urllib's per-read timeout; the query's
    overall deadline (5 s) ends it."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    stop = threading.Event()

    def drip() -> None:
        while not stop.is_set():
            try:
                listener.settimeout(0.5)
                conn, _ = listener.accept()
            except OSError:
                continue
            with conn:
                for byte in b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n":
                    if stop.wait(2.0):
                        break
                    try:
                        conn.sendall(bytes([byte]))
                    except OSError:
                        break

    thread = threading.Thread(target=drip, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{listener.getsockname()[1]}"
    try:
        start = time.monotonic()
        out = once(url, timeout=40)
        elapsed = time.monotonic() - start
    finally:
        stop.set()
        thread.join(5)
        listener.close()
    assert out.returncode == 1 and "Traceback" not in out.stderr, out.stderr
    assert out.stderr.strip() == (f"gpumon: The Prometheus server at {url} did not answer "
                                  "within 5 s.")
    assert elapsed < 20, elapsed  # a hang detector: 5 s and a Python start, not minutes


def test_credentials_in_the_url_are_used_and_stay_home(logger: Logger) -> None:
    """``user:password@host`` was silently ignored: now it is basic auth, sent to that
    server only (a redirect elsewhere is refused, as for --prometheus-header)."""
    import base64

    host = logger.url.removeprefix("http://")
    out = once(f"http://pro%40m:pa%3Ass@{host}/new")
    assert out.returncode == 0, out.stderr
    token = base64.b64encode(b"pro@m:pa:ss").decode()
    assert logger.seen and all(h.get("Authorization") == f"Basic {token}" for h in logger.seen)
    assert "pa%3Ass" not in out.stdout + out.stderr and "pro%40m" not in out.stdout
    redirector = Redirector(logger.url)
    seen = len(logger.seen)
    try:
        out = once(redirector.url.replace("http://", "http://u:p@"))
    finally:
        redirector.close()
    assert out.returncode == 1 and len(logger.seen) == seen
    assert "(another host, and gpumon sends its credentials" in out.stderr


def test_credentials_in_the_url_and_an_authorization_header_is_a_sentence() -> None:
    out = once("http://u:p@127.0.0.1:9", "--prometheus-header", "Authorization: Bearer x")
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert out.stderr.splitlines()[0] == (
        "gpumon: error: http://127.0.0.1:9 holds a user name and password, and an "
        "Authorization header is given too; give one of them.")
