"""A small client of Prometheus's HTTP query API, on the standard library (http.client, json).

Every failure becomes a ``PromError`` whose message is one sentence a person understands:
the server cannot be reached, did not answer in time, refused the credentials, redirected
elsewhere, or answered with something that is not Prometheus. Header values (tokens) never
appear in a message. TLS uses the standard library's defaults (the system's certificate store,
verification on). Answers are untrusted: label values that are not strings are dropped, long
ones cut, and no shape of JSON can raise anything but a PromError.
"""

from __future__ import annotations

import base64
import json
import threading
import urllib.parse
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from gpumon.i18n import tr
from gpumon.telemetry.cluster.promhttp import (
    MAX_RESPONSE_BYTES,
    Fetcher,
    PromError,
    TooLarge,
    shown,
)

__all__ = ["MAX_RESPONSE_BYTES", "PromClient", "PromError", "TooLarge", "check_url",
           "parse_header", "public_url"]

_HEADER_CHARS = frozenset("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyz"
                          "ABCDEFGHIJKLMNOPQRSTUVWXYZ")
MAX_HEADER_FILE_BYTES = 64 * 1024  # a header line is a token, not a file system
MAX_LABEL_CHARS = 1024  # a label value longer than this is cut (a remote machine sends it)


def public_url(url: str) -> str:
    """The URL without user:password and query string, fit to print."""
    return shown(url)


def check_url(url: str) -> str:
    """The base URL without a trailing slash; ValueError with a sentence when unusable."""
    text = url.strip()
    parts = urllib.parse.urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(tr("{url} is not an http:// or https:// address of a Prometheus "
                            "server, for example http://server:9090", url=repr(url)))
    if any(c.isspace() or not c.isprintable() for c in text):
        raise ValueError(tr("{url} contains a space or a control character; write a space in "
                            "a URL as %20", url=repr(url)))
    try:
        parts.port  # noqa: B018 - raises ValueError on a port that is not a number
    except ValueError:
        raise ValueError(tr("{url} has a port that is not a number", url=repr(url))) from None
    return text.rstrip("/")


def with_credentials(url: str, headers: dict[str, str]) -> tuple[str, dict[str, str]]:
    """``user:password@`` of ``url`` as a basic-auth header (they were silently ignored): the
    URL without them, and the headers with it. Like every header given, it goes only to that
    server (promhttp.py keeps credentials home). ValueError with a sentence when an
    Authorization header is given too."""
    parts = urllib.parse.urlsplit(url)
    if parts.username is None and parts.password is None:
        return url, headers
    if any(name.lower() == "authorization" for name in headers):
        raise ValueError(tr("{url} holds a user name and password, and an Authorization "
                            "header is given too; give one of them.", url=public_url(url)))
    user = urllib.parse.unquote(parts.username or "")
    password = urllib.parse.unquote(parts.password or "")
    token = base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
    host = parts.netloc.rpartition("@")[2]
    bare = urllib.parse.urlunsplit((parts.scheme, host, parts.path, parts.query,
                                    parts.fragment))
    return bare, {**headers, "Authorization": f"Basic {token}"}


def parse_header(text: str) -> tuple[str, str]:
    """``'Name: value'``, or ``@FILE`` holding that line, as (name, value); ValueError
    with a sentence (never quoting the value) when malformed."""
    if text.startswith("@"):
        text = _read_header_file(text[1:])
    name, sep, value = text.partition(":")
    name, value = name.strip(), value.strip()
    if not sep or not name or not set(name) <= _HEADER_CHARS:
        raise ValueError(tr("a --prometheus-header must look like 'Name: value', for example "
                            "'Authorization: Bearer TOKEN'"))
    if any(c in value for c in "\r\n\0"):
        raise ValueError(tr("the value of the {name} header must be on one line", name=name))
    return name, value


