"""``--web.config.file``: TLS and basic authentication in Prometheus's exporter-toolkit format.

The same YAML file node_exporter reads (exporter-toolkit's ``docs/web-configuration.md``)::

    tls_server_config:
      cert_file: server.crt          # paths relative to this file
      key_file: server.key
      client_ca_file: clients.crt    # optional: then clients must show a certificate
      client_auth_type: RequireAndVerifyClientCert
      min_version: TLS12
    basic_auth_users:
      prometheus: $2y$10$...         # a bcrypt hash (htpasswd -nBC 10 "" | tr -d ':')
    http_server_config:
      headers: {X-Frame-Options: deny}

Anything wrong is a ``WebConfigError`` with one sentence; the exporter then refuses to start
rather than fall back to plain HTTP. Keys the toolkit has and gpumon cannot honour (cipher
suites, curve preferences) are refused too, never silently ignored.
"""

from __future__ import annotations

import base64
import binascii
import enum
import hashlib
import os
import re
import ssl
import stat
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpumon import extras
from gpumon.i18n import tr
from gpumon.telemetry.exporter.verify import Verifier

CLIENT_AUTH = {
    "NoClientCert": ssl.CERT_NONE,
    "VerifyClientCertIfGiven": ssl.CERT_OPTIONAL,
    "RequireAndVerifyClientCert": ssl.CERT_REQUIRED,
}
TLS_VERSIONS = {"TLS10": ssl.TLSVersion.TLSv1, "TLS11": ssl.TLSVersion.TLSv1_1,
                "TLS12": ssl.TLSVersion.TLSv1_2, "TLS13": ssl.TLSVersion.TLSv1_3}
TLS_KEYS = {"cert_file", "key_file", "client_ca_file", "client_auth_type", "min_version",
            "max_version"}
UNSUPPORTED_TLS_KEYS = {"cipher_suites", "curve_preferences", "prefer_server_cipher_suites",
                        "client_allowed_sans", "cert", "key"}
MAX_FILE_BYTES = 1 << 20
MAX_CACHED_LOGINS = 256
MIN_GOOD_COST = 10  # exporter-toolkit's docs suggest 10; cost 4 takes 1.7 ms a guess
# Each cost step doubles a check: cost 12 takes ~0.25 s of a core, 14 ~1 s, 31 some 17 days
# (a cost-31 hash once hung the exporter's start). Checks run in verify.py's bounded pool,
# one at a time per address; nothing is checked at start-up (30 users at cost 12 took 7.8 s).
MAX_COST = 14
_BCRYPT = re.compile(r"\$2[aby]\$(0[4-9]|[12][0-9]|3[01])\$[./A-Za-z0-9]{53}")
# Wrong passwords from one address: after this many within the window, that address's logins
# that are not remembered get 429 without a check until the oldest leaves the window.
FAILURES_PER_CLIENT = 5
FAILURE_WINDOW_S = 10.0
MAX_CLIENTS_TRACKED = 4096
# What an unknown user's password is checked against where no user is configured yet (the
# web config's users' own slowest hash otherwise: see WebConfig.decoy).
_DUMMY_HASH = b"$2b$10$347ACj2k8e73CO7gskSyb.8/sK6aw8TcGBFHsP779KavyclXfbWvK"


class Verdict(enum.Enum):
    """What a request's credentials get: let in, refused (401), or asked to come back (429)."""

    OK = "ok"
    DENIED = "denied"
    BUSY = "busy"


class WebConfigError(ValueError):
    """The web config file cannot be used; the message is one sentence."""


