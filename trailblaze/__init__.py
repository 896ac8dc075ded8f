"""trailblaze-doit: Trailblaze trails checked in the build (parse gate, typed surfaces, tsc
type gate) and replayed on Android devices."""

from __future__ import annotations

__version__ = "0.1.0"