def _read_header_file(path: str) -> str:
    """The file's text, read at most ``MAX_HEADER_FILE_BYTES`` (``@/dev/zero`` is endless)."""
    try:
        with Path(path).expanduser().open("rb") as f:
            data = f.read(MAX_HEADER_FILE_BYTES + 1)
    except OSError as exc:
        raise ValueError(tr("cannot read the header file {path} ({reason})", path=repr(path),
                            reason=exc.strerror or exc)) from None
    if len(data) > MAX_HEADER_FILE_BYTES:
        raise ValueError(tr("the header file {path} is larger than {kib} KiB; it should hold "
                            "one line such as 'Authorization: Bearer TOKEN'", path=repr(path),
                            kib=MAX_HEADER_FILE_BYTES // 1024))
    try:
        return data.decode("utf-8").strip()
    except UnicodeDecodeError:
        raise ValueError(tr("cannot read the header file {path} ({reason})", path=repr(path),
                            reason=tr("it is not UTF-8 text"))) from None


def clean_labels(metric: Mapping[Any, Any]) -> dict[str, str]:
    """A series' labels as strings: values of other types (null, numbers) dropped, long ones
    cut to ``MAX_LABEL_CHARS``."""
    return {k: v[:MAX_LABEL_CHARS] for k, v in metric.items()
            if isinstance(k, str) and isinstance(v, str)}


class PromClient:
    """GET requests to ``/api/v1/...``; answers parsed and checked."""

    def __init__(self, url: str, headers: Mapping[str, str] | None = None,
                 timeout_s: float = 5.0) -> None:
        self.url, headers = with_credentials(check_url(url), dict(headers or {}))
        self.shown_url = public_url(self.url)
        self.timeout_s = timeout_s
        self._fetcher = Fetcher(self.url, headers, timeout_s)
        self.fetcher = self._fetcher  # its max_bytes is the size cap of one answer
        self.answered_url = self.shown_url  # where the last answer really came from

    @property
    def source_text(self) -> str:
        """Where the data comes from, for the status line: the redirect's target too."""
        if self.answered_url == self.shown_url:
            return self.shown_url
        return tr("{url} (redirected from {given})", url=self.answered_url,
                  given=self.shown_url)

    def query(self, promql: str, at: float | None = None, *, clean: bool = True,
              stop: threading.Event | None = None) -> list[dict[str, Any]]:
        """An instant query's vector: ``[{"metric": {...}, "value": [t, "v"]}, ...]``;
        ``clean=False`` leaves the labels as the JSON had them (the caller checks them);
        ``stop``, set by another thread, ends it with a PromError."""
        params = {"query": promql} | ({} if at is None else {"time": f"{at:.3f}"})
        return self._result(self.get("/api/v1/query", params, stop), "vector", clean)

    def query_range(self, promql: str, start: float, end: float,
                    step_s: float) -> list[dict[str, Any]]:
        """A range query's matrix: ``[{"metric": {...}, "values": [[t, "v"], ...]}, ...]``."""
        params = {"query": promql, "start": f"{start:.3f}", "end": f"{end:.3f}",
                  "step": f"{step_s:g}"}
        return self._result(self.get("/api/v1/query_range", params), "matrix")

    def targets(self) -> list[dict[str, Any]]:
        """The active scrape targets (labels, health, lastError)."""
        data = self.get("/api/v1/targets", {"state": "active"})
        targets = data.get("activeTargets") if isinstance(data, dict) else None
        if not isinstance(targets, list):
            raise self._not_prometheus(tr("its targets list has an unexpected shape"))
        return [t for t in targets if isinstance(t, dict)]

    def get(self, path: str, params: Mapping[str, str],
            stop: threading.Event | None = None) -> Any:
        """The ``data`` of a successful API answer; PromError otherwise."""
        reply = self._fetcher.get(f"{self.url}{path}?{urllib.parse.urlencode(params)}", stop)
        answered = public_url(reply.url)
        self.answered_url = answered[:len(answered) - len(path)] if answered.endswith(
            path) else answered
        return self._decoded(reply.body, reply.code, reply.reason)

    def _decoded(self, body: bytes | bytearray, code: int, reason: str) -> Any:
        try:
            answer = json.loads(body)
        except (ValueError, UnicodeDecodeError, RecursionError):
            answer = None  # RecursionError: JSON nested deeper than Python's stack
        if not isinstance(answer, dict) or answer.get("status") not in ("success", "error"):
            if code in (401, 403):
                raise PromError(tr("The server at {url} refused gpumon (HTTP {code} {reason}); "
                                   "check --prometheus-header.", url=self.shown_url,
                                   code=code, reason=reason))
            raise self._not_prometheus(f"HTTP {code} {reason}")
        if answer["status"] == "error":
            error = answer.get("error") or tr("no reason given")
            raise PromError(tr("The Prometheus server at {url} answered with an error: "
                               "{error}.", url=self.shown_url, error=str(error)[:200]))
        return answer.get("data")

    def _result(self, data: Any, kind: str, clean: bool = True) -> list[dict[str, Any]]:
        if (not isinstance(data, dict) or data.get("resultType") != kind
                or not isinstance(data.get("result"), list)):
            raise self._not_prometheus(tr("expected a {kind} result", kind=kind))
        out = [r for r in data["result"] if isinstance(r, dict)
               and isinstance(r.get("metric"), dict)]
        if clean:
            for r in out:  # in place: this answer is ours alone
                r["metric"] = clean_labels(r["metric"])
        return out

    def _not_prometheus(self, what: str) -> PromError:
        return PromError(tr("{url} answered, but not as a Prometheus server does ({what}); "
                            "check the address (Prometheus usually listens on :9090).",
                            url=self.shown_url, what=what))
