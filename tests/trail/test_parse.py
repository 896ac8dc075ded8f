from __future__ import annotations

import msgspec
import pytest

from tests.conftest import dedent
from trailblaze.trail.model import Trail
from trailblaze.trail.parse import parse_trail
from trailblaze.yaml.node import YScalar

UNIFIED = dedent(
    """
    config:
      id: shop/checkout
      target: shop
      args:
        email: string
        count:
          type: integer
          default: 2
    trailhead:
      step: Open the app
      recording:
        android:
          launchApp: {appId: com.example.shop}
        ios-iphone: {}
    trail:
      - step: Type the address
        recording:
          android:
            - inputText:
                text: "{{args.email}}"
          web: []
      - verify: Done
        recordable: false
      - step: Tap buy
        maxRetries: 3
        recording:
          android:
            - tapOnElementWithText: {text: Buy, index: 0}
            - pressBack:
    """
)

LEGACY = dedent(
    """
    - config:
        target: shop
        platform: android
    - trailhead: shop_signIn
    - tools:
        - launchApp: {appId: x}
    - prompts:
        - step: first
          recording:
            tools:
              - tapOnElementWithText: {text: A}
        - verify: second
    - tools: []
    """
)


def ok(text: str, *, strict: bool = True) -> Trail:
    outcome = parse_trail("t.trail.yaml", text, strict=strict)
    assert outcome.findings == (), [f.text for f in outcome.findings]
    assert outcome.trail is not None
    return outcome.trail


def messages(text: str, *, strict: bool = True) -> list[str]:
    outcome = parse_trail("t.trail.yaml", text, strict=strict)
    return [f.text for f in outcome.findings]


def test_unified_records_carry_steps_classifiers_calls_and_positions() -> None:
    trail = ok(UNIFIED)
    assert trail.format == "unified"
    assert trail.config.target == "shop"
    assert [(a.name, a.type, a.has_default) for a in trail.config.args] == [
        ("email", "string", False),
        ("count", "integer", True),
    ]
    assert trail.trailhead is not None
    assert [(r.classifier, [c.name for c in r.calls]) for r in trail.trailhead.recordings] == [
        ("android", ["launchApp"]),
        ("ios-iphone", []),
    ]
    assert [(s.number, s.kind, s.label, s.recordable) for s in trail.steps] == [
        (1, "step", "Type the address", True),
        (2, "verify", "Done", False),
        (3, "step", "Tap buy", True),
    ]
    assert trail.steps[2].max_retries == 3
    calls = [
        (step.number, rec.classifier, call.name, call.line, call.column, call.key_path)
        for step, rec, call in trail.calls()
    ]
    assert calls == [
        (0, "android", "launchApp", 13, 7, "trailhead.recording.android"),
        (1, "android", "inputText", 19, 11, "trail[0].recording.android[0]"),
        (3, "android", "tapOnElementWithText", 28, 11, "trail[2].recording.android[0]"),
        (3, "android", "pressBack", 29, 11, "trail[2].recording.android[1]"),
    ]
    pressback = trail.steps[2].recordings[0].calls[1]
    assert pressback.args is None
    text = trail.steps[0].recordings[0].calls[0].args
    assert text is not None
    value = text.get("text")
    assert isinstance(value, YScalar)
    assert (value.value, value.style, value.line, value.column) == ("{{args.email}}", '"', 20, 19)


def test_legacy_records_number_steps_and_put_tools_blocks_at_step_zero() -> None:
    trail = ok(LEGACY)
    assert trail.format == "legacy"
    assert trail.config.target == "shop"
    assert trail.trailhead is not None
    assert [c.name for c in trail.trailhead.recordings[0].calls] == ["shop_signIn"]
    assert [(s.number, s.kind, s.label) for s in trail.steps] == [
        (0, "tools", "tools block"),
        (1, "step", "first"),
        (2, "verify", "second"),
        (0, "tools", "tools block"),
    ]
    assert [(s.number, r.classifier, c.name) for s, r, c in trail.calls()] == [
        (0, None, "shop_signIn"),
        (0, None, "launchApp"),
        (1, None, "tapOnElementWithText"),
    ]


def test_metadata_only_document_is_accepted() -> None:
    trail = ok("config:\n  id: x\n")
    assert trail.steps == ()


