"""What ``--web.config.file`` checks at start-up beyond its syntax: whole bcrypt hashes, costs
worth their name, user names that time does not give away, files only their owner may change,
and a TLS key only its owner may read when the exporter listens beyond loopback."""

from __future__ import annotations

import base64
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import bcrypt
import pytest

from gpumon.telemetry.exporter import webconfig
from gpumon.telemetry.exporter.webconfig import WebConfigError, load

ROOT = Path(__file__).resolve().parents[2]
H4 = bcrypt.hashpw(b"four", bcrypt.gensalt(4)).decode()
H11 = bcrypt.hashpw(b"eleven", bcrypt.gensalt(11)).decode()


def web(tmp_path: Path, users: dict[str, str], extra: str = "") -> Path:
    path = tmp_path / "web.yml"
    path.write_text(extra + "basic_auth_users:\n" + "".join(
        f"  {user}: '{hashed}'\n" for user, hashed in users.items()))
    path.chmod(0o600)
    return path


def header(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


def test_an_unknown_user_costs_what_the_slowest_user_costs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A fixed cost-10 decoy made names tell apart: 60 ms unknown, 1.7 ms for a cost-4
    user, 236 ms for a cost-12 one. Now an unknown name is checked against the slowest
    user's hash, so it costs what a wrong password of that user costs."""
    config = load(web(tmp_path, {"fast": H4, "slow": H11}))
    seen: list[bytes] = []
    real = bcrypt.checkpw
    monkeypatch.setattr(bcrypt, "checkpw", lambda p, h: seen.append(h) or real(p, h))
    assert not config.authorized(header("nobody", "x"))
    assert not config.authorized(header("slow", "x"))
    assert seen == [H11.encode(), H11.encode()]


def test_a_cut_hash_is_refused_at_start_up(tmp_path: Path) -> None:
    """It passed the start-up check, and then every login got 401."""
    for cut in (H4[:-1], H4[:40], H4 + "x", H4.replace("$2b$", "$2x$")):
        with pytest.raises(WebConfigError) as err:
            load(web(tmp_path, {"prometheus": cut}))
        assert str(err.value) == (
            f"in the web config file {tmp_path / 'web.yml'}, the password of 'prometheus' is "
            "not a whole bcrypt hash ($2y$, $2b$ or $2a$, a cost from 04 to 31, then 53 "
            "characters).")
    assert load(web(tmp_path, {"prometheus": H4.replace("$2b$", "$2y$")})).users


def test_a_weak_cost_and_mixed_costs_are_warned_about(tmp_path: Path) -> None:
    assert load(web(tmp_path, {"slow": H11})).warnings == []
    assert load(web(tmp_path, {"fast": H4, "slow": H11})).warnings == [
        "the password hash of 'fast' has cost 4, quick to guess; make one of cost 10 or more "
        "(htpasswd -nBC 10 'fast').",
        "the password hashes in basic_auth_users have different costs, so the time a wrong "
        "password takes tells which user names exist; give them one cost."]


def test_files_anyone_may_change_and_a_key_anyone_may_read(tmp_path: Path) -> None:
    if shutil.which("openssl") is None:
        pytest.skip("openssl makes the certificate")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                    "-keyout", tmp_path / "server.key", "-out", tmp_path / "server.crt",
                    "-subj", "/CN=127.0.0.1"], check=True, capture_output=True)
    tls = "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n"
    path = web(tmp_path, {"slow": H11}, tls)
    (tmp_path / "server.key").chmod(0o600)
    config = load(path)
    assert config.warnings == []
    assert config.key_warning(beyond_loopback=True) is None
    path.chmod(0o666)
    (tmp_path / "server.key").chmod(0o644)
    config = load(path)
    assert config.warnings == [f"anyone on this machine may change {path}; make it writable "
                               "by its owner only (chmod o-w)."]
    assert config.key_warning(beyond_loopback=False) is None  # loopback: only this machine
    assert config.key_warning(beyond_loopback=True) == (
        f"anyone on this machine can read the TLS key {tmp_path / 'server.key'}; make it "
        "readable by its owner only (chmod 600).")


