"""``--web.config.file``: TLS with a self-signed certificate and bcrypt basic auth, checked by
real clients (curl, a real Prometheus server); a bad file is refused at start-up."""

from __future__ import annotations

import json
import shutil
import signal
import socket
import subprocess
import sys
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from testkit import wait_until

# --web.config.file needs the exporter extra; a machine without it (a GPU machine that runs
# the suite, say) skips this module, saying why.
_EXTRA = "gpumon exporter --web.config.file needs it: pip install -e '.[exporter]'"
bcrypt = pytest.importorskip("bcrypt", reason=f"bcrypt is not installed ({_EXTRA})")
pytest.importorskip("yaml", reason=f"PyYAML is not installed ({_EXTRA})")

from gpumon.cli.exporter import is_loopback  # noqa: E402
from gpumon.telemetry.exporter.webconfig import WebConfigError, load  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "s3cret pass"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def make_cert(d: Path, name: str = "server", ca: tuple[Path, Path] | None = None
              ) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 (or one signed by ``ca``) and its key."""
    cert, key = d / f"{name}.crt", d / f"{name}.key"
    if ca is None:
        cmd = ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
               "-keyout", key, "-out", cert, "-subj", f"/CN={name}",
               "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"]
        subprocess.run(cmd, check=True, capture_output=True)
        return cert, key
    csr = d / f"{name}.csr"
    subprocess.run(["openssl", "req", "-new", "-newkey", "rsa:2048", "-nodes", "-keyout", key,
                    "-out", csr, "-subj", f"/CN={name}"], check=True, capture_output=True)
    subprocess.run(["openssl", "x509", "-req", "-in", csr, "-CA", ca[0], "-CAkey", ca[1],
                    "-CAcreateserial", "-days", "2", "-out", cert],
                   check=True, capture_output=True)
    return cert, key


@pytest.fixture
def tls_dir(tmp_path: Path) -> Path:
    if shutil.which("openssl") is None or shutil.which("curl") is None:
        pytest.skip("openssl and curl are needed to check TLS with real clients")
    make_cert(tmp_path)
    hashed = bcrypt.hashpw(PASSWORD.encode(), bcrypt.gensalt(4)).decode()
    (tmp_path / "web.yml").write_text(
        "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n"
        f"basic_auth_users:\n  prometheus: '{hashed}'\n")
    return tmp_path


@contextmanager
def exporter(web: Path, *args: str) -> Iterator[int]:
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "gpumon", "exporter", "--simulate", "2",
                             "--interval", "0.5", "--listen", f"127.0.0.1:{port}",
                             "--web.config.file", str(web), *args], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        def listening() -> bool:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                return True
            except OSError:
                return proc.poll() is not None
        wait_until(listening, 30, "the exporter to listen")
        assert proc.poll() is None, proc.communicate()[0]
        yield port
    finally:
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=10)
        assert "Traceback" not in out


def _listening(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def curl(*args: str) -> tuple[int, str]:
    """curl's HTTP status (0: no HTTP answer) and body."""
    out = subprocess.run(["curl", "-sS", "--max-time", "10", "-w", "\n%{http_code}", *args],
                         capture_output=True, text=True, check=False)
    body, _, code = out.stdout.rpartition("\n")
    return int(code or 0), body


@pytest.mark.slow  # a subprocess or a real server: seconds
def test_tls_and_basic_auth_with_curl(tls_dir: Path) -> None:
    with exporter(tls_dir / "web.yml") as port:
        url = f"https://127.0.0.1:{port}"
        ca = ("--cacert", str(tls_dir / "server.crt"))
        status, body = curl(*ca, "-u", f"prometheus:{PASSWORD}", f"{url}/metrics")
        assert status == 200 and 'gpumon_nvml_up{hostname=' in body
        assert curl(*ca, "-u", "prometheus:wrong", f"{url}/metrics")[0] == 401
        assert curl(*ca, "-u", f"nobody:{PASSWORD}", f"{url}/metrics")[0] == 401
        assert curl(*ca, f"{url}/metrics")[0] == 401
        assert curl(*ca, f"{url}/health")[0] == 401  # every path, as exporter-toolkit does
        assert curl(*ca, "-u", f"prometheus:{PASSWORD}", f"{url}/health")[0] == 200
        assert curl(f"{url}/metrics")[0] == 0  # the certificate is not trusted without --cacert
        assert curl(f"http://127.0.0.1:{port}/metrics")[0] == 0  # no plain-HTTP fallback
        # A scrape still answers after those failures (the loop survived the bad handshakes).
        assert curl(*ca, "-u", f"prometheus:{PASSWORD}", f"{url}/metrics")[0] == 200


