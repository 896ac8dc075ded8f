"""``python -m trailblaze.replay.fake MODEL.yaml [--host H] [--port N] [--quiet]``."""

from __future__ import annotations

from trailblaze.replay.fake.server import main

if __name__ == "__main__":
    raise SystemExit(main())
