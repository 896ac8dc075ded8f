"""Every path the repository's tasks use, in one place."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORKSPACE = ROOT
"""The bundled workspace: `trailmaps/` at the repository root (compact layout)."""