@pytest.mark.slow  # a subprocess: a second or two
def test_the_exporter_says_the_warnings_at_start_up(tmp_path: Path) -> None:
    path = web(tmp_path, {"fast": H4})
    path.chmod(0o666)
    pretend = ("import sys; import gpumon.cli.exporter as e; e.is_loopback = lambda host: "
               "False; sys.exit(e.main(sys.argv[1:]))")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-c", pretend, "--simulate", "1", "--listen",
                             f"127.0.0.1:{port}", "--web.config.file", str(path)], cwd=ROOT,
                            text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    lines: list[str] = []
    try:
        assert proc.stdout is not None
        for line in proc.stdout:  # until the exporter serves (or ends)
            lines.append(line)
            if "serving" in line:
                break
    finally:
        proc.terminate()
        # read through the same buffered file: communicate() would miss what it holds
        rest = proc.stdout.read() if proc.stdout is not None else ""
        proc.wait(timeout=20)
        if proc.stdout is not None:
            proc.stdout.close()
    text = "".join(lines) + rest
    assert "gpumon exporter: the password hash of 'fast' has cost 4, quick to guess" in text
    assert f"gpumon exporter: anyone on this machine may change {path}" in text


def test_every_costs_range_is_accepted(tmp_path: Path) -> None:
    assert webconfig._BCRYPT.fullmatch(H11)
    assert not webconfig._BCRYPT.fullmatch(H11.replace("$11$", "$32$"))
    assert not webconfig._BCRYPT.fullmatch(H11.replace("$11$", "$03$"))


def _exporter_with(path: Path) -> subprocess.CompletedProcess[str]:
    """``gpumon exporter`` started on ``path``; a hang fails the test at the timeout."""
    return subprocess.run([sys.executable, "-m", "gpumon", "exporter", "--simulate", "1",
                           "--listen", "127.0.0.1:9", "--web.config.file", str(path)],
                          capture_output=True, text=True, timeout=120, cwd=ROOT, check=False)


def test_deep_nesting_and_a_fifo_are_refused_with_a_sentence(tmp_path: Path) -> None:
    """Issue 53: 100,000 nested lists raised RecursionError; a FIFO blocked the start."""
    deep = tmp_path / "deep.yml"
    deep.write_text("basic_auth_users: " + "[" * 100_000)
    with pytest.raises(WebConfigError, match="is nested too deeply to be a web config"):
        load(deep)
    fifo = tmp_path / "web.yml"
    os.mkfifo(fifo)
    with pytest.raises(WebConfigError, match="is not a regular file"):
        load(fifo)
    for path, words in ((deep, "nested too deeply"), (fifo, "not a regular file")):
        done = _exporter_with(path)
        assert done.returncode == 1 and words in done.stderr, done.stderr
        assert "Traceback" not in done.stderr


def _expired_cert(d: Path) -> tuple[Path, Path]:
    """A self-signed certificate valid in 2019 only, and its key (openssl ca sets dates)."""
    (d / "newcerts").mkdir()
    (d / "index.txt").write_text("")
    (d / "serial").write_text("01\n")
    (d / "ca.cnf").write_text(
        f"[ca]\ndefault_ca = d\n[d]\ndir = {d}\ndatabase = $dir/index.txt\n"
        "new_certs_dir = $dir/newcerts\nserial = $dir/serial\ndefault_md = sha256\n"
        "policy = p\n[p]\ncommonName = supplied\n")
    key, csr, cert = d / "old.key", d / "old.csr", d / "old.crt"
    subprocess.run(["openssl", "req", "-new", "-newkey", "rsa:2048", "-nodes", "-keyout", key,
                    "-out", csr, "-subj", "/CN=old"], check=True, capture_output=True)
    subprocess.run(["openssl", "ca", "-batch", "-config", d / "ca.cnf", "-selfsign", "-keyfile",
                    key, "-in", csr, "-out", cert, "-startdate", "20190101000000Z",
                    "-enddate", "20200101000000Z"], check=True, capture_output=True)
    key.chmod(0o600)
    return cert, key


@pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl makes the certificate")
def test_an_expired_certificate_and_a_folder_anyone_may_change_are_warned_about(
        tmp_path: Path) -> None:
    folder = tmp_path / "conf"
    folder.mkdir()
    cert, _ = _expired_cert(folder)
    path = folder / "web.yml"
    path.write_text("tls_server_config:\n  cert_file: old.crt\n  key_file: old.key\n")
    path.chmod(0o600)
    folder.chmod(0o700)
    assert load(path).warnings == [f"the TLS certificate {cert} expired on Jan  1 00:00:00 "
                                   "2020 GMT; clients will refuse it."]
    folder.chmod(0o777)
    warnings = load(path).warnings
    assert f"anyone on this machine may replace the files in {folder}; make the folder " \
           "writable by its owner only (chmod o-w)." in warnings
    assert any("expired on Jan  1 00:00:00 2020 GMT" in w for w in warnings)
    sticky = tmp_path / "sticky"  # like /tmp: others may not replace the owner's files
    sticky.mkdir()
    sticky.chmod(0o1777)
    (sticky / "web.yml").write_text("")
    (sticky / "web.yml").chmod(0o600)
    assert load(sticky / "web.yml").warnings == []
