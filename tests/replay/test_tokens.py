"""Argument tokens at replay: the check's parser, dotted access into object arguments."""

from __future__ import annotations

import pytest

from fakeadb import FakeDevice, ModelDevice
from trailblaze.replay.arguments import Tokens, substitute
from trailblaze.replay.failure import ToolError
from trailblaze.replay.plan import plan_trail
from trailblaze.trail.argtokens import parse_token

from .support import OPEN_FORMS, PACKAGE, SAMPLE_APP, calls, runner, trail_text

USER = """
config:
  args:
    user: object
"""
USER_JSON = '{"name": "Jane", "address": {"city": "Lisbon"}, "age": 3}'


def test_parse_token_splits_name_and_path() -> None:
    assert parse_token("args.user") == ("user", ())
    assert parse_token("args.user.address.city") == ("user", ("address", "city"))
    assert parse_token("args") is None
    assert parse_token("args.a + 1") is None
    assert parse_token("args[0]") is None
    assert parse_token("memory.x") is None


def test_dotted_access_resolves_into_an_object_argument() -> None:
    tokens = Tokens({"user": USER_JSON}, frozenset({"user"}))
    assert substitute(
        {"text": "{{args.user.name}} of ${args.user.address.city}, {{args.user.age}}"}, tokens
    ) == {"text": "Jane of Lisbon, 3"}
    assert substitute("{{args.user.address}}", tokens) == '{"city": "Lisbon"}'
    assert substitute("{{args.user}}", tokens) == USER_JSON


def test_dotted_access_replays_on_a_device() -> None:
    model = FakeDevice.load(SAMPLE_APP)
    tokens = Tokens({"user": USER_JSON}, frozenset({"user"}))
    recording = (
        OPEN_FORMS
        + """
- tapOnElementBySelector: {nodeSelector: {androidAccessibility: {hintTextRegex: Name}}}
- inputText:
    text: "{{args.user.name}} ${args.user.address.city}"
"""
    )
    outcome = runner(ModelDevice(model), tokens=tokens).run_recording(calls(recording, config=USER))

    assert outcome.passed, outcome.failure
    assert model.field_value(PACKAGE, "name") == "Jane Lisbon"


def test_an_object_default_resolves_through_the_plan() -> None:
    config = "\nconfig:\n  args:\n    user:\n      type: object\n      default: {name: Ada}\n"
    plan = plan_trail("t.trail.yaml", trail_text("- pressBack: {}", config=config), ("android",))
    assert substitute("hi {{args.user.name}}", plan.tokens) == "hi Ada"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "{{args.user.nmae}}",
            "unresolved token '{{args.user.nmae}}': argument 'user' has no field 'nmae' "
            "(fields: address, age, name)",
        ),
        (
            "{{args.user.address.zip}}",
            "unresolved token '{{args.user.address.zip}}': argument 'user.address' has no "
            "field 'zip' (fields: city)",
        ),
        (
            "{{args.user.name.first}}",
            "unresolved token '{{args.user.name.first}}': argument 'user.name' is not an "
            "object, so it has no field 'first'",
        ),
        (
            "{{args.plain.x}}",
            "unresolved token '{{args.plain.x}}': argument 'plain' is not an object, so it has "
            "no field 'x'",
        ),
        (
            "{{args}}",
            "malformed argument token '{{args}}': expected '{{args.<name>}}'",
        ),
    ],
)
def test_a_missing_field_fails_the_tool(text: str, message: str) -> None:
    tokens = Tokens({"user": USER_JSON, "plain": "Jane"}, frozenset({"user", "plain"}))
    with pytest.raises(ToolError) as caught:
        substitute(text, tokens)
    assert str(caught.value) == message


def test_a_missing_field_fails_the_tool_on_a_device() -> None:
    tokens = Tokens({"user": USER_JSON}, frozenset({"user"}))
    recording = calls('- inputText: {text: "{{args.user.email}}"}', config=USER)
    outcome = runner(ModelDevice(FakeDevice.load(SAMPLE_APP)), tokens=tokens).run_recording(
        recording
    )

    assert outcome.failure is not None
    assert outcome.failure.failed_tool == "inputText"
    assert outcome.failure.error == (
        "unresolved token '{{args.user.email}}': argument 'user' has no field 'email' "
        "(fields: address, age, name)"
    )


def test_tokens_inside_an_argument_value_resolve_as_trailblaze_seeds_them() -> None:
    tokens = Tokens(
        {"email": "{{memory.user}}@example.com", "greeting": "Hi {{args.email}}"},
        frozenset({"email", "greeting"}),
        {"user": "ada"},
    )
    assert substitute("{{args.greeting}}!", tokens) == "Hi ada@example.com!"


def test_arguments_that_refer_to_each_other_in_a_cycle_fail_the_tool() -> None:
    tokens = Tokens({"a": "x{{args.b}}", "b": "y${args.a}"}, frozenset({"a", "b"}))
    with pytest.raises(ToolError) as caught:
        substitute("{{args.a}}", tokens)
    assert str(caught.value) == (
        "unresolved token '${args.a}': arguments refer to each other in a cycle (a -> b -> a)"
    )
