"""The adb ``sync:`` file protocol of the fake server: STAT, LIST, RECV, SEND on one connection.

adbutils opens one sync connection per operation and never sends QUIT (replay.md §3.2).
"""

from __future__ import annotations

import socket
import stat
import struct
import time

from fakeadb.files import DIRECTORIES, Files


def recv_exact(conn: socket.socket, n: int) -> bytes | None:
    """Exactly ``n`` bytes, or None when the peer closed first."""
    data = b""
    while len(data) < n:
        chunk = conn.recv(n - len(data))
        if not chunk:
            return None
        data += chunk
    return data


class SyncSession:
    """The ``sync:`` file protocol on one connection (adbutils sends one request per connection)."""

    def __init__(self, conn: socket.socket, files: Files) -> None:
        self.conn = conn
        self.files = files

    def serve(self) -> None:
        while True:
            header = recv_exact(self.conn, 8)
            if header is None:
                return
            command, length = header[:4], struct.unpack("<I", header[4:])[0]
            if command == b"QUIT":
                return
            raw = recv_exact(self.conn, length)
            if raw is None:
                return
            path = raw.decode(errors="replace")
            if command == b"STAT":
                self._stat(path)
            elif command == b"LIST":
                self._list(path)
            elif command == b"RECV":
                self._recv(path)
            elif command == b"SEND":
                if not self._send(path):
                    return
            else:
                self._fail(f"unknown sync command {command!r}")
                return

    def _fail(self, message: str) -> None:
        data = message.encode()
        self.conn.sendall(b"FAIL" + struct.pack("<I", len(data)) + data)

    def _stat(self, path: str) -> None:
        data = self.files.read(path)
        if data is not None:
            mode, size, mtime = stat.S_IFREG | 0o644, len(data), int(time.time())
        elif self.files.list_dir(path) is not None:
            mode, size, mtime = stat.S_IFDIR | 0o755, 4096, int(time.time())
        else:
            mode = size = mtime = 0
        # One sendall: adbutils reads the 12-byte body with a single recv (replay.md §3.5.3).
        self.conn.sendall(b"STAT" + struct.pack("<III", mode, size, mtime))

    def _list(self, path: str) -> None:
        entries = self.files.list_dir(path) or {}
        now = int(time.time())
        out = []
        for name, (mode, size) in sorted(entries.items()):
            encoded = name.encode()
            out.append(b"DENT" + struct.pack("<IIII", mode, size, now, len(encoded)) + encoded)
        out.append(b"DONE" + bytes(16))
        self.conn.sendall(b"".join(out))

    def _recv(self, path: str) -> None:
        data = self.files.read(path)
        if data is None:
            self._fail(f"open failed: No such file or directory: {path}")
            return
        out = []
        for start in range(0, len(data), 65536):
            chunk = data[start : start + 65536]
            out.append(b"DATA" + struct.pack("<I", len(chunk)) + chunk)
        out.append(b"DONE" + bytes(4))
        self.conn.sendall(b"".join(out))

    def _send(self, spec: str) -> bool:
        path = spec.rsplit(",", 1)[0]
        data = b""
        while True:
            header = recv_exact(self.conn, 8)
            if header is None:
                return False
            command, length = header[:4], struct.unpack("<I", header[4:])[0]
            if command == b"DATA":
                chunk = recv_exact(self.conn, length)
                if chunk is None:
                    return False
                data += chunk
            elif command == b"DONE":
                break
            else:
                self._fail(f"unexpected {command!r} during SEND")
                return False
        if path in DIRECTORIES:
            self._fail(f"{path} is a directory")
            return True
        self.files.write(path, data)
        self.conn.sendall(b"OKAY" + bytes(4))
        return True