def test_strict_rejects_an_unknown_config_key_that_lenient_accepts() -> None:
    text = "config:\n  target: shop\n  app: com.example\ntrail:\n  - step: go\n"
    strict = parse_trail("t.trail.yaml", text)
    assert strict.rejected
    assert [f.text for f in strict.findings] == ["t.trail.yaml:3:3: config: unknown key 'app'"]
    lenient = parse_trail("t.trail.yaml", text, strict=False)
    assert not lenient.rejected
    assert lenient.trail is not None
    assert lenient.trail.config.target == "shop"
    assert [(f.kind, f.fatal, f.text) for f in lenient.findings] == [
        ("warning", False, "t.trail.yaml:3:3: config: unknown key 'app'; ignored (lenient mode)")
    ]


def test_lenient_still_rejects_what_is_always_an_error() -> None:
    assert messages("trial:\n  - step: go\n", strict=False) == [
        "t.trail.yaml:1:1: unknown key 'trial' (did you mean 'trail'?)",
        "t.trail.yaml:1:1: missing 'trail' (the list of steps)",
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(
            "trail:\n  - stpe: go\n",
            [
                "t.trail.yaml:2:5: trail[0]: unknown key 'stpe' (did you mean 'step'?)",
                "t.trail.yaml:2:5: trail[0]: a step needs 'step' or 'verify' text",
            ],
            id="unknown-key-did-you-mean",
        ),
        pytest.param(
            "config:\n  target: x\n",
            [],
            id="metadata-only",
        ),
        pytest.param(
            "trailhead:\n  step: go\n",
            ["t.trail.yaml:1:1: missing 'trail' (the list of steps)"],
            id="missing-trail",
        ),
        pytest.param(
            "trail: []\n", ["t.trail.yaml:1:8: trail: must not be empty"], id="empty-trail"
        ),
        pytest.param(
            # A stepless document, as the reference accepts it.
            "config:\n  id: shop/placeholder\n  target: x\ntrail: []\n",
            [],
            id="stepless-with-config",
        ),
        pytest.param(
            "config:\n  target: x\ntrailhead:\n  step: go\ntrail: []\n",
            ["t.trail.yaml:5:8: trail: must not be empty"],
            id="trailhead-without-steps",
        ),
        pytest.param(
            "config:\n  target: x\ntrail:\n",
            ["t.trail.yaml:3:7: trail: expected a list, found null"],
            id="null-trail",
        ),
        pytest.param(
            "trail:\n  - step: a\n    verify: b\n",
            ["t.trail.yaml:3:5: trail[0]: 'step' and 'verify' cannot both be set; keep one"],
            id="step-and-verify",
        ),
        pytest.param(
            "trail:\n  - step: ''\n",
            ["t.trail.yaml:2:11: trail[0].step: must not be empty"],
            id="empty-step",
        ),
        pytest.param(
            "trail:\n  - step: a\n    recordable: false\n    recording:\n      android:\n"
            "        - pressBack: {}\n",
            [
                "t.trail.yaml:3:5: trail[0]: 'recordable: false' with a non-empty recording; "
                "remove one of them"
            ],
            id="recordable-false-with-recording",
        ),
        pytest.param(
            "trail:\n  - step: a\n    recordable: 'no'\n",
            ["t.trail.yaml:3:17: trail[0].recordable: expected true or false, found a string"],
            id="recordable-not-bool",
        ),
        pytest.param(
            "trail:\n  - step: a\n    maxRetries: '3'\n",
            ["t.trail.yaml:3:17: trail[0].maxRetries: expected an integer, found a string"],
            id="max-retries-quoted",
        ),
        pytest.param(
            "trail:\n  - step: a\n    recording:\n      android:\n        - inputText:\n"
            "          text: hi\n",
            [
                "t.trail.yaml:6:11: trail[0].recording.android[0]: a tool call has exactly one "
                "key, the tool name 'inputText'; also found 'text' (should it be indented under "
                "'inputText'?)"
            ],
            id="tool-call-extra-key",
        ),
        pytest.param(
            "trail:\n  - step: a\n    recording:\n      android:\n        - pressBack\n",
            [
                "t.trail.yaml:5:11: trail[0].recording.android[0]: a tool call is a mapping "
                "'pressBack: {...}', found the bare name 'pressBack'; write 'pressBack: {}'"
            ],
            id="bare-tool-name",
        ),
        pytest.param(
            "trail:\n  - step: a\n    recording:\n      android:\n        - inputText: hello\n",
            [
                "t.trail.yaml:5:22: trail[0].recording.android[0].inputText: arguments of "
                "'inputText' must be a mapping, found a string"
            ],
            id="args-not-mapping",
        ),
        pytest.param(
            "trail:\n  - step: a\n    recording:\n      android:\n        pressBack: {}\n",
            ["t.trail.yaml:5:9: trail[0].recording.android: expected a list, found a mapping"],
            id="recording-not-a-list",
        ),
        pytest.param(
            "trailhead:\n  step: a\n  recording:\n    android:\n      - launchApp: {appId: x}\n"
            "trail:\n  - step: b\n",
            [
                "t.trail.yaml:5:7: trailhead.recording.android: a trailhead records one tool "
                "call per classifier, not a list"
            ],
            id="trailhead-list",
        ),
        pytest.param(
            "trailhead:\n  verify: a\ntrail:\n  - step: b\n",
            [
                "t.trail.yaml:2:3: trailhead: unknown key 'verify'",
                "t.trail.yaml:2:3: trailhead: a trailhead needs 'step' or 'recording'",
            ],
            id="trailhead-verify",
        ),
        pytest.param(
            "config:\n  args:\n    bad-name: string\n    n: number\ntrail:\n  - step: a\n",
            [
                "t.trail.yaml:3:5: config.args: argument name 'bad-name' must match "
                "[A-Za-z_][A-Za-z0-9_]* (no dashes, dots or spaces), so that "
                "'{{args.<name>}}' can name it",
                "t.trail.yaml:4:8: config.args.n: unknown argument type 'number'; expected one "
                "of string, integer, boolean, array, object",
            ],
            id="arg-declarations",
        ),
        pytest.param(
            "trail:\n  - step: a\n    recording:\n      android:\n        - inputText:\n"
            "            text: '{{args.email}} and ${args.name}'\n",
            [
                "t.trail.yaml:6:20: argument 'email' used in '{{args.email}}' is not declared "
                "in config.args (the trail has none)",
                "t.trail.yaml:6:39: argument 'name' used in '${args.name}' is not declared in "
                "config.args (the trail has none)",
            ],
            id="undeclared-arg-tokens",
        ),
        pytest.param(
            "config:\n  args: {a: string}\ntrail:\n  - step: 'use {{args.a.b}} {{args.a + 1}} "
            "{{memory.x}} {{x}}'\n",
            [
                "t.trail.yaml:4:29: malformed argument token '{{args.a + 1}}': expected "
                "'{{args.<name>}}'"
            ],
            id="malformed-arg-token",
        ),
        pytest.param(
            "config: {target: a}\nconfig: {target: b}\ntrail:\n  - step: a\n",
            ["t.trail.yaml:2:1: duplicate key 'config' (first defined at line 1)"],
            id="duplicate-key",
        ),
        pytest.param(
            "trail:\n  - step: a\n   - step: b\n",
            ["t.trail.yaml:3:4: invalid YAML: did not find expected '-' indicator"],
            id="invalid-yaml",
        ),
        pytest.param("", ["t.trail.yaml:1:1: empty trail file"], id="empty-file"),
        pytest.param(
            "just text\n",
            [
                "t.trail.yaml:1:1: a trail is a mapping (config/trailhead/trail) or a legacy "
                "list, found a string"
            ],
            id="scalar-root",
        ),
    ],
)
def test_unified_message_shapes(text: str, expected: list[str]) -> None:
    assert messages(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(
            "- config: {target: a}\n- prompt:\n    - step: a\n",
            ["t.trail.yaml:2:3: [1]: unknown item 'prompt' (did you mean 'prompts'?)"],
            id="unknown-item",
        ),
        pytest.param(
            "- prompts:\n    - step: a\n- config: {target: a}\n",
            ["t.trail.yaml:3:3: [1]: '- config:' must be the first item and appear once"],
            id="config-not-first",
        ),
        pytest.param(
            "- config: {target: a}\n- prompts:\n    - step: a\n- trailhead: x\n",
            ["t.trail.yaml:4:3: [2]: '- trailhead:' appears once, before any prompts or tools"],
            id="trailhead-after-prompts",
        ),
        pytest.param(
            "- prompts:\n    - step: a\n      recording: {}\n",
            [
                "t.trail.yaml:3:18: [0].prompts[0].recording: missing 'tools' (use 'tools: []' "
                "for a deliberate no-op)"
            ],
            id="recording-without-tools",
        ),
        pytest.param(
            "- prompts:\n    - step: a\n      verify: b\n",
            ["t.trail.yaml:3:7: [0].prompts[0]: 'step' and 'verify' cannot both be set; keep one"],
            id="step-and-verify-strict",
        ),
        pytest.param(
            "- config: {target: a}\n  prompts: []\n",
            [
                "t.trail.yaml:1:3: [0]: each item of a legacy trail is one of '- config:', "
                "'- prompts:', '- tools:', '- trailhead:'; found 2 keys"
            ],
            id="two-keys-in-item",
        ),
        pytest.param(
            "- trailhead: {maxRetries: 1}\n",
            [
                "t.trail.yaml:1:14: [0].trailhead: a trailhead needs 'step' or a non-empty 'tools' list"
            ],
            id="empty-trailhead",
        ),
    ],
)
def test_legacy_message_shapes(text: str, expected: list[str]) -> None:
    assert messages(text) == expected


