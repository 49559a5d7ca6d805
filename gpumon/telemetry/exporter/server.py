"""A small HTTP/1.1 server that holds under load: for the exporter's few GET requests.

One event-loop thread accepts connections and reads each request's head without blocking
(the TLS handshake too), so an idle or slow connection costs a file descriptor and a few
kilobytes, never a thread. A complete request goes to a bounded pool of worker threads
through a bounded queue; when the queue is full the request is refused at once with 503.
Limits: a listen backlog of 1024, ``head_timeout_s`` to send a whole request head (then the
connection is closed), ``max_head_bytes`` per head (431 beyond), ``max_connections`` open at
once (the oldest idle one is closed to make room: a flood of idle connections cannot keep a
real scrape out). Every answer closes its connection (``Connection: close``). When accept()
fails for lack of file descriptors the loop closes an idle connection or pauses accepting
for a moment; it never spins.
"""

from __future__ import annotations

import errno
import http.client
import io
import logging
import queue
import re
import selectors
import socket
import ssl
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from email.message import Message
from urllib.parse import parse_qs, unquote, urlsplit

log = logging.getLogger(__name__)

BACKLOG = 1024
HEAD_TIMEOUT_S = 5.0
WRITE_TIMEOUT_S = 5.0
MAX_HEAD_BYTES = 8192  # nginx's default for a request line and headers together
WORKERS = 8
QUEUE = 512  # complete requests waiting for a worker; beyond, 503 at once
REASONS = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 404: "Not Found",
           405: "Method Not Allowed", 408: "Request Timeout",
           429: "Too Many Requests", 431: "Request Header Fields Too Large",
           503: "Service Unavailable"}


def connection_limit() -> int:
    """Connections to keep open at once: what the file-descriptor limit leaves, up to 4096
    (Windows, which has no such limit but whose select() takes 512 sockets: 448)."""
    try:
        import resource
    except ImportError:
        return 448
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return 4096
    return max(16, min(4096, soft - 64))


_BARE_LF = re.compile(rb"(?<!\r)\n")


@dataclass(frozen=True)
class Request:
    """One parsed request head."""

    method: str
    path: str
    query: dict[str, list[str]]
    headers: Message
    peer: str


@dataclass(frozen=True)
class Response:
    status: int
    body: bytes = b""
    headers: tuple[tuple[str, str], ...] = ()


Handler = Callable[[Request], Response]


def encode_response(response: Response, with_body: bool = True) -> bytes:
    """The response's bytes; without its body for HEAD (the length still says the GET's)."""
    reason = REASONS.get(response.status, "")
    lines = [f"HTTP/1.1 {response.status} {reason}", f"Content-Length: {len(response.body)}",
             "Connection: close", *(f"{k}: {v}" for k, v in response.headers)]
    head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
    return head + response.body if with_body else head


def text_response(status: int, text: str, *headers: tuple[str, str]) -> Response:
    return Response(status, (text + "\n").encode("utf-8"),
                    (("Content-Type", "text/plain; charset=utf-8"), *headers))


def parse_head(head: bytes, peer: str) -> Request | None:
    """The request in ``head`` (its line and headers, CRLF CRLF included); None if malformed."""
    line, _, rest = head.partition(b"\r\n")
    parts = line.decode("latin-1").split()
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        return None
    try:
        headers = http.client.parse_headers(io.BytesIO(rest))
    except (http.client.HTTPException, ValueError):
        return None
    try:
        target = urlsplit(parts[1])
        query = parse_qs(target.query, max_num_fields=256)
    except ValueError:  # too many fields, a malformed address
        return None
    return Request(parts[0], unquote(target.path) or "/", query, headers, peer)


@dataclass(eq=False)
class _Conn:
    sock: socket.socket
    peer: str
    since: float
    buffer: bytearray = field(default_factory=bytearray)
    handshaking: bool = False


