"""runIf in `trailblaze check`: the shared validator's messages, and the repetition lint."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import write_tree
from trailblaze.check.run import run_check
from trailblaze.options import CheckOptions
from trailblaze.trail.parse import parse_trail
from trailblaze.trail.runif import parse_runif
from trailblaze.workspace import find_workspace

HEAD = "config: {target: app}\ntrail:\n  - step: popup\n    recording:\n      android:\n"
P = "trailmaps/app/trails/t.trail.yaml"
K = "trail[0].recording.android[0].runIf"

# (the runIf item, as YAML lines at 8 spaces, the expected findings of the check)
MALFORMED = [
    pytest.param(
        "- runIf:\n    condition: {selector: {androidAccessibility: {textRegex: a}}}\n    then: [{pressBack: {}}]\n    els: []\n",
        [
            f"{P}:9:13: {K}: unknown key 'els' (did you mean 'else'?); runIf takes condition, then and else"
        ],
        id="unknown-key",
    ),
    pytest.param(
        "- runIf:\n    then: [{pressBack: {}}]\n",
        [f"{P}:6:11: {K}: missing 'condition' (a selector or a tool call)"],
        id="missing-condition",
    ),
    pytest.param(
        "- runIf:\n    condition:\n      selector: {androidAccessibility: {textRegex: a}}\n      tool: {pressBack: {}}\n    then: [{pressBack: {}}]\n",
        [f"{P}:8:15: {K}.condition: a condition has either 'selector' or 'tool', not both"],
        id="double-condition",
    ),
    pytest.param(
        "- runIf:\n    condition: {}\n    then: [{pressBack: {}}]\n",
        [f"{P}:7:24: {K}.condition: a condition needs 'selector' or 'tool'"],
        id="empty-condition",
    ),
    pytest.param(
        "- runIf:\n    condition: {selecter: {androidAccessibility: {textRegex: a}}}\n    then: [{pressBack: {}}]\n",
        [
            f"{P}:7:25: {K}.condition: unknown condition 'selecter' (did you mean 'selector'?); a condition is either 'selector' or 'tool'"
        ],
        id="neither-form",
    ),
    pytest.param(
        "- runIf:\n    condition: popup shown\n    then: [{pressBack: {}}]\n",
        [f"{P}:7:24: {K}.condition: expected a mapping with 'selector' or 'tool', found a string"],
        id="condition-not-a-mapping",
    ),
    pytest.param(
        "- runIf:\n    condition: {tool: {pressBack: {}, hideKeyboard: {}}}\n    then: [{pressBack: {}}]\n",
        [
            f"{P}:7:31: {K}.condition.tool: expected a tool name or one tool call '{{<tool>: {{...}}}}', found 2 keys"
        ],
        id="condition-two-tools",
    ),
    pytest.param(
        "- runIf:\n    condition: {tool: 42}\n    then: [{pressBack: {}}]\n",
        [
            f"{P}:7:31: {K}.condition.tool: expected a tool name or one tool call '{{<tool>: {{...}}}}', found a number"
        ],
        id="condition-tool-a-number",
    ),
    pytest.param(
        "- runIf:\n    condition: {tool: assertVisibleWithText, args: [Sign in]}\n    then: [{pressBack: {}}]\n",
        [
            f"{P}:7:60: {K}.condition.args: arguments of 'assertVisibleWithText' must be a mapping, found a list"
        ],
        id="named-tool-args-a-list",
    ),
    pytest.param(
        "- runIf:\n    condition: {tool: {assertVisibleWithText: {text: a}}, args: {text: b}}\n    then: [{pressBack: {}}]\n",
        [
            f"{P}:7:67: {K}.condition: 'args' goes with a tool given by name ('tool: NAME'); here the arguments are under the tool's name already, so they would be given twice"
        ],
        id="arguments-given-twice",
    ),
    pytest.param(
        "- runIf:\n    condition: {tool: runIf}\n    then: [{pressBack: {}}]\n",
        [f"{P}:7:31: {K}.condition.tool: a condition tool cannot be runIf"],
        id="named-tool-is-runif",
    ),
    pytest.param(
        "- runIf:\n    condition: {tool: ''}\n    then: [{pressBack: {}}]\n",
        [f"{P}:7:31: {K}.condition.tool: a tool name must not be empty"],
        id="named-tool-blank",
    ),
    pytest.param(
        "- runIf:\n    condition: {selector: {androidAccessibility: {textRegex: a}}}\n    then: []\n",
        [f"{P}:8:19: {K}.then: must not be empty"],
        id="empty-then",
    ),
    pytest.param(
        "- runIf:\n    condition: {selector: {androidAccessibility: {textRegex: a}}}\n    then: {pressBack: {}}\n",
        [f"{P}:8:19: {K}.then: expected a list of tool calls, found a mapping"],
        id="then-not-a-list",
    ),
    pytest.param(
        "- runIf:\n    condition: {selector: {androidAccessibility: {textRegex: a}}}\n",
        [f"{P}:6:11: {K}: missing 'then' (the calls to run when the condition holds)"],
        id="missing-then",
    ),
    pytest.param(
        "- runIf:\n    condition: {selector: {androidAccessibility: {textRegex: a}}}\n    then: [{pressBack: {}, hideKeyboard: {}}]\n    else: tap the close button\n",
        [
            f"{P}:8:20: {K}.then[0]: expected one tool call '<tool>: {{...}}', found 2 keys",
            f"{P}:9:19: {K}.else: expected a list of tool calls, found a string",
        ],
        id="bad-branch-items",
    ),
    pytest.param(
        "- runIf:\n",
        [f"{P}:6:11: {K}: runIf needs 'condition' and 'then'"],
        id="no-arguments",
    ),
    pytest.param(
        "- runIf:\n    condition: {selector: {androidAccessibility: {textRegex: a}}}\n    then:\n      - runIf:\n          condition: {selector: {androidAccessibility: {textRegex: b}}}\n          then:\n            - runIf:\n                condition: {selector: {androidAccessibility: {textRegex: c}}}\n                then: [{pressBack: {}}]\n",
        [f"{P}:12:23: {K}.then[0].runIf.then[0].runIf: runIf nested more than 2 levels deep"],
        id="depth-three",
    ),
]


def indent(block: str) -> str:
    return "".join(f"        {line}\n" for line in block.splitlines())


@pytest.mark.parametrize(("item", "expected"), MALFORMED)
def test_malformed_trees_are_rejected_with_located_messages(
    compact_ws: Path, item: str, expected: list[str]
) -> None:
    write_tree(compact_ws, {P: HEAD + indent(item)})
    report = run_check(find_workspace(compact_ws, explicit=True), CheckOptions(typecheck=False))
    found = [f for f in report.findings if f.kind == "runif"]
    assert [f.text for f in found] == expected
    assert all(f.fatal and f.code.startswith("runif") for f in found)
    assert report.exit_code == 1


def test_depth_two_is_accepted() -> None:
    text = HEAD + indent(
        "- runIf:\n    condition: {selector: {androidAccessibility: {textRegex: a}}}\n    then:\n"
        "      - runIf:\n          condition: {tool: {assertVisibleWithText: {text: b}}}\n"
        "          then: [{pressBack: {}}]\n          else: []\n"
    )
    trail = parse_trail(P, text).trail
    assert trail is not None
    [(_, _, call)] = list(trail.calls())
    tree, findings = parse_runif(call, P)
    assert findings == []
    assert tree is not None
    assert [b.position for b in tree.calls()] == [
        "runIf.then[0]",
        "runIf.then[0] › runIf.condition",
        "runIf.then[0] › runIf.then[0]",
    ]


BRANCH = (
    "        - runIf:\n"
    "            condition:\n"
    "              selector: {androidAccessibility: {textRegex: 'Not now'}}\n"
    "            then:\n"
    "              - tapOnElementBySelector: {nodeSelector: {androidAccessibility: {textRegex: Not now}}}\n"
)


def test_a_branch_repeated_in_three_trails_is_one_warning_listing_every_place(
    compact_ws: Path,
) -> None:
    files = {f"trailmaps/app/trails/t{i}.trail.yaml": HEAD + BRANCH for i in range(3)}
    # Written differently, the same branch: flow style and other quotes.
    files["trailmaps/app/trails/t2.trail.yaml"] = HEAD + (
        '        - runIf: {condition: {selector: {androidAccessibility: {textRegex: "Not now"}}},\n'
        "                  then: [{tapOnElementBySelector: {nodeSelector: {androidAccessibility: {textRegex: 'Not now'}}}}]}\n"
    )
    files["trailmaps/app/trails/other.trail.yaml"] = HEAD + BRANCH.replace("Not now", "Later")
    write_tree(compact_ws, files)
    report = run_check(find_workspace(compact_ws, explicit=True), CheckOptions(typecheck=False))
    warnings = [f for f in report.findings if f.code == "runif-repeated"]
    assert [w.text for w in warnings] == [
        "trailmaps/app/trails/t0.trail.yaml:6:11: the same runIf branch is recorded in 3 trails "
        "(trailmaps/app/trails/t0.trail.yaml:6:11, trailmaps/app/trails/t1.trail.yaml:6:11, "
        "trailmaps/app/trails/t2.trail.yaml:6:11); a named tool would say it once"
    ]
    assert report.exit_code == 0
    # From the state on a second run (nothing re-parsed), the same warning.
    again = run_check(find_workspace(compact_ws, explicit=True), CheckOptions(typecheck=False))
    assert [f.text for f in again.findings if f.code == "runif-repeated"] == [
        w.text for w in warnings
    ]


def test_a_call_inside_a_tree_needs_a_tool_name_as_a_recorded_call_does() -> None:
    # The same rule and message as the parse gate's for a top-level `"": {}` call.
    text = HEAD + indent(
        '- runIf:\n    condition: {tool: {"": {}}}\n    then: [{"": {}}]\n'
        "    else:\n      - ~: {}\n      - pressBack: {}\n"
    )
    trail = parse_trail(P, text).trail
    assert trail is not None
    [(_, _, call)] = list(trail.calls())
    tree, findings = parse_runif(call, P)
    assert tree is None
    assert [f.text for f in findings] == [
        f"{P}:7:32: {K}.condition.tool: a tool name must not be empty",
        f"{P}:8:21: {K}.then[0]: a tool name must not be empty",
        f"{P}:10:17: {K}.else[0]: a tool name must not be empty",
    ]
    assert {f.code for f in findings} == {"runif-branch"}
    top = parse_trail(P, HEAD + indent('- "": {}\n'))
    assert [f.message for f in top.findings] == ["a tool name must not be empty"]


# Every condition shape upstream can record, and ours: (condition, the condition call's name,
# its arguments as data, the line:column its name is reported at).
SHAPES = [
    pytest.param(
        "{selector: {androidAccessibility: {textRegex: a}}}", None, None, None, id="selector"
    ),
    pytest.param("{tool: pressBack}", "pressBack", None, (7, 31), id="by-name"),
    pytest.param(
        "{tool: 'pressBack', args: ~}", "pressBack", None, (7, 31), id="by-name-null-args"
    ),
    pytest.param(
        "{tool: assertVisibleWithText, args: {text: Sign in}}",
        "assertVisibleWithText",
        {"text": "Sign in"},
        (7, 31),
        id="by-name-with-args",
    ),
    pytest.param(
        "{tool: {assertVisibleWithText: {text: Sign in}}}",
        "assertVisibleWithText",
        {"text": "Sign in"},
        (7, 32),
        id="nested",
    ),
]


@pytest.mark.parametrize(("condition", "name", "args", "at"), SHAPES)
def test_every_condition_shape_is_accepted(
    condition: str, name: str | None, args: object, at: tuple[int, int] | None
) -> None:
    text = HEAD + indent(f"- runIf:\n    condition: {condition}\n    then: [{{pressBack: {{}}}}]\n")
    trail = parse_trail(P, text).trail
    assert trail is not None
    [(_, _, call)] = list(trail.calls())
    tree, findings = parse_runif(call, P)
    assert findings == []
    assert tree is not None
    if name is None:
        assert tree.selector is not None
        assert tree.condition_tool is None
        return
    assert tree.condition_tool is not None
    inner = tree.condition_tool.call
    assert inner.name == name
    assert (inner.args.to_python() if inner.args is not None else None) == args
    assert (inner.line, inner.column) == at


def test_a_key_beside_the_condition_is_a_warning_not_an_error(compact_ws: Path) -> None:
    # Upstream's condition schema ({selector} | {tool}, no closed shape) forbids no sibling
    # key: one is not fatal, but replay ignores it, so the check says so, at the key.
    item = (
        "- runIf:\n    condition:\n      tool: assertVisibleWithText\n      arg: {text: a}\n"
        "      timeoutMs: 500\n    then: [{pressBack: {}}]\n"
        "- runIf:\n    condition:\n      selector: {androidAccessibility: {textRegex: a}}\n"
        "      args: {text: a}\n    then: [{pressBack: {}}]\n"
    )
    write_tree(compact_ws, {P: HEAD + indent(item)})
    report = run_check(find_workspace(compact_ws, explicit=True), CheckOptions(typecheck=False))
    found = [f for f in report.findings if f.code == "runif-ignored-key"]
    assert [f.text for f in found] == [
        f"{P}:9:15: {K}.condition: 'arg' is ignored (did you mean 'args'?): a condition with "
        "'tool' reads 'tool' and its 'args'",
        f"{P}:10:15: {K}.condition: 'timeoutMs' is ignored: a condition with 'tool' reads "
        "'tool' and its 'args'",
        f"{P}:15:15: trail[0].recording.android[1].runIf.condition: 'args' is ignored: a "
        "condition with 'selector' reads only its 'selector'",
    ]
    assert not any(f.fatal for f in found)
    assert [f for f in report.findings if f.fatal] == []
    assert report.exit_code == 0


OWN_RUNIF = """\
id: runIf
description: Dismiss a prompt by the text of its button.
parameters:
  - name: button
    type: string
