"""trailblaze-doit: Trailblaze trails checked in the build (parse gate, typed surfaces, tsc
type gate) and replayed on Android devices."""

from __future__ import annotations

import os

__version__ = "0.1.0"
PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
"""This package's directory: what the no-op and run keys digest as "our own code"."""
DATA_DIR = os.path.join(PACKAGE_DIR, "data")
"""Our data files (the catalog, the schemas, the SDK's declarations and runtime), read from the
package's directory as the keys stamp them: not through `importlib.resources`, whose import
alone costs a one-trail check more than reading them."""