@pytest.mark.slow  # a subprocess or a real server: seconds
def test_client_certificates_when_a_client_ca_is_given(tls_dir: Path) -> None:
    ca = make_cert(tls_dir, "clients-ca")
    client = make_cert(tls_dir, "client", ca=ca)
    (tls_dir / "mtls.yml").write_text(
        "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n"
        "  client_ca_file: clients-ca.crt\n")
    with exporter(tls_dir / "mtls.yml") as port:
        url = f"https://127.0.0.1:{port}/metrics"
        ca_arg = ("--cacert", str(tls_dir / "server.crt"))
        assert curl(*ca_arg, url)[0] == 0  # no client certificate: no answer
        status, _ = curl(*ca_arg, "--cert", str(client[0]), "--key", str(client[1]), url)
        assert status == 200


@pytest.mark.slow  # a subprocess or a real server: seconds
def test_a_real_prometheus_scrapes_over_https_with_basic_auth(tls_dir: Path) -> None:
    prometheus = shutil.which("prometheus")
    if prometheus is None:
        pytest.skip("the prometheus binary is not installed (Debian: apt-get install prometheus)")
    with exporter(tls_dir / "web.yml") as port:
        prom_port = free_port()
        config = tls_dir / "prometheus.yml"
        config.write_text(
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 900ms\nscrape_configs:\n"
            "  - job_name: gpumon\n    scheme: https\n"
            f"    tls_config:\n      ca_file: {tls_dir / 'server.crt'}\n"
            f"    basic_auth:\n      username: prometheus\n      password: '{PASSWORD}'\n"
            f"    static_configs:\n      - targets: ['127.0.0.1:{port}']\n"
            "  - job_name: wrong-password\n    scheme: https\n"
            f"    tls_config:\n      ca_file: {tls_dir / 'server.crt'}\n"
            "    basic_auth:\n      username: prometheus\n      password: nope\n"
            f"    static_configs:\n      - targets: ['127.0.0.1:{port}']\n")
        proc = subprocess.Popen([prometheus, f"--config.file={config}",
                                 f"--storage.tsdb.path={tls_dir / 'data'}",
                                 f"--web.listen-address=127.0.0.1:{prom_port}"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            def targets() -> dict[str, dict[str, str]]:
                url = f"http://127.0.0.1:{prom_port}/api/v1/targets"
                try:
                    with urllib.request.urlopen(url, timeout=2) as r:
                        active = json.load(r)["data"]["activeTargets"]
                except OSError:
                    return {}
                return {t["labels"]["job"]: t for t in active}

            wait_until(lambda: targets().get("gpumon", {}).get("health") == "up"
                       and targets().get("wrong-password", {}).get("health") == "down",
                       40, "Prometheus to scrape the https target")
            assert "401" in targets()["wrong-password"]["lastError"]
            query = urllib.parse.urlencode({"query": 'DCGM_FI_DEV_GPU_UTIL{job="gpumon"}'})
            with urllib.request.urlopen(f"http://127.0.0.1:{prom_port}/api/v1/query?{query}",
                                        timeout=5) as r:
                assert len(json.load(r)["data"]["result"]) == 2
        finally:
            proc.terminate()
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@pytest.mark.parametrize(("text", "said"), [
    ("tls_server_config: [1, 2", "is not valid YAML (line 1)"),
    ("tls_server_config:\n  cert_file: server.crt\n", "needs both cert_file and key_file"),
    ("tls_server_config:\n  cert_file: nope.crt\n  key_file: server.key\n",
     "cannot use the TLS certificate"),
    ("tls_server_config:\n  cert_file: server.key\n  key_file: server.crt\n",
     "cannot use the TLS certificate"),
    ("tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n"
     "  cipher_suites: [TLS_AES_128_GCM_SHA256]\n", "tls_server_config.cipher_suites"),
    ("tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n"
     "  client_auth_type: RequireAndVerifyClientCert\n", "needs client_ca_file"),
    ("tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n"
     "  min_version: TLS99\n", "min_version must be one of TLS10, TLS11, TLS12, TLS13"),
    ("basic_auth_users:\n  alice: plain-text-password\n", "the password of 'alice' is not a"),
    ("basic_auth_users: [alice]\n", "basic_auth_users must be a mapping"),
    ("tls_config:\n  cert_file: x\n", "does not know or support: tls_config"),
    ("- a list\n", "the top level must be a mapping"),
])
def test_a_bad_web_config_is_one_sentence(tls_dir: Path, text: str, said: str) -> None:
    (tls_dir / "bad.yml").write_text(text)
    with pytest.raises(WebConfigError, match=None) as err:
        load(tls_dir / "bad.yml")
    assert said in str(err.value) and "\n" not in str(err.value)


@pytest.mark.slow  # a subprocess or a real server: seconds
def test_the_exporter_refuses_to_start_with_a_bad_web_config(tls_dir: Path) -> None:
    (tls_dir / "bad.yml").write_text("basic_auth_users:\n  alice: not-a-hash\n")
    for path in (tls_dir / "bad.yml", tls_dir / "missing.yml"):
        out = subprocess.run([sys.executable, "-m", "gpumon", "exporter", "--simulate", "1",
                              "--listen", f"127.0.0.1:{free_port()}", "--web.config.file",
                              str(path)], capture_output=True, text=True, cwd=ROOT,
                             timeout=60, check=False)
        assert out.returncode == 1 and out.stdout == ""
        (line,) = out.stderr.splitlines()
        assert line.startswith("gpumon exporter: ") and str(path) in line


def test_a_good_web_config_and_loopback() -> None:
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("10.1.2.3")
    assert not is_loopback("gpu-node-7")


def test_a_login_that_passed_is_remembered_and_a_wrong_one_is_not(
        tls_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import base64

    hashed = bcrypt.hashpw(PASSWORD.encode(), bcrypt.gensalt(10)).decode()  # ~0.05 s a check
    (tls_dir / "auth.yml").write_text(f"basic_auth_users:\n  prometheus: '{hashed}'\n")
    web = load(tls_dir / "auth.yml")
    assert web.tls is None
    good = "Basic " + base64.b64encode(f"prometheus:{PASSWORD}".encode()).decode()
    bad = "Basic " + base64.b64encode(b"prometheus:nope").decode()
    assert web.authorized(good)
    checks: list[bytes] = []
    checkpw = bcrypt.checkpw
    monkeypatch.setattr(bcrypt, "checkpw", lambda pw, h: checks.append(pw) or checkpw(pw, h))
    for _ in range(100):
        assert web.authorized(good)
    assert checks == []  # remembered: not 100 bcrypt checks (5 s or more)
    assert not web.authorized(bad) and not web.authorized(None)
    assert checks == [b"nope"]  # a wrong one is checked, and not remembered
    assert not web.authorized(bad)
    assert checks == [b"nope", b"nope"]
    assert not web.authorized("Basic !!!") and not web.authorized("Bearer x")


@pytest.mark.slow  # subprocesses: seconds
def test_one_warning_beyond_loopback_without_tls_and_none_with_it(tls_dir: Path) -> None:
    """Tests listen on loopback only, so the address counts as beyond it here."""
    pretend = ("import sys; import gpumon.cli.exporter as e; e.is_loopback = lambda host: False; "
               "sys.exit(e.main(sys.argv[1:]))")
    for web, warned in (((), 1), (("--web.config.file", str(tls_dir / "web.yml")), 0)):
        port = free_port()
        proc = subprocess.Popen([sys.executable, "-c", pretend, "--simulate", "1", "--listen",
                                 f"127.0.0.1:{port}", *web], cwd=ROOT, text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        try:
            # Listening, its SIGTERM handler only sets an event: the start-up lines (the
            # warning among them) are written whenever the signal comes.
            wait_until(lambda port=port: _listening(port), 30, "the exporter to listen")
        finally:
            proc.send_signal(signal.SIGTERM)
            out, _ = proc.communicate(timeout=10)
        lines = [line for line in out.splitlines() if "without TLS" in line]
        assert len(lines) == warned, out
        if warned:
            assert lines[0] == ("gpumon exporter: listening on 127.0.0.1 without TLS: anyone who "
                                "can reach this port reads it; see --web.config.file")
