"""One HTTP GET with an overall deadline, a size cap and redirects that keep credentials home.

urllib's timeout is per socket read, so a server that sends a byte every 2 s kept a query
open for minutes; here a watchdog shuts the socket down when the query's deadline passes,
whatever the server does. Redirects are followed by hand (at most ``MAX_REDIRECTS``): to the
same scheme, host and port with the user's headers; elsewhere only when the user gave no
headers (an SSO proxy that redirects to its login page must not receive the token), and never
from ``https`` to ``http``. Every failure is a ``PromError`` with a sentence.
"""

from __future__ import annotations

import http.client
import socket
import ssl
import threading
import time
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass

from gpumon.i18n import tr
from gpumon.units import MIB

MAX_RESPONSE_BYTES = 64 * MIB  # a runaway answer is refused instead of filling memory
MAX_REDIRECTS = 5
_CHUNK = 256 * 1024


class PromError(Exception):
    """A query failed; ``str()`` is the sentence to show."""


class TooLarge(PromError):
    """The answer was larger than ``Fetcher.max_bytes``; asking for less may work."""


@dataclass(frozen=True, slots=True)
class Reply:
    """An HTTP answer: status, reason, body, and the URL that gave it (after redirects)."""

    code: int
    reason: str
    body: bytes | bytearray  # not copied to bytes: an answer near the cap would be held twice
    url: str


def origin(url: str) -> tuple[str, str, int]:
    """(scheme, host, port) of an http(s) URL, the default port filled in."""
    parts = urllib.parse.urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return parts.scheme, (parts.hostname or "").lower(), port


def shown(url: str) -> str:
    """The URL without user:password and query string, fit to print."""
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    try:
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        port = ""
    return f"{parts.scheme}://{host}{port}{parts.path.rstrip('/')}"


class Fetcher:
    """GETs for one base URL; ``user_headers`` are the credentials that must stay home."""

    def __init__(self, base_url: str, user_headers: Mapping[str, str], timeout_s: float) -> None:
        self.base_url = base_url
        self.shown_url = shown(base_url)
        self.user_headers = dict(user_headers)
        self.timeout_s = timeout_s
        self.max_bytes = MAX_RESPONSE_BYTES

    def get(self, url: str, stop: threading.Event | None = None) -> Reply:
        """GET ``url`` within ``timeout_s`` overall, redirects included; ``stop`` set by
        another thread ends the read (a query beside it was too large)."""
        deadline = time.monotonic() + self.timeout_s
        home = origin(self.base_url)
        headers = {"Accept": "application/json", **self.user_headers}
        for _ in range(MAX_REDIRECTS + 1):
            code, reason, location, body = self._once(url, headers, deadline, stop)
            if code not in (301, 302, 303, 307, 308) or not location:
                return Reply(code, reason, body, url)
            target = urllib.parse.urljoin(url, location)
            if urllib.parse.urlsplit(target).scheme not in ("http", "https"):
                raise PromError(self._refused(target, tr("not an http address")))
            if origin(url)[0] == "https" and origin(target)[0] == "http":
                raise PromError(self._refused(target, tr("from https to plain http")))
            if origin(target) != home and self.user_headers:
                raise PromError(self._refused(target, tr(
                    "another host, and gpumon sends its credentials (--prometheus-header, or "
                    "user:password in the address) only to {url}",
                    url=self.shown_url)))
            url = target
        raise PromError(tr("The server at {url} redirected more than {n} times.",
                           url=self.shown_url, n=MAX_REDIRECTS))

    def _refused(self, target: str, why: str) -> str:
        return tr("The server at {url} redirects to {target} ({why}); gpumon does not follow. "
                  "Give the Prometheus server's own address with --prometheus.",
                  url=self.shown_url, target=shown(target), why=why)

    def _once(self, url: str, headers: Mapping[str, str], deadline: float,
              stop: threading.Event | None = None) -> tuple[int, str, str, bytearray]:
        """(status, reason, Location, body) of one request, read before ``deadline``."""
        parts = urllib.parse.urlsplit(url)
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise PromError(self.timed_out())
        conn: http.client.HTTPConnection
        if parts.scheme == "https":
            conn = http.client.HTTPSConnection(parts.hostname or "", parts.port,
                                               timeout=remaining,
                                               context=ssl.create_default_context())
        else:
            conn = http.client.HTTPConnection(parts.hostname or "", parts.port,
                                              timeout=remaining)
        expired = threading.Event()

        def cut() -> None:  # the deadline passed: end whatever read is waiting
            expired.set()
            sock = conn.sock
            if sock is not None:
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

        watchdog = threading.Timer(remaining, cut)
        watchdog.daemon = True
        watchdog.start()
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        too_large = stopped = False
        body = bytearray()
        response: http.client.HTTPResponse | None = None
        try:
            conn.request("GET", path, headers=dict(headers))
            response = conn.getresponse()
            too_large = (response.length or 0) > self.max_bytes  # said so: read nothing
            while not too_large and not stopped:
                chunk = response.read(_CHUNK)
                if not chunk:
                    break
                body += chunk
                too_large = len(body) > self.max_bytes
                stopped = stop is not None and stop.is_set()
            if expired.is_set():
                raise PromError(self.timed_out())
        except PromError:
            raise
        except TimeoutError:
            raise PromError(self.timed_out()) from None
        except (OSError, http.client.HTTPException, ValueError) as exc:
            if expired.is_set():
                raise PromError(self.timed_out()) from None
            raise PromError(self.unreachable(exc)) from None
        finally:
            watchdog.cancel()
            conn.close()
            if response is not None:  # an answer not read to its end holds the socket
                response.close()
            if too_large or stopped:
                # Freed here, not by the garbage collector: a raised exception keeps this
                # frame (and a 64 MiB body) alive through its traceback for as long as the
                # exception lives; 37 of them once held 2.4 GB.
                body.clear()
        if too_large:
            raise TooLarge(self.too_large())
        if stopped:
            raise PromError(self.too_large())
        assert response is not None
        return (response.status, str(response.reason)[:100],
                response.getheader("Location", "") or "", body)

    def too_large(self) -> str:
        return tr("The Prometheus server at {url} sent more than {mib} MiB for one query.",
                  url=self.shown_url, mib=f"{self.max_bytes / MIB:g}")

    def timed_out(self) -> str:
        return tr("The Prometheus server at {url} did not answer within {seconds} s.",
                  url=self.shown_url, seconds=f"{self.timeout_s:g}")

    def unreachable(self, reason: object) -> str:
        if isinstance(reason, ssl.SSLError):
            text = reason.reason or str(reason)
        elif isinstance(reason, http.client.HTTPException):
            text = tr("the answer is not valid HTTP")
        else:
            text = getattr(reason, "strerror", None) or str(reason) or type(reason).__name__
        return tr("The Prometheus server at {url} cannot be reached ({reason}).",
                  url=self.shown_url, reason=str(text)[:200])
