"""`python -m trailblaze`: the `trailblaze` command."""

from __future__ import annotations

import sys

from trailblaze.cli.main import main

if __name__ == "__main__":
    sys.exit(main())
