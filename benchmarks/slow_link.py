"""A loopback reverse proxy that adds a delay to every request: a Prometheus server that is
far away (benchmarks). ``SlowLink(target_url, delay_s)``; ``url`` once started."""

from __future__ import annotations

import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class SlowLink:
    def __init__(self, target: str, delay_s: float) -> None:
        link = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *_: Any) -> None:
                pass

            def do_GET(self) -> None:
                time.sleep(link.delay_s)  # the round trip a remote server costs
                try:
                    with urllib.request.urlopen(target + self.path, timeout=30) as r:
                        status, ctype, body = r.status, r.headers["Content-Type"], r.read()
                except urllib.error.HTTPError as exc:
                    status, ctype, body = exc.code, exc.headers["Content-Type"], exc.read()
                self.send_response(status)
                self.send_header("Content-Type", ctype or "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.delay_s = delay_s
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
