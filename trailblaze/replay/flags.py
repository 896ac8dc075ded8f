"""The replay flags that shape a run: ``--tags``, ``--memory``, ``--secret`` (``--driver`` is
``drivers``'s), read and checked before anything is planned or sent to a device.

- ``--memory NAME=VALUE`` seeds the trail's memory before its first step, over the trail's own
  ``config.memory``: ``{{memory.NAME}}``, ``{{NAME}}`` and ``${NAME}`` read it, and so does a
  scripted tool's ``ctx.memory``.
- ``--secret NAME=VALUE`` (or ``--secret NAME``: the value of the environment variable NAME)
  is memory too, as Trailblaze keeps secrets: a sensitive memory value, which tokens read but
  which a scripted tool's ``ctx.memory`` never holds; its value is hidden in every output
  (``redaction.Secrets``).
- ``--tags a,b`` (repeatable) keeps the trails whose ``config.tags`` hold any of the tags; the
  others are left out, counted apart (not as failures). A tag that no trail of the run has is a
  usage error: a typo must not pass a run of zero trails.

A bad value is a ``ReplayUsageError`` whose message never shows a secret's value.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import PurePosixPath

from trailblaze.finding import did_you_mean
from trailblaze.redaction import Secrets
from trailblaze.replay.plan import SHARED_DEFINITION, TrailPlan, file_classifier
from trailblaze.replay.request import ReplayUsageError

#: A memory name tokens can address: ``{{NAME}}`` and ``{{memory.NAME}}``.
MEMORY_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*")
_NAME_HELP = "letters, digits, '_', '.' and '-', not starting with a digit"


def parse_memory(values: Sequence[str]) -> dict[str, str]:
    """``--memory NAME=VALUE`` values (split at the first ``=``; the last of a name wins)."""
    out: dict[str, str] = {}
    for value in values:
        name, sep, text = value.partition("=")
        if not sep or not name.strip():
            raise ReplayUsageError(f"--memory {value!r}: expected NAME=VALUE")
        out[_name("--memory", name.strip(), shown=value)] = text
    return out


def parse_secrets(values: Sequence[str], env: Mapping[str, str]) -> dict[str, str]:
    """``--secret NAME=VALUE`` or ``--secret NAME`` (from the environment variable NAME).

    Messages name the secret, never its value.
    """
    out: dict[str, str] = {}
    for value in values:
        name, sep, text = value.partition("=")
        name = name.strip()
        if not name:
            raise ReplayUsageError("--secret: expected NAME=VALUE or NAME (a variable's name)")
        _name("--secret", name, shown=name)
        if not sep:
            if name not in env:
                raise ReplayUsageError(
                    f"--secret {name}: no environment variable {name} to take its value from "
                    f"(give --secret {name}=VALUE, or set {name})"
                )
            text = env[name]
        if not text:
            raise ReplayUsageError(f"--secret {name}: the value is empty")
        out[name] = text
    return out


def from_environment(values: Sequence[str]) -> frozenset[str]:
    """The environment variables ``--secret NAME`` values were read from."""
    return frozenset(v.strip() for v in values if "=" not in v and v.strip())


def _name(flag: str, name: str, *, shown: str) -> str:
    if not MEMORY_NAME.fullmatch(name):
        raise ReplayUsageError(f"{flag} {shown!r}: '{name}' is not a memory name ({_NAME_HELP})")
    head = name.split(".", 1)[0]
    if head in ("args", "memory"):
        # `{{args.x}}` is an argument and `{{memory.x}}` the memory value `x`: a name so
        # spelled could never be read.
        raise ReplayUsageError(
            f"{flag} {shown!r}: '{name}' cannot be a memory name: tokens read "
            f"{{{{{head}.x}}}} as {'the argument' if head == 'args' else 'the memory value'} x"
        )
    return name


def parse_tags(values: Sequence[str]) -> tuple[str, ...]:
    """``--tags a,b --tags c``: the tags, in order, once each."""
    tags: list[str] = []
    for value in values:
        for part in value.split(","):
            tag = part.strip()
            if not tag:
                raise ReplayUsageError(f"--tags {value!r}: an empty tag (write --tags a,b)")
            tags.append(tag)
    return tuple(dict.fromkeys(tags))


@dataclass(frozen=True, slots=True)
class RunFlags:
    """The flags of one run, read and checked."""

    tags: tuple[str, ...] = ()
    memory: Mapping[str, str] | None = None
    secrets: Secrets = field(default_factory=Secrets)
    from_env: frozenset[str] = frozenset()
    """The environment variables secrets came from: kept out of scripted tools' children."""

    @classmethod
    def read(
        cls,
        *,
        tags: Sequence[str],
        memory: Sequence[str],
        secrets: Sequence[str],
        env: Mapping[str, str],
    ) -> RunFlags:
        seeded = parse_memory(memory)
        hidden = parse_secrets(secrets, env)
        both = sorted(set(seeded) & set(hidden))
        if both:
            raise ReplayUsageError(
                f"--memory and --secret both set '{both[0]}': a name is one or the other"
            )
        return cls(parse_tags(tags), seeded, Secrets(hidden), from_environment(secrets))

    def script_env(self, env: Mapping[str, str]) -> dict[str, str]:
        """The environment scripted tools run in: without the variables secrets came from."""
        return {k: v for k, v in env.items() if k not in self.from_env}

    def seed(self, plan: TrailPlan) -> TrailPlan:
        """``plan`` with its memory seeded: ``config.memory``, then ``--memory``, then the
        secrets (sensitive: tokens read them, scripts do not)."""
        if not self.memory and not self.secrets:
            return plan
        tokens = replace(
            plan.tokens,
            memory={**plan.tokens.memory, **(self.memory or {}), **self.secrets.values},
            sensitive=plan.tokens.sensitive | self.secrets.names,
        )
        return replace(plan, tokens=tokens)


@dataclass(frozen=True, slots=True)
class Selection:
    plans: list[TrailPlan]
    left_out: tuple[str, ...]
    """The paths of the trails ``--tags`` left out."""


def select_by_tags(plans: Sequence[TrailPlan], tags: Sequence[str]) -> Selection:
    """The plans whose trail has any of ``tags`` (all of them without tags).

    A trail the parse gate refused has no tags to read: it stays, refused, as without
    ``--tags`` (a broken file is never filtered out of sight). A legacy per-device file takes
    its directory's ``blaze.yaml`` tags too. ``ReplayUsageError`` names a tag no trail has.
    """
    if not tags:
        return Selection(list(plans), ())
    shared: dict[str, tuple[str, ...]] = {}
    for plan in plans:
        if plan.tags is not None and PurePosixPath(plan.path).name == SHARED_DEFINITION:
            shared[str(PurePosixPath(plan.path).parent)] = plan.tags
    known: set[str] = set()
    kept: list[TrailPlan] = []
    left_out: list[str] = []
    for plan in plans:
        if plan.tags is None:
            kept.append(plan)
            continue
        has = set(plan.tags)
        if plan.legacy and file_classifier(plan.path) is not None:
            has.update(shared.get(str(PurePosixPath(plan.path).parent), ()))
        known |= has
        if has & set(tags):
            kept.append(plan)
        else:
            left_out.append(plan.path)
    for tag in tags:
        if tag not in known:
            listed = ", ".join(sorted(known)) or "none"
            raise ReplayUsageError(
                f"--tags: no trail here has the tag '{tag}'{did_you_mean(tag, frozenset(known))} "
                f"(tags here: {listed})"
            )
    return Selection(kept, tuple(left_out))
