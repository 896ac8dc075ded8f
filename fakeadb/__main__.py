"""``python -m fakeadb MODEL.yaml [--host H] [--port N] [--quiet]``."""

from __future__ import annotations

from fakeadb.server import main

if __name__ == "__main__":
    raise SystemExit(main())
