"""The trail grammar, declared once: every mapping of both trail formats and the keys it holds.

A `Block` is one mapping of a trail file (the unified root, a step, a legacy `- config:` ...):
its keys in order, which of them are required, and whether lenient mode may drop an unknown
key. Each `Key` carries the JSON Schema of its value as an editor sees it. Two things are
derived from these declarations and from nothing else:

- the parse gate's key sets (`parse`): which keys a mapping accepts and requires;
- the trail JSON Schema (`trailschema`): `trail_defs` builds its `$defs` of the grammar.

`tests/trail/test_grammar.py` runs both on a sample trail per key, so they cannot drift apart. What a
key's value means (a step's text, a recorded call) is the parser's business; which keys exist
is this module's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from trailblaze.trail.argtokens import ARG_NAME

ARG_TYPES = ("string", "integer", "boolean", "array", "object")
"""The types a trail argument (`config.args.<name>.type`) may declare."""


class Key(msgspec.Struct, frozen=True, kw_only=True):
    """One key of a mapping and the JSON Schema of its value."""

    name: str
    schema: Mapping[str, Any]
    non_empty: bool = False
    """As one of a block's `any_of` alternatives, the key counts only with a non-empty list."""


class Block(msgspec.Struct, frozen=True, kw_only=True):
    """One mapping of the trail grammar.

    `required` keys must all be present; of `one_of`, exactly one; of `any_of`, at least one.
    An unknown key is an error in strict mode; in lenient mode it is dropped with a warning
    when `lenient` (the reference's runtime ignores it), and still an error otherwise; where
    the reference never refuses one (`ignored`), it is a warning in both modes.
    `rule` is what a key list cannot say, in JSON Schema, merged into the block's schema.
    """

    keys: tuple[Key, ...]
    required: tuple[str, ...] = ()
    one_of: tuple[str, ...] = ()
    any_of: tuple[str, ...] = ()
    lenient: bool = False
    rule: Mapping[str, Any] | None = None
    ignored: bool = False
    """The reference never refuses an unknown key here, strict or not (its loader reads the
    keys it knows and skips the rest): an unknown key is a warning in every mode, and the
    schema lets it through."""

    @property
    def names(self) -> tuple[str, ...]:
        """The keys this mapping accepts, in declaration order."""
        return tuple(key.name for key in self.keys)

    def key(self, name: str) -> Key:
        for key in self.keys:
            if key.name == name:
                return key
        raise KeyError(name)

    def schema(self, overrides: Mapping[str, Mapping[str, Any]] | None = None) -> dict[str, Any]:
        """The JSON Schema of this mapping; `overrides` replace some keys' value schemas."""
        out: dict[str, Any] = {"type": "object"}
        if not self.ignored:
            out["additionalProperties"] = False
        if self.required:
            out["required"] = list(self.required)
        out["properties"] = {
            key.name: dict((overrides or {}).get(key.name, key.schema)) for key in self.keys
        }
        if self.one_of:
            out["oneOf"] = [{"required": [name]} for name in self.one_of]
        if self.any_of:
            out["anyOf"] = [self._present(name) for name in self.any_of]
        out.update(self.rule or {})
        return out

    def _present(self, name: str) -> dict[str, Any]:
        if self.key(name).non_empty:
            return {"required": [name], "properties": {name: {"minItems": 1}}}
        return {"required": [name]}


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/$defs/{name}"}


_STRING = {"type": "string"}
_STRING_MAP = {"type": "object", "additionalProperties": {"type": "string"}}
_SCALAR_MAP = {"type": "object", "additionalProperties": {"type": ["string", "number", "boolean"]}}
_TEXT = _ref("text")
_CALLS = _ref("calls")
_STEP_TEXT = Key(name="step", schema=_TEXT)
_VERIFY_TEXT = Key(name="verify", schema=_TEXT)
_RECORDABLE = Key(name="recordable", schema={"type": "boolean"})
_MAX_RETRIES = Key(name="maxRetries", schema={"type": "integer"})

TARGET = Key(name="target", schema={"description": "The trailmap this trail belongs to."})
"""`config.target`; the trail schema of a trailmap pins its value to that trailmap's id."""

ARG_DECL = Block(
    keys=(
        Key(name="type", schema={"enum": list(ARG_TYPES)}),
        Key(name="description", schema={"type": ["string", "number", "boolean"]}),
        Key(name="default", schema={"not": {"type": "null"}}),
        Key(
            name="required",
            schema={
                "type": "boolean",
                "description": "Only confirms what `default:` says: true without one, "
                "false with one.",
            },
        ),
    ),
    lenient=True,
    ignored=True,
    # `required:` may only confirm what `default:` implies (a default makes it optional).
    rule={
        "if": {"required": ["default"]},
        "then": {"properties": {"required": {"const": False}}},
        "else": {"properties": {"required": {"const": True}}},
    },
)
"""The long form of a declared argument, `config.args.<name>: {type: ..., ...}`, as Trailblaze's
`TrailArgConfig` reads it: `type` (default string), `description`, `default` (never null; its
presence makes the argument optional) and `required`, which only confirms `default`. Its
serializer reads these keys off the node and skips any other, in strict mode too: `ignored`."""

