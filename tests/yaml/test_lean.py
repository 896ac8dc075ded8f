"""The one-pass composer of the parse workers gives exactly what `load` gives, or leaves it to it.

Each document is loaded in a fresh process (`lean.enable` changes the process for good, as a
worker's start does), first the usual way and then with the lean pass enabled; the trees, or
the errors with their positions, must be the same.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

DATA = Path(__file__).resolve().parents[1] / "data"

_SCRIPT = r"""
import json, sys
from trailblaze.yaml import lean, node, quick

def outcome(text):
    try:
        tree = node.load(text)
    except node.YamlError as exc:
        return ["error", exc.message, exc.line, exc.column]
    return ["tree", repr(tree)]

def direct(text):
    try:
        return repr(lean.compose(text))
    except node.Unsupported:
        return "unsupported"
    except Exception as exc:
        return "raised " + type(exc).__name__

texts, bound = json.load(sys.stdin)
if bound:  # a small node bound, so that the test composes small documents
    node.MAX_NODES = lean.MAX_NODES = quick.MAX_NODES = bound
usual = [outcome(t) for t in texts]
assert lean.enable()
leaned = [outcome(t) for t in texts]
ways = [direct(t) for t in texts]
# The C loader of the same process builds ruamel's own nodes again after a lean pass, even
# after one that gave up midway.
from ruamel.yaml import YAML
composed = YAML(typ="safe", pure=False).compose("a: [1, {b: c}]\n")
json.dump({"usual": usual, "lean": leaned, "ways": ways, "after": type(composed).__name__}, sys.stdout)
"""


def run_both(texts: list[str], bound: int = 0) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", _SCRIPT],
        input=json.dumps([texts, bound]),
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, Any] = json.loads(done.stdout)
    assert result["after"] == "MappingNode"
    return result


ORDINARY = [
    "a: 1\nb: [x, 'y', \"z\"]\nc: {d: null, e: ~, f: 007, h: -1.5e3, i: .inf}\ng: 7:30\n",
    "- tapOn:\n    selector: {text: OK}\n- inputText:\n    text: '5000'\n",
    "key: |\n  block\n  text\nother: >-\n  folded\n",
    "'quoted key': 1\n\"<<\": merged-looking but quoted\n",
    "x: ! 5\ny: ! {a: b}\nz: ! [1]\n",  # the non-specific tag: a string, a mapping, a list
    "",
    "# only a comment\n",
    "[]\n",
    "{}\n",
    "plain\n",
    "a:\n  - - - deep\n",
    "t: true\nf: False\nn: NULL\nempty:\nhex: 0x1F\noct: 0o17\nnan: .NaN\n",
    "a: 'x &y'\n",  # looks like an anchor, is not one
]

GIVEN_BACK = [
    "a: !!str 5\n",  # explicit tags
    "a: !!int x\n",
    "a: !custom 5\n",
    "a: !!map {b: c}\n",
    "a: !!seq [1]\n",
    "a: !!map [1]\n",
    "a: &x 1\nb: *x\n",  # anchors and aliases
    "- [&x 1, *x]\n",
    "{a: &x 1,b: *x}\n",
    "a:\n  &k b: 1\n",
    "&r\na: 1\n",
    "a: 1\na: 2\n",  # a duplicate key
    "a:\n  b: 1\n  c: 2\n  b: 3\n",
    "<<: {a: 1}\n",  # a merge key
    "? [a, b]\n: c\n",  # a list as a key
    "? {a: b}\n: c\n",
]

REFUSED = [
    "a: [1, 2\n",  # the C parser's error, as before
    "a: b: c\n",
    "a: 1\n---\nb: 2\n",
    "at: {t: 08:45:09Z}\n",  # refused by libyaml, read by the pure parser
    "a: *nothing\n",
]


@pytest.mark.parametrize("group", ["ordinary", "given back", "refused"])
def test_the_lean_pass_gives_what_load_gives(group: str) -> None:
    texts = {"ordinary": ORDINARY, "given back": GIVEN_BACK, "refused": REFUSED}[group]
    result = run_both(texts)
    assert result["lean"] == result["usual"]
    if group == "ordinary":
        # Composed by the lean pass itself, not given back to the usual one.
        assert [
            w for w in result["ways"] if w in ("unsupported",) or str(w).startswith("raised")
        ] == []
    if group == "given back":
        assert result["ways"] == ["unsupported"] * len(texts)


def test_the_node_bound_holds_in_the_lean_pass() -> None:
    bound = 40
    at_bound = "[" + ",".join(["1"] * (bound - 1)) + "]\n"
    past_bound = "[" + ",".join(["1"] * bound) + "]\n"
    nested = "a:\n" + "".join(f"  k{i}: {{x: [1, 2]}}\n" for i in range(bound // 4)) + "b: 2\n"
    result = run_both([at_bound, past_bound, nested], bound)
    assert result["lean"] == result["usual"]
    assert result["usual"][0][0] == "tree"
    message = f"document expands to more than {bound} nodes (anchors and aliases?)"
    assert result["usual"][1] == ["error", message, 1, 80]
    assert result["usual"][2][:2] == ["error", message]
    assert result["ways"][0].startswith("YSeq(")
    assert result["ways"][1:] == ["unsupported", "unsupported"]


def test_every_trail_of_the_test_data_composes_alike() -> None:
    texts = [
        p.read_text("utf-8", errors="surrogateescape")
        for p in sorted(DATA.rglob("*.yaml"))
        if p.stat().st_size < 200_000
    ]
    assert len(texts) > 200
    result = run_both(texts)
    differ = [
        (texts[i][:200], u, v)
        for i, (u, v) in enumerate(zip(result["usual"], result["lean"], strict=True))
        if u != v
    ]
    assert differ == []


def test_a_c_extension_that_builds_nodes_otherwise_leaves_the_usual_path() -> None:
    # Another release of ruamel.yaml.clib might call its node classes with other arguments:
    # the probe at `enable` then fails, and documents are composed the usual way.
    script = (
        "from trailblaze.yaml import lean, node\n"
        "def other(tag, value, start_mark, end_mark, style=None, *, comment):\n"
        "    raise AssertionError('not reached')\n"
        "lean._scalar = other\n"
        "print(lean.enable(), len(node._LEAN), repr(node.load('a: [1, x]')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    assert done.stdout.split(" ", 2)[:2] == ["False", "0"]
    assert "YSeq(items=(YScalar(value=1," in done.stdout


def test_other_threads_compose_as_usual_while_the_lean_pass_runs() -> None:
    # The lean pass rebinds the C module's node classes for one document: a thread that used
    # the C composer meanwhile (at the tiniest switch interval, it gets the interpreter while
    # a lean node is built) would get lean nodes instead of ruamel's, or a lean pass ruamel's.
    script = (
        "import sys, threading\n"
        "from trailblaze.yaml import lean, node\n"
        "assert lean.enable()\n"
        "sys.setswitchinterval(1e-6)\n"
        "doc = ''.join(f'k{i}: [1, two, {{b: c}}]\\n' for i in range(80))\n"
        "want = repr(node.load(doc))\n"
        "wrong = []\n"
        "def usual():\n"
        "    for _ in range(300):\n"
        "        try:\n"
        "            kinds = {type(v).__name__ for _, v in node._compose(doc, False).value}\n"
        "        except Exception as exc:\n"
        "            kinds = {repr(exc)}\n"
        "        if kinds != {'SequenceNode'}:\n"
        "            wrong.append(kinds)\n"
        "def leaned():\n"
        "    for _ in range(300):\n"
        "        try:\n"
        "            if repr(node.load(doc)) != want:\n"
        "                wrong.append('lean')\n"
        "        except Exception as exc:\n"
        "            wrong.append(repr(exc))\n"
        "threads = [threading.Thread(target=f) for f in (usual, leaned, usual, leaned)]\n"
        "for t in threads: t.start()\n"
        "for t in threads: t.join()\n"
        "print(len(wrong), wrong[:3])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120
    )
    assert done.stdout.strip() == "0 []"