def test_declared_tokens_and_dotted_access_are_clean() -> None:
    ok(
        "config:\n  args:\n    user: object\ntrail:\n  - step: 'hi {{args.user.name}}'\n"
        "    recording:\n      android:\n        - inputText: {text: '${args.user}'}\n"
    )


@pytest.mark.parametrize(
    "value",
    [
        pytest.param('"\\x7b{args.ghost}}"', id="escaped-brace"),
        pytest.param('"{\\\n   {args.ghost}}"', id="escaped-line-break"),
    ],
)
def test_tokens_spelled_with_escapes_are_checked(value: str) -> None:
    # The document never contains `{{` as such; the scalar does, and is checked all the same.
    found = messages(f"trail:\n  - step: {value}\n")
    assert len(found) == 1
    assert "argument 'ghost' used in '{{args.ghost}}' is not declared" in found[0]


def test_tokens_in_config_are_not_checked() -> None:
    ok("config:\n  description: 'uses {{args.nothing}}'\ntrail:\n  - step: a\n")


def test_quoted_numbers_stay_strings_in_arguments() -> None:
    trail = ok(
        "trail:\n  - step: a\n    recording:\n      android:\n        - inputText: "
        "{text: '12345678'}\n        - wait: {timeToWaitInSeconds: 5}\n"
    )
    values = []
    for _, _, call in trail.calls():
        assert call.args is not None
        _, value = call.args.items[0]
        assert isinstance(value, YScalar)
        values.append(value.value)
    assert values == ["12345678", 5]