_COMMON_CONFIG = (
    Key(name="id", schema=_STRING),
    TARGET,
    Key(name="title", schema=_STRING),
    Key(name="description", schema=_STRING),
    Key(name="priority", schema={"type": ["string", "number"]}),
    Key(name="context", schema=_STRING),
    Key(name="tags", schema={"type": "array", "items": _STRING}),
    Key(name="memory", schema=_SCALAR_MAP),
    Key(name="metadata", schema=_STRING_MAP),
    Key(
        name="args",
        schema={
            "type": "object",
            "propertyNames": {"pattern": f"^{ARG_NAME.pattern}$"},
            "additionalProperties": _ref("argDecl"),
        },
    ),
)

# -- the unified format: `config:`, `trailhead:`, `trail:` ------------------------------------------

CONFIG = Block(
    keys=(
        *_COMMON_CONFIG,
        Key(name="devices", schema=_STRING_MAP),
        Key(name="skip", schema=_STRING_MAP),
    ),
    lenient=True,
)

STEP = Block(
    keys=(
        _STEP_TEXT,
        _VERIFY_TEXT,
        Key(
            name="recording",
            schema={
                "type": "object",
                "description": "Recorded calls per device classifier (android, ios-iphone, web...).",
                "additionalProperties": _CALLS,
            },
        ),
        _RECORDABLE,
        _MAX_RETRIES,
    ),
    one_of=("step", "verify"),
)

TRAILHEAD = Block(
    keys=(
        _STEP_TEXT,
        Key(
            name="recording",
            schema={
                "type": "object",
                "additionalProperties": {
                    "anyOf": [_ref("call"), {"type": "object", "maxProperties": 0}]
                },
            },
        ),
        _MAX_RETRIES,
    ),
    any_of=("step", "recording"),
)

UNIFIED = Block(
    keys=(
        Key(name="config", schema=_ref("config")),
        Key(name="trailhead", schema=_ref("trailhead")),
        Key(name="trail", schema={"type": "array", "items": _ref("step")}),
    ),
    # A stepless document (a config and `trail: []`) is a trail; without a config, or after a
    # trailhead, the steps must be there.
    rule={
        "if": {"required": ["config"], "not": {"required": ["trailhead"]}},
        "then": {},
        "else": {"required": ["trail"], "properties": {"trail": {"minItems": 1}}},
    },
)

# -- the legacy format: a list of `- config:`, `- prompts:`, `- tools:`, `- trailhead:` -----------

SOURCE = Block(
    keys=(Key(name="type", schema=_STRING), Key(name="reason", schema=_STRING)),
    lenient=True,
)
"""A legacy `config.source`."""

LEGACY_CONFIG = Block(
    keys=(
        *_COMMON_CONFIG,
        Key(name="platform", schema=_STRING),
        Key(name="driver", schema=_STRING),
        Key(name="skip", schema={"type": ["string", "object"]}),
        Key(name="source", schema=SOURCE.schema()),
    ),
    lenient=True,
)

LEGACY_RECORDING = Block(
    keys=(Key(name="tools", schema=_CALLS),), required=("tools",), lenient=True
)

LEGACY_STEP = Block(
    keys=(
        _STEP_TEXT,
        _VERIFY_TEXT,
        _RECORDABLE,
        _MAX_RETRIES,
        Key(name="recording", schema=LEGACY_RECORDING.schema()),
    ),
    one_of=("step", "verify"),
    lenient=True,
)
"""One item of a `- prompts:` list."""

LEGACY_TRAILHEAD = Block(
    keys=(
        Key(name="step", schema=_STRING),
        Key(name="tools", schema=_CALLS, non_empty=True),
        _MAX_RETRIES,
    ),
    any_of=("step", "tools"),
    lenient=True,
)
"""The long form of `- trailhead:`; the short one is a tool name."""

LEGACY_ITEM = Block(
    keys=(
        Key(name="config", schema=_ref("legacyConfig")),
        Key(name="prompts", schema={"type": "array", "items": _ref("legacyStep")}),
        Key(name="tools", schema=_CALLS),
        Key(
            name="trailhead",
            schema={"anyOf": [{"type": "string", "minLength": 1}, LEGACY_TRAILHEAD.schema()]},
        ),
    ),
)
"""One item of a legacy trail: a mapping of exactly one of these keys."""


def _one_key(key: Key) -> dict[str, Any]:
    return {
        "type": "object",
        "required": [key.name],
        "additionalProperties": False,
        "properties": {key.name: dict(key.schema)},
    }


def trail_defs(*, target: Mapping[str, Any], call: Mapping[str, Any]) -> dict[str, Any]:
    """The `$defs` of the trail JSON Schema that the grammar declares.

    The two parts that depend on the trailmap come in: the schema of `config.target` and of one
    recorded tool call (`{toolName: {arguments}}`).
    """
    overrides = {"target": target}
    return {
        "argDecl": {"anyOf": [{"enum": list(ARG_TYPES)}, ARG_DECL.schema()]},
        "config": CONFIG.schema(overrides),
        "legacyConfig": LEGACY_CONFIG.schema(overrides),
        "call": dict(call),
        "calls": {"type": "array", "items": _ref("call")},
        "text": {"type": "string", "minLength": 1},
        "step": STEP.schema(),
        "trailhead": TRAILHEAD.schema(),
        "unified": UNIFIED.schema(),
        "legacyStep": LEGACY_STEP.schema(),
        "legacyItem": {"oneOf": [_one_key(key) for key in LEGACY_ITEM.keys]},
        "legacy": {"type": "array", "items": _ref("legacyItem")},
    }
