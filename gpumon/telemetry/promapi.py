"""A small client of Prometheus's HTTP query API, on the standard library (urllib, json).

Every failure becomes a ``PromError`` whose message is one sentence a person understands:
the server cannot be reached, did not answer in time, refused the credentials, or answered
with something that is not Prometheus. Header values (tokens) never appear in a message.
TLS uses the standard library's defaults (the system's certificate store, verification on).
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from gpumon.i18n import tr
from gpumon.units import MIB

_HEADER_CHARS = frozenset("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyz"
                          "ABCDEFGHIJKLMNOPQRSTUVWXYZ")
MAX_RESPONSE_BYTES = 64 * MIB  # a runaway answer is refused instead of filling memory


class PromError(Exception):
    """A query failed; ``str()`` is the sentence to show."""


def public_url(url: str) -> str:
    """The URL without user:password and query string, fit to print."""
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}{parts.path.rstrip('/')}"


def check_url(url: str) -> str:
    """The base URL without a trailing slash; ValueError with a sentence when unusable."""
    parts = urllib.parse.urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(tr("{url} is not an http:// or https:// address of a Prometheus "
                            "server, for example http://server:9090", url=repr(url)))
    try:
        parts.port  # noqa: B018 - raises ValueError on a port that is not a number
    except ValueError:
        raise ValueError(tr("{url} has a port that is not a number", url=repr(url))) from None
    return url.strip().rstrip("/")


def parse_header(text: str) -> tuple[str, str]:
    """``'Name: value'``, or ``@FILE`` holding that line, as (name, value); ValueError
    with a sentence (never quoting the value) when malformed."""
    if text.startswith("@"):
        try:
            text = Path(text[1:]).expanduser().read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as exc:
            raise ValueError(tr("cannot read the header file {path} ({reason})",
                                path=repr(text[1:]),
                                reason=getattr(exc, "strerror", None) or exc)) from None
    name, sep, value = text.partition(":")
    name, value = name.strip(), value.strip()
    if not sep or not name or not set(name) <= _HEADER_CHARS:
        raise ValueError(tr("a --prometheus-header must look like 'Name: value', for example "
                            "'Authorization: Bearer TOKEN'"))
    if any(c in value for c in "\r\n\0"):
        raise ValueError(tr("the value of the {name} header must be on one line", name=name))
    return name, value


class PromClient:
    """GET requests to ``/api/v1/...``; answers parsed and checked."""

    def __init__(self, url: str, headers: Mapping[str, str] | None = None,
                 timeout_s: float = 5.0) -> None:
        self.url = check_url(url)
        self.shown_url = public_url(self.url)
        self._headers = {"Accept": "application/json", **(headers or {})}
        self.timeout_s = timeout_s

    def query(self, promql: str, at: float | None = None) -> list[dict[str, Any]]:
        """An instant query's vector: ``[{"metric": {...}, "value": [t, "v"]}, ...]``."""
        params = {"query": promql} | ({} if at is None else {"time": f"{at:.3f}"})
        return self._result(self.get("/api/v1/query", params), "vector")

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

    def get(self, path: str, params: Mapping[str, str]) -> Any:
        """The ``data`` of a successful API answer; PromError otherwise."""
        url = f"{self.url}{path}?{urllib.parse.urlencode(params)}"
        request = urllib.request.Request(url, headers=self._headers)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                body = response.read(MAX_RESPONSE_BYTES + 1)
        except urllib.error.HTTPError as exc:
            body = _read_quietly(exc)
            return self._decoded(body, exc.code, exc.reason)
        except TimeoutError:
            raise PromError(self._timed_out()) from None
        except urllib.error.URLError as exc:
            if isinstance(exc.reason, TimeoutError):  # timed out while connecting
                raise PromError(self._timed_out()) from None
            raise PromError(self._unreachable(exc.reason)) from None
        except (OSError, ValueError) as exc:  # a reset connection, a malformed answer
            raise PromError(self._unreachable(exc)) from None
        if len(body) > MAX_RESPONSE_BYTES:
            raise PromError(tr("The Prometheus server at {url} sent more than {mib} MiB for "
                               "one query.", url=self.shown_url,
                               mib=MAX_RESPONSE_BYTES // MIB))
        return self._decoded(body, 200, "OK")

    def _decoded(self, body: bytes, code: int, reason: str) -> Any:
        try:
            answer = json.loads(body)
        except (ValueError, UnicodeDecodeError):
            answer = None
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

    def _result(self, data: Any, kind: str) -> list[dict[str, Any]]:
        if (not isinstance(data, dict) or data.get("resultType") != kind
                or not isinstance(data.get("result"), list)):
            raise self._not_prometheus(tr("expected a {kind} result", kind=kind))
        return [r for r in data["result"] if isinstance(r, dict)
                and isinstance(r.get("metric"), dict)]

    def _not_prometheus(self, what: str) -> PromError:
        return PromError(tr("{url} answered, but not as a Prometheus server does ({what}); "
                            "check the address (Prometheus usually listens on :9090).",
                            url=self.shown_url, what=what))

    def _timed_out(self) -> str:
        return tr("The Prometheus server at {url} did not answer within {seconds} s.",
                  url=self.shown_url, seconds=f"{self.timeout_s:g}")

    def _unreachable(self, reason: object) -> str:
        text = getattr(reason, "strerror", None) or str(reason) or type(reason).__name__
        return tr("The Prometheus server at {url} cannot be reached ({reason}).",
                  url=self.shown_url, reason=text)


def _read_quietly(exc: urllib.error.HTTPError) -> bytes:
    try:
        return exc.read(MAX_RESPONSE_BYTES)
    except OSError:
        return b""
