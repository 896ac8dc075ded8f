"""Trail records: what a parsed trail file is, for every later stage.

Both trail formats (the unified `config:/trailhead:/trail:` mapping and the legacy
`- config:/- prompts:/- tools:/- trailhead:` list) parse into the same frozen records. Every
record carries its 1-based line and column and the key path that leads to it, down to each tool
call; argument values stay located `YNode`s so later stages can point at a single value and know
whether it was quoted.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Literal

import msgspec

from trailblaze.finding import Finding
from trailblaze.yaml.node import YMap, YNode, YScalar

Format = Literal["unified", "legacy"]
StepKind = Literal["step", "verify", "trailhead", "tools"]


BLANK_TOOL_NAME = "a tool name must not be empty"


def is_blank_name(key: YScalar) -> bool:
    """True for a key that names nothing: empty text, or null (`~`, `null`, a bare `:`)."""
    return not key.text or key.value is None


class ToolCall(msgspec.Struct, frozen=True, kw_only=True):
    """One recorded call: `name: {args}`. `args` is None when the call has no arguments."""

    name: str
    args: YMap | None
    line: int
    column: int
    key_path: str


class Recording(msgspec.Struct, frozen=True, kw_only=True):
    """The calls recorded for one device classifier (None in the legacy format)."""

    classifier: str | None
    calls: tuple[ToolCall, ...]
    line: int
    column: int


class Step(msgspec.Struct, frozen=True, kw_only=True):
    """A step, a verification, the trailhead, or a legacy `- tools:` block.

    `number` follows the reference's extraction rules: the trailhead and `- tools:` blocks are
    step 0, prompt steps count from 1 in file order.
    """

    number: int
    kind: StepKind
    text: str | None
    recordable: bool
    recordings: tuple[Recording, ...]
    has_recording: bool
    max_retries: int | None
    line: int
    column: int
    key_path: str

    @property
    def label(self) -> str:
        if self.kind == "tools":
            return "tools block"
        if self.kind == "trailhead":
            return self.text or "trailhead"
        return self.text or ""


class ArgDecl(msgspec.Struct, frozen=True, kw_only=True):
    """A declared trail argument (`config.args.<name>`)."""

    name: str
    type: str
    description: str | None
    default: YNode | None
    has_default: bool
    line: int
    column: int


class TrailConfig(msgspec.Struct, frozen=True, kw_only=True):
    """A trail's `config` step."""

    id: str | None = None
    target: str | None = None
    title: str | None = None
    description: str | None = None
    priority: str | None = None
    context: str | None = None
    platform: str | None = None
    driver: str | None = None
    devices: tuple[tuple[str, str], ...] = ()
    skip: tuple[tuple[str, str], ...] = ()
    """``config.skip``: (classifier, reason) pairs, in file order."""
    skip_all: str | None = None
    """A legacy ``skip:`` given as one scalar: the file is skipped wherever it runs."""
    tags: tuple[str, ...] = ()
    memory: tuple[tuple[str, str], ...] = ()
    args: tuple[ArgDecl, ...] = ()
    has_args_block: bool = False
    line: int = 1
    column: int = 1

    @property
    def arg_names(self) -> frozenset[str]:
        """The names of the declared arguments."""
        return frozenset(d.name for d in self.args)


class Trail(msgspec.Struct, frozen=True, kw_only=True):
    """A trail file that passed the parse gate."""

    path: str
    format: Format
    config: TrailConfig
    trailhead: Step | None
    steps: tuple[Step, ...]

    def all_steps(self) -> Iterator[Step]:
        if self.trailhead is not None:
            yield self.trailhead
        yield from self.steps

    def calls(self) -> Iterator[tuple[Step, Recording, ToolCall]]:
        """Every recorded call, trailhead first, in file order, every classifier slot."""
        for step in self.all_steps():
            for recording in step.recordings:
                for call in recording.calls:
                    yield step, recording, call

    @property
    def call_count(self) -> int:
        return sum(1 for _ in self.calls())


class ParseOutcome(msgspec.Struct, frozen=True, kw_only=True):
    """A trail (None when the parse gate rejected it) and every finding about the file."""

    trail: Trail | None
    findings: tuple[Finding, ...]

    @property
    def rejected(self) -> bool:
        return self.trail is None
