"""A loopback HTTP server whose answers a test scripts: (status, content type, body, delay)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Answer = tuple[int, str, bytes, float]  # status, Content-Type, body, seconds before answering


class ScriptedServer:
    """``answer(path_and_query) -> Answer``; records every request's path and headers."""

    def __init__(self, answer: Callable[[str], Answer]) -> None:
        self.answer = answer
        self.requests: list[tuple[str, dict[str, str]]] = []
        self.release = threading.Event()  # set to cut every pending delay short
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *_: Any) -> None:
                pass

            def do_GET(self) -> None:
                server.requests.append((self.path, dict(self.headers)))
                status, ctype, body, delay = server.answer(self.path)
                if delay:
                    server.release.wait(delay)
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", ctype)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except OSError:  # the client gave up first
                    pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        # shutdown() waits for the serving loop's next poll: 0.5 s by default, at each test's end
        self._thread = threading.Thread(target=self.httpd.serve_forever, args=(0.02,),
                                        daemon=True)

    def __enter__(self) -> ScriptedServer:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.release.set()
        time.sleep(0.05)
        self.httpd.shutdown()
        self.httpd.server_close()