tools:
  - tapOnElementWithText:
      text: "{{params.button}}"
"""


def test_a_trailmap_that_ships_its_own_runif_replaces_ours_and_a_change_of_owner_is_seen(
    compact_ws: Path,
) -> None:
    # The record of an unchanged trail is reused from the state: it must not keep the verdict
    # of the other runIf's grammar.
    write_tree(compact_ws, {P: HEAD + indent("- runIf: {button: Not now}\n")})
    ws = find_workspace(compact_ws, explicit=True)
    ours = run_check(ws, CheckOptions(typecheck=False))
    assert [f.text for f in ours.findings if f.fatal] == [
        f"{P}:6:11: {K}: missing 'condition' (a selector or a tool call)",
        f"{P}:6:11: {K}: missing 'then' (the calls to run when the condition holds)",
        f"{P}:6:19: {K}: unknown key 'button'; runIf takes condition, then and else",
    ]
    tool = compact_ws / "trailmaps/app/tools/runIf.tool.yaml"
    write_tree(compact_ws, {"trailmaps/app/tools/runIf.tool.yaml": OWN_RUNIF})
    shipped = run_check(ws, CheckOptions(typecheck=False))
    assert [f.text for f in shipped.findings if f.fatal] == []
    assert shipped.exit_code == 0
    tool.unlink()
    again = run_check(ws, CheckOptions(typecheck=False))
    assert [f.text for f in again.findings if f.fatal] == [f.text for f in ours.findings if f.fatal]
