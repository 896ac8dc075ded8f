"""A small HTTP proxy in front of a real cache server that injects the faults a network has.

    with FaultProxy(upstream_url) as proxy:
        proxy.mode = "500"        # every request answered 500
        proxy.url                 # http://127.0.0.1:PORT/cache, the upstream's path kept

Modes: `pass` (forward unchanged), `500`, `delay` (sleep `delay` seconds, then forward), `truncate`
(a GET body cut in half under the full Content-Length, then the connection closed), `alter`
(a GET body with one character changed); `only` limits the mode to some paths. `refused_url()`
is a loopback URL nothing listens on.
"""

from __future__ import annotations

import http.client
import re
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from urllib.parse import urlsplit

MODES = ("pass", "500", "delay", "truncate", "alter")


_HELD: list[socket.socket] = []
"""The sockets behind `refused_url`: bound, never listening, held until the process ends."""


def refused_url() -> str:
    """A URL whose connections are refused for as long as the test process runs: its port is
    bound by a socket that never listens (a port merely found free could be taken by another
    test's server meanwhile, under xdist, and answer)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    _HELD.append(sock)
    return f"http://127.0.0.1:{sock.getsockname()[1]}/cache"


def alter(body: bytes) -> bytes:
    """One character changed where a verifying client must notice: in a finding's message or,
    for an entry without findings, in its digest."""
    for pattern in (rb'"message":"(.)', rb'"sha256":"(.)'):
        match = re.search(pattern, body)
        if match:
            old = match.group(1)
            new = b"X" if old != b"X" else b"Y"
            if pattern.startswith(rb'"sha256'):
                new = b"0" if old != b"0" else b"1"
            return body[: match.start(1)] + new + body[match.end(1) :]
    return body[:-1] + (b"X" if body[-1:] != b"X" else b"Y") if body else b"X"


class FaultProxy:
    def __init__(self, upstream: str, *, delay: float = 2.0) -> None:
        parts = urlsplit(upstream)
        self.upstream_host = parts.hostname or "127.0.0.1"
        self.upstream_port = parts.port or 80
        self.path = parts.path
        self.mode = "pass"
        self.only: str | None = None
        """When set, the mode applies only to requests whose path holds it (`/cas/`, say)."""
        self.delay = delay
        self.requests: list[tuple[str, str]] = []
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}{self.path}"

    def start(self) -> FaultProxy:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                proxy._handle(self, "GET")

            def do_PUT(self) -> None:
                proxy._handle(self, "PUT")

            def do_HEAD(self) -> None:
                proxy._handle(self, "HEAD")

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def _handle(self, handler: BaseHTTPRequestHandler, method: str) -> None:
        mode = self.mode if self.only is None or self.only in handler.path else "pass"
        self.requests.append((method, handler.path))
        length = int(handler.headers.get("Content-Length") or 0)
        body = handler.rfile.read(length) if length else None
        if mode == "500":
            self._reply(handler, 500, b"injected failure")
            return
        if mode == "delay":
            time.sleep(self.delay)
        upstream = http.client.HTTPConnection(self.upstream_host, self.upstream_port, timeout=10)
        try:
            headers = {k: v for k, v in handler.headers.items() if k.lower() != "host"}
            upstream.request(method, handler.path, body=body, headers=headers)
            response = upstream.getresponse()
            data = response.read()
            status = response.status
        finally:
            upstream.close()
        if method == "GET" and status == 200 and mode == "truncate":
            handler.send_response(200)
            handler.send_header("Content-Length", str(len(data)))
            handler.end_headers()
            handler.wfile.write(data[: len(data) // 2])
            handler.wfile.flush()
            handler.close_connection = True
            return
        if method == "GET" and status == 200 and mode == "alter":
            data = alter(data)
        self._reply(handler, status, data if method != "HEAD" else b"")

    @staticmethod
    def _reply(handler: BaseHTTPRequestHandler, status: int, data: bytes) -> None:
        try:
            handler.send_response(status)
            handler.send_header("Content-Length", str(len(data)))
            handler.end_headers()
            handler.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            handler.close_connection = True  # the client gave up (its timeout)

    def __enter__(self) -> FaultProxy:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
