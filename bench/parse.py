"""Strict-parse throughput, with and without ruamel.yaml's C extension.

    python -m bench.parse [DIR ...] [--runs 5]

Parses every file named like a trail (the workspace scan's rule) under the given directories (default:
the upstream corpus copy in `tests/data/corpus` and the bundled `trailmaps/`) with the strict
parse gate, in this process, once with the C composer and once with the pure-Python one, and
reports files per second (median of `--runs`, files read once beforehand so only parsing is
timed) and how many files each parse rejected (the two must agree).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from trailblaze.trail.parse import parse_trail
from trailblaze.workspace import PROJECT_CONFIG_NAME, is_project_config, is_trail_name
from trailblaze.yaml.node import has_c_extension, read_text

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DIRS = (REPO / "tests" / "data" / "corpus", REPO / "trailmaps")


def trail_files(roots: Sequence[Path]) -> list[Path]:
    found: set[Path] = set()
    for root in roots:
        for path in root.rglob("*"):
            if not path.is_file() or not is_trail_name(path.name):
                continue
            if path.name == PROJECT_CONFIG_NAME and is_project_config(read_text(path)):
                continue
            found.add(path)
    return sorted(found)


def timed(texts: list[tuple[str, str]], *, pure: bool) -> tuple[float, int]:
    start = time.perf_counter()
    rejected = sum(parse_trail(name, text, pure=pure).rejected for name, text in texts)
    return time.perf_counter() - start, rejected


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.parse", description=__doc__)
    parser.add_argument("dirs", nargs="*", type=Path)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args(argv)
    files = trail_files(args.dirs or DEFAULT_DIRS)
    if not files:
        print("no trail files found", file=sys.stderr)
        return 2
    texts = [(str(p), read_text(p)) for p in files]
    size = sum(len(t) for _, t in texts)
    print(f"{len(texts)} trail files, {size / 1024:.0f} KiB")
    if not has_c_extension():
        print("ruamel.yaml.clib is not installed: both rows use the pure-Python composer")
    medians = {}
    for label, pure in (("C composer", False), ("pure Python", True)):
        timed(texts, pure=pure)  # warm-up: imports, caches
        runs = [timed(texts, pure=pure) for _ in range(args.runs)]
        seconds = statistics.median(s for s, _ in runs)
        rejected = {r for _, r in runs}
        medians[label] = seconds
        print(
            f"{label:12} {len(texts) / seconds:8.0f} files/s  "
            f"{seconds * 1000 / len(texts):6.3f} ms/file  rejected {sorted(rejected)}"
        )
    ratio = medians["pure Python"] / medians["C composer"]
    print(f"C composer is {ratio:.1f}x faster for the whole strict parse")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
