"""nginx with its WebDAV module as a Bazel HTTP remote cache on loopback, for tests and the benchmark.

    with NginxCache(directory) as server:
        server.url          # http://127.0.0.1:PORT/cache
        server.entries()    # every stored key, as "ac/<key>" / "cas/<key>"

The configuration is the documented minimal one (`dav_methods PUT; create_full_put_path on;
client_max_body_size 0;` under a `root`), written into `directory` with every path nginx would
otherwise take from the system (pid, logs, temp files) pointing there too. It runs in the
foreground as one process (`master_process off`), as the current user, until stopped.
`require_header=("Authorization", "Bearer x")` makes every request without that header a 401.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from pathlib import Path
from types import TracebackType

NGINX_CANDIDATES = ("nginx", "/usr/sbin/nginx")

CONFIG = """\
daemon off;
master_process off;
worker_processes 1;
pid {dir}/nginx.pid;
error_log {dir}/error.log warn;
events {{ worker_connections 256; }}
http {{
  access_log {dir}/access.log;
  client_body_temp_path {dir}/tmp/body;
  proxy_temp_path {dir}/tmp/proxy;
  fastcgi_temp_path {dir}/tmp/fastcgi;
  uwsgi_temp_path {dir}/tmp/uwsgi;
  scgi_temp_path {dir}/tmp/scgi;
  keepalive_requests 100000;
  server {{
    listen 127.0.0.1:{port};
    location /cache/ {{
      {auth}
      root {dir}/store;
      dav_methods PUT;
      create_full_put_path on;
      dav_access user:rw;
      client_max_body_size 0;
      allow 127.0.0.1;
      deny all;
    }}
  }}
}}
"""


class NginxError(RuntimeError):
    """nginx is missing or did not start; the message says why."""


def nginx_executable() -> str:
    for candidate in NGINX_CANDIDATES:
        found = shutil.which(candidate)
        if found:
            return found
    raise NginxError(
        "nginx is not installed (Debian: apt-get install nginx; `.ci/run` installs it)"
    )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class NginxCache:
    def __init__(self, directory: Path, *, require_header: tuple[str, str] | None = None) -> None:
        self.directory = directory.absolute()
        self.require_header = require_header
        self.port = 0
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/cache"

    @property
    def store(self) -> Path:
        return self.directory / "store" / "cache"

    def start(self) -> NginxCache:
        executable = nginx_executable()
        for name in ("store/cache", "tmp"):
            (self.directory / name).mkdir(parents=True, exist_ok=True)
        auth = ""
        if self.require_header is not None:
            name, value = self.require_header
            variable = "$http_" + name.lower().replace("-", "_")
            auth = f'if ({variable} != "{value}") {{ return 401; }}'
        for _attempt in range(5):
            self.port = free_port()
            config = self.directory / "nginx.conf"
            config.write_text(
                CONFIG.format(dir=self.directory, port=self.port, auth=auth), encoding="utf-8"
            )
            log = (self.directory / "nginx.out").open("wb")
            self.proc = subprocess.Popen(
                [executable, "-p", str(self.directory), "-c", str(config)],
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )
            log.close()
            if self._wait_ready():
                return self
            self.stop()
        raise NginxError(f"nginx did not start: {self._output()}")

    def _wait_ready(self) -> bool:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            assert self.proc is not None
            if self.proc.poll() is not None:
                return False  # e.g. the port was taken in the meantime
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    return True
            except OSError:
                time.sleep(0.02)
        return False

    def _output(self) -> str:
        parts = []
        for name in ("nginx.out", "error.log"):
            path = self.directory / name
            if path.exists():
                parts.append(path.read_text("utf-8", "replace").strip())
        return " | ".join(p for p in parts if p) or "(no output)"

    def stop(self) -> None:
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def entries(self) -> dict[str, bytes]:
        """Every stored entry: "ac/<key>" or "cas/<key>" -> its bytes."""
        out: dict[str, bytes] = {}
        for space in ("ac", "cas"):
            directory = self.store / space
            if directory.is_dir():
                for path in sorted(directory.iterdir()):
                    out[f"{space}/{path.name}"] = path.read_bytes()
        return out

    def clear(self) -> None:
        for space in ("ac", "cas"):
            shutil.rmtree(self.store / space, ignore_errors=True)

    def __enter__(self) -> NginxCache:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