@pytest.mark.parametrize(
    ("flag", "expected"),
    [
        ("yes", "t.trail.yaml:3:17: trail[0].recordable: expected true or false, found a string"),
        ("~", "t.trail.yaml:3:17: trail[0].recordable: expected true or false, found null"),
        ("[]", "t.trail.yaml:3:17: trail[0].recordable: expected true or false, found a list"),
    ],
)
def test_an_invalid_recordable_flag_is_one_finding_not_also_a_false_flag(
    flag: str, expected: str
) -> None:
    # An invalid flag is reported as such; it must not also count as `recordable: false`
    # against the step's non-empty recording.
    text = (
        f"trail:\n  - step: a\n    recordable: {flag}\n    recording:\n      android:\n"
        "        - pressBack: {}\n"
    )
    assert messages(text) == [expected]
    assert messages(text, strict=False) == [expected]


@pytest.mark.parametrize("name", ['""', "''", "~", "null"])
def test_a_recorded_tool_needs_a_name(name: str) -> None:
    text = f"trail:\n  - step: a\n    recording:\n      android:\n        - {name}: {{}}\n"
    assert messages(text) == [
        "t.trail.yaml:5:11: trail[0].recording.android[0]: a tool name must not be empty"
    ]


def test_finding_json_keeps_every_field_in_order_and_round_trips() -> None:
    outcome = parse_trail("t.trail.yaml", "trail:\n  - step: a\n    maxRetries: x\n")
    [finding] = outcome.findings
    finding = finding.with_(step=1, classifier="android", tool="t", position="runIf.then[0]")
    data = finding.to_json()
    assert list(data.items()) == list(msgspec.structs.asdict(finding).items())
    assert type(finding).from_json(data) == finding
