"""One grammar: the parse gate and the editor's trail JSON Schema accept the same keys.

Both are derived from `trailblaze.trail.grammar`. Here they are run side by side, the real parser on
trail text and jsonschema with the grammar's `$defs`, on a sample trail per key of every block:
each declared key is accepted by both, an unknown key is refused by both, a missing required
key (or a broken one-of / any-of) is refused by both, and lenient mode drops exactly the
unknown keys of the blocks the grammar marks lenient.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from trailblaze.trail import grammar
from trailblaze.trail.grammar import Block
from trailblaze.trail.parse import parse_trail

Doc = Any
CALL = {"type": "object", "minProperties": 1, "maxProperties": 1}
"""A tool call as far as the grammar goes: which tools exist is the trailmap's business."""
SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "anyOf": [{"$ref": "#/$defs/unified"}, {"$ref": "#/$defs/legacy"}],
    "$defs": grammar.trail_defs(target={"const": "app", **grammar.TARGET.schema}, call=CALL),
}
VALIDATOR = Draft202012Validator(SCHEMA)
STEP = {"step": "open the app"}
PROMPTS = {"prompts": [STEP]}


@dataclass(frozen=True)
class Place:
    """Where a block stands in a trail, a mapping it accepts, and an accepted value per key."""

    embed: Callable[[dict[str, Any]], Doc]
    base: dict[str, Any]
    examples: dict[str, Any]


_CONFIG_EXAMPLES = {
    "id": "checkout",
    "target": "app",
    "title": "Checkout",
    "description": "Buys one thing",
    "priority": "high",
    "context": "a signed-in user",
    "tags": ["smoke"],
    "memory": {"user": "ada"},
    "metadata": {"owner": "shop"},
    "args": {"user": "string"},
}

PLACES: dict[str, Place] = {
    "UNIFIED": Place(
        lambda m: m,
        {"trail": [STEP]},
        {"config": {"id": "x"}, "trailhead": {"step": "launch"}, "trail": [STEP]},
    ),
    "CONFIG": Place(
        lambda m: {"config": m, "trail": [STEP]},
        {},
        {**_CONFIG_EXAMPLES, "devices": {"android": "pixel"}, "skip": {"ios": "flaky"}},
    ),
    "ARG_DECL": Place(
        lambda m: {"config": {"args": {"user": m}}, "trail": [STEP]},
        {},
        {"type": "integer", "description": "who signs in", "default": 3, "required": True},
    ),
    "STEP": Place(
        lambda m: {"trail": [m]},
        dict(STEP),
        {
            "step": "tap buy",
            "verify": "the basket is empty",
            "recording": {"android": [{"tapOnPoint": {"x": 1, "y": 2}}]},
            "recordable": True,
            "maxRetries": 2,
        },
    ),
    "TRAILHEAD": Place(
        lambda m: {"trailhead": m, "trail": [STEP]},
        {"step": "launch"},
        {"step": "launch", "recording": {"android": {"launchApp": {}}}, "maxRetries": 1},
    ),
    "LEGACY_CONFIG": Place(
        lambda m: [{"config": m}, PROMPTS],
        {},
        {
            **_CONFIG_EXAMPLES,
            "platform": "android",
            "driver": "ANDROID_ONDEVICE_ACCESSIBILITY",
            "skip": "not on this device",
            "source": {"type": "HANDWRITTEN", "reason": "a test"},
        },
    ),
    "SOURCE": Place(
        lambda m: [{"config": {"source": m}}, PROMPTS],
        {},
        {"type": "HANDWRITTEN", "reason": "a test"},
    ),
    "LEGACY_STEP": Place(
        lambda m: [{"prompts": [m]}],
        dict(STEP),
        {
            "step": "tap buy",
            "verify": "the basket is empty",
            "recordable": False,
            "maxRetries": 2,
            "recording": {"tools": [{"tapOnPoint": {"x": 1, "y": 2}}]},
        },
    ),
    "LEGACY_RECORDING": Place(
        lambda m: [{"prompts": [{"step": "tap buy", "recording": m}]}],
        {"tools": []},
        {"tools": [{"pressBack": {}}]},
    ),
    "LEGACY_TRAILHEAD": Place(
        lambda m: [{"trailhead": m}, PROMPTS],
        {"step": "launch"},
        {"step": "launch", "tools": [{"launchApp": {}}], "maxRetries": 1},
    ),
}
"""Every block but `LEGACY_ITEM` (a one-key item, tested on its own below)."""


def _blocks() -> dict[str, Block]:
    return {name: value for name, value in vars(grammar).items() if isinstance(value, Block)}


def parser_accepts(doc: Doc, *, strict: bool = True) -> bool:
    return not parse_trail("t.trail.yaml", json.dumps(doc), strict=strict).rejected


def schema_accepts(doc: Doc) -> bool:
    return bool(VALIDATOR.is_valid(doc))


def verdicts(doc: Doc) -> tuple[bool, bool]:
    """(the parser's, the schema's): True when it accepts the trail."""
    return parser_accepts(doc), schema_accepts(doc)


CASES = sorted(PLACES)


def test_every_block_of_the_grammar_is_tried_here() -> None:
    assert set(_blocks()) == {*PLACES, "LEGACY_ITEM"}
    for name, place in PLACES.items():
        assert set(place.examples) == set(_blocks()[name].names), name


def test_the_schema_is_a_valid_json_schema() -> None:
    Draft202012Validator.check_schema(SCHEMA)


