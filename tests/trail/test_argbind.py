"""Binding a trail's arguments as Trailblaze's `TrailArgBinder` does, on real parsed trails."""

from __future__ import annotations

import pytest

from trailblaze.trail.argbind import NULL, BindError, Given, bind, coerce
from trailblaze.trail.model import Trail
from trailblaze.trail.parse import parse_trail

ARGS = """\
config:
  args:
    email: string
    retries:
      type: integer
      default: 3
    verbose:
      type: boolean
      default: false
    tags:
      type: array
      default: [smoke, login]
    user:
      type: object
      default: {name: Ada}
    code:
      default: '007'
trail:
  - step: Sign in as {{args.email}}
"""


def trail(text: str = ARGS) -> Trail:
    outcome = parse_trail("t.trail.yaml", text)
    assert outcome.trail is not None, [f.text for f in outcome.findings]
    return outcome.trail


def given(**values: object) -> dict[str, Given]:
    return {name: Given(value, f"--arg {name}") for name, value in values.items()}  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("type_", "value", "bound"),
    [
        ("string", "123", "123"),
        ("string", "", ""),
        ("integer", "123", "123"),
        ("integer", "+5", "5"),
        ("integer", "-007", "-7"),
        ("integer", str(2**63 - 1), str(2**63 - 1)),
        ("boolean", "TRUE", "true"),
        ("boolean", "False", "false"),
        ("array", [1, "a"], '[1, "a"]'),
        ("object", {"a": "é"}, '{"a": "é"}'),
    ],
)
def test_coercion_follows_the_declared_type(type_: str, value: object, bound: str) -> None:
    assert coerce(type_, value) == bound  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("type_", "value", "message"),
    [
        ("integer", "abc", "expected an integer, got 'abc'"),
        ("integer", "1.5", "expected an integer, got '1.5'"),
        ("integer", str(2**63), f"expected an integer, got '{2**63}'"),
        ("integer", "0x1F", "expected an integer, got '0x1F'"),
        ("boolean", "yes", "expected a boolean (true or false), got 'yes'"),
        ("string", ["a"], "expected text, got a list"),
        ("array", "[1, 2]", "expected a list, got '[1, 2]'"),
        ("object", "{}", "expected a mapping, got '{}'"),
        (
            "string",
            NULL,
            "null is not a value: write '' for an empty text, or leave the argument out to take "
            "its default",
        ),
    ],
)
def test_what_does_not_coerce_says_why(type_: str, value: object, message: str) -> None:
    with pytest.raises(ValueError, match=r".*") as caught:
        coerce(type_, value)  # type: ignore[arg-type]
    assert str(caught.value) == message


def test_defaults_fill_what_was_not_given_each_coerced_by_its_type() -> None:
    assert bind(trail().config.args, given(email="ada@example.com", retries="5")) == {
        "email": "ada@example.com",
        "retries": "5",
        "verbose": "false",
        "tags": '["smoke", "login"]',
        "user": '{"name": "Ada"}',
        "code": "007",
    }


def test_a_missing_required_argument_is_named_at_its_declaration() -> None:
    failure = bind(trail().config.args, {})
    assert isinstance(failure, BindError)
    assert failure.decl is not None
    assert (failure.decl.name, failure.decl.line, failure.decl.column) == ("email", 3, 5)
    assert failure.message == (
        "missing required argument email: pass --arg email=VALUE (or put it in an "
        "--args-file), or declare a default: to make it optional"
    )


def test_an_arg_for_a_list_says_where_a_list_can_be_given() -> None:
    failure = bind(trail().config.args, given(email="a", tags="[a, b]"))
    assert isinstance(failure, BindError)
    assert failure.message == (
        "argument 'tags' (--arg tags): expected a list, got '[a, b]' (a list or a mapping can "
        "only be given in an --args-file)"
    )


def test_a_default_that_does_not_coerce_refuses_only_when_it_is_used() -> None:
    text = ARGS.replace("default: 3", "default: many")
    assert not isinstance(bind(trail(text).config.args, given(email="a", retries="1")), BindError)
    failure = bind(trail(text).config.args, given(email="a"))
    assert isinstance(failure, BindError)
    assert failure.message == (
        "argument 'retries' was not given and its default is not of type integer: expected an "
        "integer, got 'many'; pass --arg retries=VALUE or fix the default"
    )
