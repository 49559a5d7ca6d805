"""The exporter's HTTP side: which path answers what, behind the web config's checks.

- ``/metrics``: the latest reading's cached bytes (``page``), ``name[]`` filters honoured;
- ``/health``: 200 with a one-line reason while readings are fresh, 503 with the reason when
  the driver does not answer, no driver is loaded or every GPU is lost (a probe for systemd,
  Kubernetes or a load balancer);
- ``/``: a small page linking to both, as Prometheus's own exporters have;
- anything else 404; HEAD as GET without the body (as Prometheus's exporters answer), any
  other method 405; a request whose lines end in a bare LF 400 at once (``server``). With
  ``basic_auth_users`` every path asks for the password (401 without it), as
  exporter-toolkit does; 429 with Retry-After where a password would have to wait to be
  checked (``webconfig.Verdict.BUSY``).
"""

from __future__ import annotations

import html
import ssl

from gpumon import __version__
from gpumon.telemetry.exporter.page import Pages
from gpumon.telemetry.exporter.server import (
    Handler,
    HttpServer,
    Request,
    Response,
    listen,
    text_response,
)
from gpumon.telemetry.exporter.webconfig import FAILURE_WINDOW_S, Verdict, WebConfig

RETRY_AFTER_S = round(FAILURE_WINDOW_S)  # what a 429 says: by then a client is let in again

LANDING = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>gpumon exporter</title></head>
<body><h1>gpumon exporter</h1>
<p>GPU metrics of {host} for Prometheus, with dcgm-exporter's names (gpumon {version}).</p>
<ul><li><a href="metrics">Metrics</a></li><li><a href="health">Health</a></li></ul>
</body></html>
"""


def make_handler(pages: Pages, web: WebConfig | None = None) -> Handler:
    """The request handler of the exporter's server (called on a worker thread)."""
    web = web or WebConfig()
    extra = web.headers
    landing = LANDING.format(host=html.escape(pages.host),
                             version=html.escape(__version__)).encode("utf-8")

    def handle(request: Request) -> Response:
        verdict = web.check(request.headers.get("Authorization"), request.peer)
        if verdict is Verdict.BUSY:  # no password checked: a flood, or too many wrong ones
            return text_response(429, "Too many password checks; try again later.",
                                 ("Retry-After", str(RETRY_AFTER_S)), *extra)
        if verdict is not Verdict.OK:
            return text_response(401, "Unauthorized.",
                                 ("WWW-Authenticate", 'Basic realm="gpumon exporter"'), *extra)
        if request.method not in ("GET", "HEAD"):  # HEAD: the GET's head (the server)
            return text_response(405, "Only GET and HEAD are answered here.",
                                 ("Allow", "GET, HEAD"), *extra)
        if request.path == "/metrics":
            accept = request.headers.get("Accept")
            encoding = request.headers.get("Accept-Encoding")
            names = request.query.get("name[]", [])
            if not names:
                pages.asked(accept, encoding)
            body = pages.current.body(accept, encoding, names)
            headers = [("Content-Type", body.content_type), *extra]
            if body.gzipped:
                headers.append(("Content-Encoding", "gzip"))
            return Response(200, body.data, tuple(headers))
        if request.path == "/health":
            view = pages.current.view
            return text_response(200 if view.healthy else 503, view.reason, *extra)
        if request.path == "/":
            return Response(200, landing, (("Content-Type", "text/html; charset=utf-8"),
                                           *extra))
        return text_response(404, "Not found: this exporter serves /metrics and /health.",
                             *extra)

    return handle


def serve(host: str, port: int, pages: Pages, web: WebConfig | None = None,
          **limits: float) -> HttpServer:
    """Serve the exporter on host:port, started; OSError if the address cannot be used."""
    tls: ssl.SSLContext | None = web.tls if web is not None else None
    server = HttpServer(listen(host, port), make_handler(pages, web), tls,
                        **limits)  # type: ignore[arg-type]
    server.start()
    return server