@dataclass
class WebConfig:
    """What the file asks for: a TLS context or None, bcrypt hashes by user, extra headers."""

    tls: ssl.SSLContext | None = None
    users: dict[str, bytes] = field(default_factory=dict)
    headers: tuple[tuple[str, str], ...] = ()
    warnings: list[str] = field(default_factory=list)  # said once at start-up
    key_file: Path | None = None  # the TLS key, checked against the address listened on
    _ok: dict[bytes, bool] = field(default_factory=dict, repr=False)
    _failures: OrderedDict[str, list[float]] = field(default_factory=OrderedDict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    verifier: Verifier = field(default_factory=Verifier, repr=False)

    @property
    def decoy(self) -> bytes:
        """The hash an unknown user's password is checked against: the users' slowest, so
        that a wrong user name takes as long as the slowest user's wrong password (a fixed
        cost-10 decoy made names tell apart: 60 ms unknown, 1.7 ms at cost 4, 236 ms at 12)."""
        if not self.users:
            return _DUMMY_HASH
        return max(self.users.values(), key=_cost)

    def authorized(self, authorization: str | None) -> bool:
        """Whether an Authorization header passes (always, without basic_auth_users)."""
        return self.check(authorization) is Verdict.OK

    def check(self, authorization: str | None, client: str = "") -> Verdict:
        """What an Authorization header from ``client`` (an address) gets.

        A bcrypt check costs 0.1-0.3 s by design; a pair that passed once is remembered (by
        its SHA-256) and never waits for one, as exporter-toolkit caches it. Others wait for
        the ``verifier``'s pool (a client with wrong passwords lately after the others); BUSY
        when it cannot check soon, or when ``client`` sent ``FAILURES_PER_CLIENT`` wrong
        passwords within ``FAILURE_WINDOW_S``."""
        if not self.users:
            return Verdict.OK
        scheme, _, encoded = (authorization or "").partition(" ")
        if scheme.lower() != "basic":
            return Verdict.DENIED
        try:
            user, sep, password = base64.b64decode(encoded.strip(), validate=True).decode(
                "utf-8").partition(":")
        except (binascii.Error, UnicodeDecodeError):
            return Verdict.DENIED
        if not sep:
            return Verdict.DENIED
        key = hashlib.sha256(f"{user}\0{password}".encode()).digest()
        with self._lock:
            if self._ok.get(key):
                return Verdict.OK
            if self.retry_after(client) > 0:
                return Verdict.BUSY
            suspect = client in self._failures
        import bcrypt

        known = self.users.get(user)

        def verify() -> bool:
            with self._lock:
                if self._ok.get(key):  # passed while this one waited
                    return True
            try:  # the hash's shape was checked at start; its salt is checked here
                return bcrypt.checkpw(password.encode(), known or self.decoy) and bool(known)
            except ValueError:
                return False

        ok = self.verifier.run(client, verify, suspect)
        if ok is None:
            return Verdict.BUSY
        with self._lock:
            if ok:
                if len(self._ok) >= MAX_CACHED_LOGINS:
                    self._ok.clear()
                self._ok[key] = True
            else:
                self._failed(client)
        return Verdict.OK if ok else Verdict.DENIED

    def key_warning(self, beyond_loopback: bool) -> str | None:
        """A sentence when the TLS key is readable by anyone on this machine and the exporter
        listens beyond loopback (whoever reads the key can pose as this exporter)."""
        if self.key_file is None or not beyond_loopback or not (
                _mode(self.key_file) & stat.S_IROTH):
            return None
        return tr("anyone on this machine can read the TLS key {path}; make it readable by "
                  "its owner only (chmod 600).", path=str(self.key_file))

    def retry_after(self, client: str, now: float | None = None) -> float:
        """Seconds until ``client`` may have a password checked again (0: now). Under
        ``_lock``."""
        times = self._failures.get(client)
        if not times or len(times) < FAILURES_PER_CLIENT:
            return 0.0
        now = time.monotonic() if now is None else now
        return max(0.0, times[-FAILURES_PER_CLIENT] + FAILURE_WINDOW_S - now)

    def _failed(self, client: str) -> None:
        now = time.monotonic()
        times = self._failures.pop(client, [])
        times = [t for t in times if now - t < FAILURE_WINDOW_S][-FAILURES_PER_CLIENT + 1:]
        times.append(now)
        self._failures[client] = times  # the most recent last
        while len(self._failures) > MAX_CLIENTS_TRACKED:
            self._failures.popitem(last=False)


def load(path: Path) -> WebConfig:
    """Read and check the file at ``path``; WebConfigError with a sentence if it is not usable."""
    try:
        import bcrypt  # noqa: F401
        import yaml
    except ImportError as err:  # not installed: which extra; installed but broken: why
        raise WebConfigError(extras.web_config_needs(err) or tr(
            "--web.config.file cannot load {package} ({error}).", package=err.name or "?",
            error=err)) from err
    raw = _read(Path(path))
    if len(raw) > MAX_FILE_BYTES:
        raise WebConfigError(tr("the web config file {path} is larger than 1 MiB.",
                                path=str(path)))
    try:
        doc = yaml.safe_load(raw)
    except RecursionError as err:  # "[[[[…" 100,000 deep: PyYAML's composer recurses
        raise WebConfigError(tr("the web config file {path} is nested too deeply to be a web "
                                "config.", path=str(path))) from err
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        raise WebConfigError(tr("the web config file {path} is not valid YAML{where}.",
                                path=str(path), where=where)) from err
    if doc is None:
        doc = {}
    _mapping(doc, path, "")
    unknown = set(doc) - {"tls_server_config", "basic_auth_users", "http_server_config"}
    if unknown:
        raise _key_error(path, sorted(map(str, unknown))[0])
    base = Path(path).resolve().parent
    config = WebConfig()
    if doc.get("tls_server_config") is not None:
        config.tls = _tls(_mapping(doc["tls_server_config"], path, "tls_server_config"),
                          base, path)
        config.key_file = base / _text(doc["tls_server_config"], "key_file", path)
        named = (_text(doc["tls_server_config"], k, path)
                 for k in ("cert_file", "key_file", "client_ca_file"))
        files = [base / name for name in named if name]
    else:
        files = []
    config.users = _users(doc.get("basic_auth_users"), path)
    config.headers = _headers(doc.get("http_server_config"), path)
    folders = dict.fromkeys(f.resolve().parent for f in [Path(path), *files])
    config.warnings = _weak_costs(config.users) + [
        tr("anyone on this machine may change {path}; make it writable by its owner only "
           "(chmod o-w).", path=str(f)) for f in [Path(path), *files]
        if _mode(f) & stat.S_IWOTH] + [
        tr("anyone on this machine may replace the files in {path}; make the folder writable "
           "by its owner only (chmod o-w).", path=str(d)) for d in folders
        if _mode(d) & stat.S_IWOTH and not _mode(d) & stat.S_ISVTX] + _expiry(
        base / _text(doc["tls_server_config"], "cert_file", path) if config.tls else None)
    return config


def _read(path: Path) -> bytes:
    """The file's first MAX_FILE_BYTES + 1 bytes; WebConfigError unless it is a regular file
    (a FIFO given as web.yml once blocked the start until something wrote to it)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as err:
        raise WebConfigError(tr("cannot read the web config file {path} ({reason}).",
                                path=str(path), reason=err.strerror or err)) from err
    with open(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise WebConfigError(tr("the web config file {path} is not a regular file (a pipe, "
                                    "a device or a folder); give the path of a YAML file.",
                                    path=str(path)))
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        try:
            return f.read(MAX_FILE_BYTES + 1)
        except OSError as err:
            raise WebConfigError(tr("cannot read the web config file {path} ({reason}).",
                                    path=str(path), reason=err.strerror or err)) from err


def _expiry(cert: Path | None, now: float | None = None) -> list[str]:
    """A sentence when the TLS certificate has expired or is not valid yet: clients refuse
    it, and the exporter would serve nobody without saying why. CPython's certificate
    decoder is the only reader of a certificate file's dates in the standard library."""
    decode = getattr(getattr(ssl, "_ssl", None), "_test_decode_cert", None)
    if cert is None or decode is None:
        return []
    try:
        dates = decode(str(cert))
        after = ssl.cert_time_to_seconds(dates["notAfter"])
        before = ssl.cert_time_to_seconds(dates["notBefore"])
    except (OSError, ssl.SSLError, KeyError, ValueError):
        return []
    now = time.time() if now is None else now
    if now > after:
        return [tr("the TLS certificate {path} expired on {date}; clients will refuse it.",
                   path=str(cert), date=dates["notAfter"])]
    if now < before:
        return [tr("the TLS certificate {path} is not valid before {date}; clients will "
                   "refuse it until then.", path=str(cert), date=dates["notBefore"])]
    return []


def _mode(path: Path) -> int:
    try:
        return path.stat().st_mode
    except OSError:
        return 0


def _weak_costs(users: dict[str, bytes]) -> list[str]:
    """Sentences about hashes quick to guess, and about costs that tell user names apart."""
    out = [tr("the password hash of {user} has cost {cost}, quick to guess; make one of "
              "cost {good} or more (htpasswd -nBC {good} {user}).", user=repr(user),
              cost=_cost(h), good=MIN_GOOD_COST)
           for user, h in users.items() if _cost(h) < MIN_GOOD_COST]
    if len({_cost(h) for h in users.values()}) > 1:
        out.append(tr("the password hashes in basic_auth_users have different costs, so the "
                      "time a wrong password takes tells which user names exist; give them "
                      "one cost."))
    return out


def _cost(hashed: bytes) -> int:
    return int(hashed[4:6])


def _mapping(value: Any, path: Path, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise WebConfigError(tr("in the web config file {path}, {key} must be a mapping of "
                                "keys to values.", path=str(path), key=where or "the top level"))
    return value


def _key_error(path: Path, key: str) -> WebConfigError:
    return WebConfigError(tr("the web config file {path} has a key gpumon does not know or "
                             "support: {key}.", path=str(path), key=key))


def _text(section: dict[str, Any], key: str, path: Path) -> str:
    value = section.get(key, "")
    if not isinstance(value, str):
        raise WebConfigError(tr("in the web config file {path}, {key} must be text.",
                                path=str(path), key=key))
    return value


def _tls(section: dict[str, Any], base: Path, path: Path) -> ssl.SSLContext:
    for key in section:
        if key not in TLS_KEYS or key in UNSUPPORTED_TLS_KEYS:
            raise _key_error(path, f"tls_server_config.{key}")
    cert, key = _text(section, "cert_file", path), _text(section, "key_file", path)
    if not cert or not key:
        raise WebConfigError(tr("in the web config file {path}, tls_server_config needs both "
                                "cert_file and key_file.", path=str(path)))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2  # exporter-toolkit's default
    for name in ("min_version", "max_version"):
        if name in section:
            version = TLS_VERSIONS.get(str(section[name]))
            if version is None:
                raise WebConfigError(tr("in the web config file {path}, {key} must be one of "
                                        "{choices}.", path=str(path), key=name,
                                        choices=", ".join(TLS_VERSIONS)))
            setattr(context, "minimum_version" if name == "min_version" else "maximum_version",
                    version)
    try:
        context.load_cert_chain(base / cert, base / key)
    except (OSError, ssl.SSLError) as err:
        raise WebConfigError(tr("cannot use the TLS certificate {cert} with the key {key} "
                                "({reason}).", cert=str(base / cert), key=str(base / key),
                                reason=getattr(err, "strerror", None) or err)) from err
    ca = _text(section, "client_ca_file", path)
    auth = _text(section, "client_auth_type", path) or (
        "RequireAndVerifyClientCert" if ca else "NoClientCert")
    if auth not in CLIENT_AUTH:
        raise WebConfigError(tr("in the web config file {path}, client_auth_type must be one "
                                "of {choices}.", path=str(path), choices=", ".join(CLIENT_AUTH)))
    if CLIENT_AUTH[auth] != ssl.CERT_NONE:
        if not ca:
            raise WebConfigError(tr("in the web config file {path}, client_auth_type {auth} "
                                    "needs client_ca_file.", path=str(path), auth=auth))
        try:
            context.load_verify_locations(cafile=base / ca)
        except (OSError, ssl.SSLError) as err:
            raise WebConfigError(tr("cannot use the client CA file {ca} ({reason}).",
                                    ca=str(base / ca),
                                    reason=getattr(err, "strerror", None) or err)) from err
        context.verify_mode = CLIENT_AUTH[auth]
    return context


def _users(section: Any, path: Path) -> dict[str, bytes]:
    if section is None:
        return {}
    users: dict[str, bytes] = {}
    for user, hashed in _mapping(section, path, "basic_auth_users").items():
        if not isinstance(user, str) or not isinstance(hashed, str) or ":" in user:
            raise WebConfigError(tr("in the web config file {path}, basic_auth_users must map "
                                    "user names to bcrypt hashes.", path=str(path)))
        if not _BCRYPT.fullmatch(hashed):  # a cut hash passed checkpw, then refused all
            raise WebConfigError(tr("in the web config file {path}, the password of {user} "
                                    "is not a whole bcrypt hash ($2y$, $2b$ or $2a$, a cost "
                                    "from 04 to 31, then 53 characters).", path=str(path),
                                    user=repr(user)))
        if _cost(hashed.encode()) > MAX_COST:
            raise WebConfigError(tr(
                "in the web config file {path}, the password hash of {user} has cost {cost}: "
                "each check would take {seconds} s or more; gpumon takes costs up to {most} "
                "(htpasswd -nBC 12 {user}).", path=str(path), user=repr(user),
                cost=_cost(hashed.encode()), most=MAX_COST,
                seconds=f"{2 ** (_cost(hashed.encode()) - 14):,}"))
        users[user] = hashed.encode()
    return users


def _headers(section: Any, path: Path) -> tuple[tuple[str, str], ...]:
    if section is None:
        return ()
    section = _mapping(section, path, "http_server_config")
    for key in section:
        if key not in ("headers", "http2"):
            raise _key_error(path, f"http_server_config.{key}")
    headers = _mapping(section.get("headers") or {}, path, "http_server_config.headers")
    out = []
    for name, value in headers.items():
        if (not isinstance(name, str) or not isinstance(value, str)
                or not name.replace("-", "").isalnum() or not name.isascii()
                or "\r" in value or "\n" in value):
            raise WebConfigError(tr("in the web config file {path}, http_server_config.headers "
                                    "must map header names to one-line values.",
                                    path=str(path)))
        out.append((name, value))
    return tuple(out)
