"""`python -m trailblaze`: the `trailblaze` command."""

from __future__ import annotations

import sys

from trailblaze.cli.main import program

if __name__ == "__main__":
    sys.exit(program())
