"""The exporter's HTTP side: GET /metrics from the cached text, the rest from prometheus_client.

A scrape that accepts Prometheus's text format 0.0.4 (Prometheus itself lists it in its Accept
header, as does any client that sends none or ``*/*``) gets ``Exposition``'s bytes. Anything
else (OpenMetrics only, ``name[]`` filters, other methods) goes to prometheus_client's own WSGI
app over the same registry, so the official client still answers what it answered before.
"""

from __future__ import annotations

import functools
import socket
import threading
from collections.abc import Callable, Iterable
from socketserver import ThreadingMixIn
from typing import Any
from urllib.parse import parse_qs
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from prometheus_client import make_wsgi_app
from prometheus_client.registry import CollectorRegistry

from gpumon.telemetry.exposition import CONTENT_TYPE, Exposition

StartResponse = Callable[..., Any]
App = Callable[[dict[str, Any], StartResponse], Iterable[bytes]]


@functools.lru_cache(maxsize=64)  # a scraper sends the same header every time
def accepts_text(accept: str | None) -> bool:
    """Whether an Accept header admits the text format 0.0.4 (none at all admits anything)."""
    if not accept or not accept.strip():
        return True
    for item in accept.split(","):
        media, *params = (part.strip() for part in item.split(";"))
        if media.lower() not in ("text/plain", "text/*", "*/*"):
            continue
        options = dict(p.split("=", 1) for p in params if "=" in p)
        if options.get("q", "1").strip() in ("0", "0.0", "0.00", "0.000"):
            continue
        if media.lower() == "text/plain" and options.get("version", "0.0.4") != "0.0.4":
            continue
        return True
    return False


@functools.lru_cache(maxsize=64)
def gzip_accepted(accept_encoding: str | None) -> bool:
    """Whether an Accept-Encoding header lists gzip (as prometheus_client reads it)."""
    return any(item.split(";")[0].strip().lower() == "gzip"
               for item in (accept_encoding or "").split(","))


def make_app(exposition: Exposition, registry: CollectorRegistry) -> App:
    """The WSGI app: fast text for Prometheus's scrapes, prometheus_client's app otherwise."""
    fallback = make_wsgi_app(registry)

    def app(environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        query = environ.get("QUERY_STRING", "")
        if (environ.get("REQUEST_METHOD") != "GET" or environ.get("PATH_INFO") == "/favicon.ico"
                or (query and "name[]" in parse_qs(query))
                or not accepts_text(environ.get("HTTP_ACCEPT"))):
            return fallback(environ, start_response)
        gzipped = gzip_accepted(environ.get("HTTP_ACCEPT_ENCODING"))
        headers = [("Content-Type", CONTENT_TYPE)]
        if gzipped:
            headers.append(("Content-Encoding", "gzip"))
        start_response("200 OK", headers)
        return [exposition.body(gzipped)]

    return app


class _Server(ThreadingMixIn, WSGIServer):
    """One thread per request; the threads do not hold the process open at exit."""

    daemon_threads = True


class _QuietHandler(WSGIRequestHandler):
    """Does not log each request."""

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        """Log nothing."""


def serve(host: str, port: int, app: App) -> tuple[WSGIServer, threading.Thread]:
    """Serve ``app`` on host:port (IPv4 or IPv6) in a daemon thread; OSError if it cannot."""
    family, _, _, _, sockaddr = socket.getaddrinfo(
        host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0]
    server_class = type("_ExporterServer", (_Server,), {"address_family": family})
    server: WSGIServer = make_server(str(sockaddr[0]), port, app, server_class, _QuietHandler)
    thread = threading.Thread(target=server.serve_forever, name="gpumon-exporter-http",
                              daemon=True)
    thread.start()
    return server, thread
