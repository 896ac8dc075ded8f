"""What the last check knew about each trail, so an unchanged trail costs one `stat`.

One JSON file per workspace (`<scratch>/state/trails.json`): for every trail its file stamp
(size, mtime, inode) and content hash, its parse outcome (status, target, number of calls,
findings) and the key and findings of its last completed type check. Unreadable or from another
format version: empty (everything is re-read). Written atomically, only when it changed, so two
concurrent checks leave one consistent file.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from trailblaze.finding import Finding
from trailblaze.fsutil import write_if_changed
from trailblaze.parse import ParseOutcome

STATE_VERSION = 2
Stamp = tuple[int, int, int]


@dataclass(frozen=True, slots=True)
class TrailRecord:
    path: str
    stamp: Stamp | None
    content: str
    strict: bool
    status: str
    target: str | None
    calls: int
    parse: tuple[dict[str, Any], ...] = ()
    runif: tuple[dict[str, Any], ...] = ()
    key: str | None = None
    surface_key: str | None = None
    base_key: str | None = None
    types: tuple[dict[str, Any], ...] = ()
    branches: tuple[tuple[str, int, int], ...] = ()
    """(signature, line, column) of every valid runIf tree, for the repetition lint."""

    @classmethod
    def from_outcome(
        cls,
        path: str,
        stamp: Stamp | None,
        content: str,
        outcome: ParseOutcome,
        runif: list[Finding],
        strict: bool,
        branches: tuple[tuple[str, int, int], ...] = (),
    ) -> TrailRecord:
        trail = outcome.trail
        return cls(
            path=path,
            stamp=stamp,
            content=content,
            strict=strict,
            status="rejected" if trail is None else "parsed",
            target=trail.config.target if trail is not None else None,
            calls=trail.call_count if trail is not None else 0,
            parse=tuple(f.to_json() for f in outcome.findings),
            runif=tuple(f.to_json() for f in runif),
            branches=branches,
        )

    def restamp(self, stamp: Stamp | None) -> TrailRecord:
        return replace(self, stamp=stamp)

    def with_result(
        self,
        key: str | None,
        findings: Any,
        surface_key: str | None = None,
        base_key: str | None = None,
    ) -> TrailRecord:
        return replace(
            self,
            key=key,
            types=tuple(f.to_json() for f in findings),
            surface_key=surface_key,
            base_key=base_key,
        )

    def parse_findings(self) -> list[Finding]:
        return [Finding.from_json(f) for f in self.parse]

    def runif_findings(self) -> list[Finding]:
        return [Finding.from_json(f) for f in self.runif]

    def type_findings(self) -> list[Finding]:
        return [Finding.from_json(f) for f in self.types]

    def to_json(self) -> dict[str, Any]:
        return {
            "stamp": list(self.stamp) if self.stamp else None,
            "content": self.content,
            "strict": self.strict,
            "status": self.status,
            "target": self.target,
            "calls": self.calls,
            "parse": list(self.parse),
            "runif": list(self.runif),
            "key": self.key,
            "surface_key": self.surface_key,
            "base_key": self.base_key,
            "types": list(self.types),
            "branches": [list(b) for b in self.branches],
        }

    @classmethod
    def from_json(cls, path: str, data: dict[str, Any]) -> TrailRecord:
        stamp = data.get("stamp")
        return cls(
            path=path,
            stamp=(int(stamp[0]), int(stamp[1]), int(stamp[2])) if stamp else None,
            content=str(data["content"]),
            strict=bool(data["strict"]),
            status=str(data["status"]),
            target=data.get("target"),
            calls=int(data["calls"]),
            parse=tuple(data.get("parse", ())),
            runif=tuple(data.get("runif", ())),
            key=data.get("key"),
            surface_key=data.get("surface_key"),
            base_key=data.get("base_key"),
            types=tuple(data.get("types", ())),
            branches=tuple((str(b[0]), int(b[1]), int(b[2])) for b in data.get("branches", ())),
        )


@dataclass
class TrailState:
    trails: dict[str, TrailRecord] = field(default_factory=dict)

    @staticmethod
    def path(scratch: Path) -> Path:
        return scratch / "state" / "trails.json"

    @classmethod
    def load(cls, scratch: Path) -> TrailState:
        try:
            data = json.loads(cls.path(scratch).read_text("utf-8"))
            if data.get("version") != STATE_VERSION:
                return cls()
            return cls({p: TrailRecord.from_json(p, d) for p, d in data["trails"].items()})
        except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError):
            return cls()

    def save(self, scratch: Path) -> bool:
        payload = {
            "version": STATE_VERSION,
            "trails": {p: r.to_json() for p, r in sorted(self.trails.items())},
        }
        return write_if_changed(
            self.path(scratch), json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
        )