@pytest.mark.parametrize("name", CASES)
def test_the_base_sample_is_a_trail_for_both(name: str) -> None:
    block, place = _blocks()[name], PLACES[name]
    assert set(block.required) <= set(place.base)
    assert len(set(block.one_of) & set(place.base)) == (1 if block.one_of else 0)
    assert set(block.any_of) & set(place.base) or not block.any_of
    assert verdicts(place.embed(place.base)) == (True, True)


@pytest.mark.parametrize("name", CASES)
def test_every_declared_key_is_accepted_by_both(name: str) -> None:
    block, place = _blocks()[name], PLACES[name]
    for key in block.names:
        mapping = {**place.base, key: place.examples[key]}
        if key in block.one_of:  # the one it is, alone
            mapping = {k: v for k, v in mapping.items() if k == key or k not in block.one_of}
        assert verdicts(place.embed(mapping)) == (True, True), (name, key)


@pytest.mark.parametrize("name", CASES)
def test_an_unknown_key_is_refused_by_both(name: str) -> None:
    block, place = _blocks()[name], PLACES[name]
    # Both accept it only where the reference skips unknown keys (with a warning, here).
    accepted = block.ignored
    assert verdicts(place.embed({**place.base, "recordng": {}})) == (accepted, accepted)


def test_an_unknown_key_of_an_argument_declaration_is_a_warning_in_strict_mode_too() -> None:
    # Trailblaze's TrailArgConfig reads the keys it knows off the node and skips the others.
    doc = {"config": {"args": {"user": {"type": "string", "descripton": "x"}}}, "trail": [STEP]}
    outcome = parse_trail("t.trail.yaml", json.dumps(doc), strict=True)
    assert not outcome.rejected
    assert [(f.fatal, f.code, f.message) for f in outcome.findings] == [
        (
            False,
            "unknown-key",
            "unknown key 'descripton' (did you mean 'description'?); Trailblaze ignores it",
        )
    ]


@pytest.mark.parametrize("name", CASES)
def test_lenient_mode_drops_an_unknown_key_only_where_the_grammar_says(name: str) -> None:
    block, place = _blocks()[name], PLACES[name]
    doc = place.embed({**place.base, "recordng": {}})
    assert parser_accepts(doc, strict=False) is (block.lenient or block.ignored)


@pytest.mark.parametrize("name", CASES)
def test_required_keys_and_alternatives_agree(name: str) -> None:
    block, place = _blocks()[name], PLACES[name]
    for key in block.required:
        without = {k: v for k, v in place.base.items() if k != key}
        assert verdicts(place.embed(without)) == (False, False), (name, key)
    if block.one_of:
        none = {k: v for k, v in place.base.items() if k not in block.one_of}
        assert verdicts(place.embed(none)) == (False, False), name
        both = {**place.base, **{k: place.examples[k] for k in block.one_of}}
        assert verdicts(place.embed(both)) == (False, False), name
    if block.any_of:
        none = {k: v for k, v in place.base.items() if k not in block.any_of}
        assert verdicts(place.embed(none)) == (False, False), name
        for key in block.any_of:
            alone = {**none, key: place.examples[key]}
            assert verdicts(place.embed(alone)) == (True, True), (name, key)
            if block.key(key).non_empty:
                assert verdicts(place.embed({**none, key: []})) == (False, False), (name, key)


def _variants(block: Block, place: Place) -> list[dict[str, Any]]:
    """Mappings of a block, the grammar's requirements ignored: nothing, each key alone, the
    base without each key, the base with each key, every key."""
    examples = place.examples
    out: list[dict[str, Any]] = [{}, dict(examples), dict(place.base)]
    out += [{key: examples[key]} for key in block.names]
    out += [{k: v for k, v in place.base.items() if k != key} for key in place.base]
    out += [{**place.base, key: examples[key]} for key in block.names]
    return out


@pytest.mark.parametrize("name", CASES)
def test_the_parser_and_the_schema_agree_on_any_mix_of_keys(name: str) -> None:
    block, place = _blocks()[name], PLACES[name]
    for mapping in _variants(block, place):
        parser, schema = verdicts(place.embed(mapping))
        assert parser == schema, f"{name} {sorted(mapping)}: parser {parser}, schema {schema}"


@pytest.mark.parametrize(
    ("doc", "accepted"),
    [
        ({"config": {"id": "x"}}, True),
        ({"config": {"id": "x"}, "trail": []}, True),
        ({"trail": []}, False),
        ({}, False),
        ({"trailhead": {"step": "launch"}}, False),
        ({"config": {"id": "x"}, "trailhead": {"step": "launch"}, "trail": []}, False),
        ({"config": {"id": "x"}, "trailhead": {"step": "launch"}, "trail": [STEP]}, True),
    ],
)
def test_when_the_unified_steps_may_be_missing(doc: Doc, accepted: bool) -> None:
    assert verdicts(doc) == (accepted, accepted)


@pytest.mark.parametrize("key", grammar.LEGACY_ITEM.names)
def test_each_legacy_item_is_accepted_by_both(key: str) -> None:
    examples = {
        "config": {"id": "x"},
        "prompts": [STEP],
        "tools": [{"pressBack": {}}],
        "trailhead": "launchApp",
    }
    assert verdicts([{key: examples[key]}]) == (True, True)


@pytest.mark.parametrize(
    "item",
    [{"prompt": [STEP]}, {"config": {"id": "x"}, "prompts": [STEP]}, {}],
    ids=["unknown", "two-keys", "empty"],
)
def test_a_legacy_item_that_is_not_one_known_key_is_refused_by_both(item: Doc) -> None:
    assert verdicts([item]) == (False, False)
    assert not parser_accepts([item], strict=False)