class HttpServer:
    """Serves ``handler`` on a listening socket; ``start()``, then ``close()``."""

    def __init__(self, listener: socket.socket, handler: Handler,
                 tls: ssl.SSLContext | None = None, *, workers: int = WORKERS,
                 queue_size: int = QUEUE, head_timeout_s: float = HEAD_TIMEOUT_S,
                 max_head_bytes: int = MAX_HEAD_BYTES,
                 max_connections: int | None = None) -> None:
        self.listener = listener
        self.handler = handler
        self.tls = tls
        self.head_timeout_s = head_timeout_s
        self.max_head_bytes = max_head_bytes
        self.max_connections = max_connections or connection_limit()
        self._queue: queue.Queue[tuple[_Conn, Request] | None] = queue.Queue(queue_size)
        self._pending: OrderedDict[socket.socket, _Conn] = OrderedDict()  # oldest first
        self._selector = selectors.DefaultSelector()
        self._wake_r, self._wake_w = socket.socketpair()
        self._closing = False
        self._paused_until = 0.0
        self.refused = 0  # requests answered 503 because every worker was busy
        listener.setblocking(False)
        self._loop = threading.Thread(target=self._run, name="gpumon-http-loop", daemon=True)
        self._workers = [threading.Thread(target=self._work, name=f"gpumon-http-{i}",
                                          daemon=True) for i in range(workers)]

    @property
    def port(self) -> int:
        return int(self.listener.getsockname()[1])

    @property
    def waiting(self) -> int:
        """Complete requests waiting for a worker."""
        return self._queue.qsize()

    def start(self) -> None:
        for t in (self._loop, *self._workers):
            t.start()

    def close(self) -> None:
        """Stop accepting, close every connection; workers finish what they write."""
        self._closing = True
        try:
            self._wake_w.send(b"x")
        except OSError:
            pass
        self._loop.join(2.0)
        self._wake_w.close()
        for _ in self._workers:
            try:
                self._queue.put_nowait(None)
            except queue.Full:
                break

    # --- the event loop -------------------------------------------------------------------------

    def _run(self) -> None:
        sel = self._selector
        sel.register(self.listener, selectors.EVENT_READ, None)
        sel.register(self._wake_r, selectors.EVENT_READ, None)
        listening = True
        try:
            while not self._closing:
                now = time.monotonic()
                if not listening and now >= self._paused_until:
                    sel.register(self.listener, selectors.EVENT_READ, None)
                    listening = True
                for key, _ in sel.select(timeout=0.25):
                    if key.fileobj is self.listener:
                        if not self._accept():
                            sel.unregister(self.listener)
                            listening = False
                    elif key.fileobj is not self._wake_r:
                        self._serve_one(key.data)
                self._expire(time.monotonic())
        except Exception:  # a bug here would stop the exporter answering: log it loudly
            log.exception("the HTTP server's loop failed")
        finally:
            for conn in list(self._pending.values()):
                self._drop(conn)
            sel.close()
            self.listener.close()
            self._wake_r.close()

    def _accept(self) -> bool:
        """Accept what is waiting; False to pause accepting (no descriptor left, none idle)."""
        for _ in range(64):
            try:
                sock, addr = self.listener.accept()
            except BlockingIOError:
                return True
            except OSError as err:
                if err.errno in (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM):
                    if self._pending:
                        self._drop(next(iter(self._pending.values())))
                        continue
                    self._paused_until = time.monotonic() + 0.1
                    return False
                continue  # ECONNABORTED and the like: that client gave up
            if len(self._pending) >= self.max_connections:
                self._drop(next(iter(self._pending.values())))  # the oldest idle one
            sock.setblocking(False)
            conn = _Conn(sock, str(addr[0]), time.monotonic())
            if self.tls is not None:
                try:
                    conn.sock = self.tls.wrap_socket(sock, server_side=True,
                                                     do_handshake_on_connect=False)
                except (OSError, ValueError):
                    sock.close()
                    continue
                conn.handshaking = True
            self._pending[conn.sock] = conn
            self._selector.register(conn.sock, selectors.EVENT_READ, conn)
        return True

    def _serve_one(self, conn: _Conn) -> None:
        """Read from one connection; a fault with it ends that connection, never the loop."""
        try:
            self._readable(conn)
        except Exception:
            log.exception("a connection from %s failed; closed", conn.peer)
            self._drop(conn)

    def _readable(self, conn: _Conn) -> None:
        sock = conn.sock
        try:
            if conn.handshaking:
                assert isinstance(sock, ssl.SSLSocket)
                sock.do_handshake()
                conn.handshaking = False
                self._selector.modify(sock, selectors.EVENT_READ, conn)
            while True:
                chunk = sock.recv(4096)
                if not chunk:
                    self._drop(conn)
                    return
                conn.buffer += chunk
                if _BARE_LF.search(conn.buffer):  # it would never end in CRLF CRLF: 408 in 5 s
                    self._answer_now(conn, text_response(
                        400, "Malformed request: lines end in CR LF."))
                    return
                end = conn.buffer.find(b"\r\n\r\n")
                if end >= 0:
                    self._complete(conn, bytes(conn.buffer[:end + 4]))
                    return
                if len(conn.buffer) > self.max_head_bytes:
                    self._answer_now(conn, text_response(431, "Request header too large."))
                    return
        except ssl.SSLWantReadError:
            return
        except ssl.SSLWantWriteError:
            self._selector.modify(sock, selectors.EVENT_READ | selectors.EVENT_WRITE, conn)
        except BlockingIOError:
            return
        except OSError:  # reset, a TLS alert, a client that is not speaking TLS
            self._drop(conn)

    def _complete(self, conn: _Conn, head: bytes) -> None:
        if len(head) > self.max_head_bytes:
            self._answer_now(conn, text_response(431, "Request header too large."))
            return
        request = parse_head(head, conn.peer)
        if request is None:
            self._answer_now(conn, text_response(400, "Malformed request."))
            return
        self._forget(conn)
        try:
            self._queue.put_nowait((conn, request))
        except queue.Full:
            self.refused += 1
            self._send_and_close(conn, text_response(503, "Too many requests; try again."))

    def _expire(self, now: float) -> None:
        while self._pending:
            conn = next(iter(self._pending.values()))
            if now - conn.since < self.head_timeout_s:
                return
            self._answer_now(conn, text_response(408, "Request timed out."))

    def _answer_now(self, conn: _Conn, response: Response) -> None:
        """From the loop: a short answer, written without waiting, then the connection closed."""
        self._forget(conn)
        self._send_and_close(conn, response)

    def _send_and_close(self, conn: _Conn, response: Response) -> None:
        if not conn.handshaking:
            try:
                conn.sock.send(encode_response(response))
            except (OSError, ValueError):
                pass
        _close(conn.sock)

    def _forget(self, conn: _Conn) -> None:
        if self._pending.pop(conn.sock, None) is not None:
            try:
                self._selector.unregister(conn.sock)
            except (KeyError, ValueError):
                pass

    def _drop(self, conn: _Conn) -> None:
        self._forget(conn)
        _close(conn.sock)

    # --- the workers ----------------------------------------------------------------------------

    def _work(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            conn, request = item
            try:
                response = self.handler(request)
            except Exception:
                log.exception("answering %s %s failed", request.method, request.path)
                response = text_response(503, "Internal error; see the exporter's log.")
            try:
                conn.sock.setblocking(True)
                conn.sock.settimeout(WRITE_TIMEOUT_S)
                conn.sock.sendall(encode_response(response, request.method != "HEAD"))
            except (OSError, ValueError):
                pass
            _close(conn.sock)


def _close(sock: socket.socket) -> None:
    try:
        sock.close()
    except OSError:
        pass


def listen(host: str, port: int) -> socket.socket:
    """A listening socket on host:port (IPv4 or IPv6) with a backlog of BACKLOG; OSError."""
    family, _, _, _, sockaddr = socket.getaddrinfo(
        host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0]
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(sockaddr)
        sock.listen(BACKLOG)
    except OSError:
        sock.close()
        raise
    return sock
