"""The line-by-line composer gives exactly the C composer's tree, or leaves the document to it.

Each document is composed both ways in this process: `quick.compose` and the usual path
(ruamel's C composer and our converter, not the lean pass). Where the quick one answers, the
trees must be equal (values, texts, quote styles, lines, columns); where the usual path refuses
a document, the quick one must not answer.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import run_python
from trailblaze.yaml import node, quick
from trailblaze.yaml.node import Unsupported, YamlError, YNode

DATA = Path(__file__).resolve().parents[1] / "data"


def usual(text: str) -> YNode | str | None:
    """What the C composer and our converter give, or "error"."""
    node._check_depth(text)
    try:
        composed = node._compose(text, False)
        return None if composed is None else node._Converter().convert(composed)
    except Exception:
        return "error"


def quickly(text: str) -> YNode | str | None:
    try:
        return quick.compose(text)
    except Unsupported:
        return "unsupported"


def same_or_left(text: str) -> bool:
    """True when the quick composer answered (and its answer is the usual one)."""
    got = quickly(text)
    if got == "unsupported":
        return False
    assert usual(text) == got, text
    return True


TAKEN = [
    "a: 1\nb: [x, 'y', \"z\"]\nc: {d: null, e: ~, f: 007, h: -1.5e3, i: .inf}\ng: 7:30\n",
    "- tapOn:\n    selector: {text: OK}\n- inputText:\n    text: '5000'\n",
    "",
    "# only a comment\n\n   \n",
    "[]\n",
    "{}\n",
    "plain\n",
    "a:\n  - - - deep\n",
    "t: true\nf: False\nn: NULL\nempty:\nhex: 0x1F\noct: 0o17\nnan: .NaN\n",
    # Empty values sit just after their indicator, comments or spaces after it or not.
    "a:\nb: 1\n",
    "a:   \n  # a comment, indented\nb: 1\n",
    "a: # a comment\nb:\n",
    "- \n- x\n-\n- # note\n",
    # A list at its key's indent, in a list item, nested on one line.
    "k:\n- a\n- b\nz: 1\n",
    "- key:\n  - a\n  - b\n  other: c\n",
    "- - x\n  - y\n- z\n",
    "-   a: 1\n    b: 2\n",
    "  k: v\n  j: w\n",
    "a:\n    deep: 1\n    deeper:\n        x: y\nb: 2\n",
    # Quotes and escapes.
    "k: 'it''s'\nj: ''\nh: \"\"\n",
    'k: "a\\tb\\u00e9\\x41\\U0001F600\\\\\\"\\/"\n'.replace("\\/", "\\n"),
    "k: \"a 'b' c\"\nj: 'a \"b\" c'\n",
    "k: 'a: b # c'   # a comment\n",
    # Plain scalars: colons and hashes that are not indicators, dashes, braces inside.
    "k: a:b\nj: a#b\nh: a #c\ng: http://x.org/a?b=c#d\n",
    "k: -5\nj: -x\nh: --y\ni: -.5\n",
    "k: Scroll to plan ({in braces}), [sic]\n",
    "k: a 'b' \"c\"\n",
    # Unicode: columns count characters.
    "k: [Ünï, b]\nj: [😀, b]\n",
    "k: Ünïcödé façade – ñ\nj: 😀😀 x\n",
    # Flow collections.
    "k: [a, ]\nj: [a, {b: c}]\nh: {a: [1]}\ng: []  # x\nf: ['a', \"b\"]\n",
    "k: {a: 1, b: 'x y', c: [d, e]}\n",
    "k:\n  [1, 2]\n",
    # Windows line ends.
    "a: 1\r\nb:\r\n  - x\r\n",
    # Keys that resolve to something other than text, as the usual path resolves them.
    "1: one\ntrue: yes\nnull: x\n",
]


@pytest.mark.parametrize("text", TAKEN)
def test_the_common_shapes_are_composed_as_the_c_composer_composes_them(text: str) -> None:
    assert same_or_left(text), f"left to the C composer: {text!r}"


LEFT = [
    "key: |\n  block\n  text\n",
    "key: >-\n  folded\n",
    "k: a plain scalar\n  over two lines\n",
    "k: 'quoted\n  over two lines'\n",
    'k: "quoted\n  over two lines"\n',
    "'quoted key': 1\n",
    "ü: a key that is not a name\n",
    '"<<": merged-looking but quoted\n',
    "a: &x 1\nb: *x\n",
    "x: !tag 5\n",
    "? complex\n: key\n",
    "--- \na: 1\n",
    "%YAML 1.2\n---\na: 1\n",
    "a: 1\na: 2\n",
    "a:\tb\n",
    "a: b\rc: d\n",
    "k: {a: }\n",
    "k: [a, b: c]\n",
    "k: {a:1}\n",
    "k: [unclosed\n",
    "k: 'unclosed\n",
    'k: "bad \\q escape"\n',
    'k: "\\ud800"\n',
    "a: b: c\n",
    "a: b:\n",
    "a: 1\n b: 2\n",
    "- a\n b\n",
    "a:\n  b: 1\n c: 2\n",
    "- a\nb: 1\n",
    "k: `reserved`\n",
    "k: @reserved\n",
    "k: \x85next\n",
    "\ufeffk: v\n",
]


@pytest.mark.parametrize("text", LEFT)
def test_what_is_not_the_common_shape_is_left_to_the_c_composer(text: str) -> None:
    assert quickly(text) == "unsupported", text


def test_every_document_of_the_test_data_composes_alike() -> None:
    files = sorted(p for p in DATA.rglob("*") if p.suffix in (".yaml", ".yml") and p.is_file())
    assert len(files) > 500
    taken = 0
    for path in files:
        try:
            text = node.decode(path.read_bytes())
        except YamlError:
            continue
        taken += same_or_left(text)
    # Most real trails are the common shape (the rest: block scalars, scalars over lines).
    assert taken > len(files) * 0.8


def test_every_trail_the_bench_generates_is_the_common_shape(tmp_path: Path) -> None:
    from bench.generate import Spec, generate  # noqa: PLC0415

    manifest = generate(tmp_path / "ws", Spec(trails=200, trailmaps=2))
    assert len(manifest.trails) == 200
    for rel in manifest.trails:
        assert same_or_left(node.decode((tmp_path / "ws" / rel).read_bytes())), rel


# -- generated documents ----------------------------------------------------------------------

_CHARS = st.sampled_from(
    list("abcxyz 0129.-_ü😀" * 6) + list(":#'\"{}[],&*!|>?%@`~\\/") + ["\t", "\r", "\u2028"]
)
"""Mostly letters, digits and spaces (documents the C composer takes), sometimes an indicator."""
_WORDS = st.text(_CHARS, min_size=0, max_size=8)
_FLOW_WORDS = st.lists(
    st.sampled_from([*list("abc 019.-_ü,'\""), "a: b", "{}", "[]", "?"]), max_size=6
).map("".join)
_NAMES = st.sampled_from(["a", "b", "text", "nodeSelector", "x1", "com.ex/y", "t-u", "1", "true"])


def _scalar(word: str, how: int) -> str:
    if how == 0:
        return word
    if how == 1:
        return "'" + word.replace("'", "''") + "'"
    if how == 2:
        return '"' + word.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if how == 3:
        return "[" + ", ".join(word.split(",")) + "]"
    return "{" + ", ".join(f"k{i}: {w}" for i, w in enumerate(word.split(",")) if w) + "}"


@st.composite
def _block(draw: st.DrawFn, depth: int = 0, indent: int = 0) -> list[str]:
    pad = " " * indent
    lines: list[str] = []
    as_list = draw(st.booleans())
    size = draw(st.integers(1, 3))
    names = draw(st.lists(_NAMES, min_size=size, max_size=size, unique=True))
    for name in names:
        kind = draw(st.integers(0, 3 if depth < 3 else 1))
        head = f"{pad}- " if as_list else f"{pad}{name}:"
        if kind <= 1:
            how = draw(st.integers(0, 4))
            word = draw(_WORDS if how < 3 else _FLOW_WORDS)
            value = _scalar(word, how)
            gap = "" if not value else (" " if as_list else draw(st.sampled_from([" ", "  "])))
            comment = draw(st.sampled_from(["", "", "", " # note", "  #", "#x"]))
            lines.append(f"{head}{gap}{value}{comment}")
        elif kind == 2:
            lines.append(head.rstrip() if not as_list else f"{pad}-")
            step = draw(st.sampled_from([0, 1, 2, 4])) if not as_list else draw(st.integers(1, 4))
            lines += draw(_block(depth + 1, indent + step))
        elif as_list:
            inner = draw(_block(depth + 1, indent + 2))
            inner[0] = f"{pad}- " + inner[0][indent + 2 :]
            lines += inner
        else:
            lines.append(head)
            lines += draw(_block(depth + 1, indent + draw(st.integers(1, 3))))
        if draw(st.integers(0, 5)) == 0:
            lines.append(draw(st.sampled_from(["", "   ", "# c", f"{pad}  # c"])))
    return lines


@st.composite
def _documents(draw: st.DrawFn) -> str:
    lines = draw(_block())
    if draw(st.integers(0, 4)) == 0 and lines:
        # A small corruption: what the usual path may refuse, the quick one must not take.
        at = draw(st.integers(0, len(lines) - 1))
        line = lines[at]
        cut = draw(st.integers(0, len(line)))
        lines[at] = line[:cut] + draw(st.sampled_from([" ", "", ":", "- ", "'", "\t"])) + line[cut:]
    return "\n".join(lines) + draw(st.sampled_from(["\n", "", "\n\n"]))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_documents())
def test_generated_documents_compose_alike_or_are_left(text: str) -> None:
    got = quickly(text)
    if got == "unsupported":
        return
    assert usual(text) == got, text


def test_a_document_of_the_common_shape_is_read_without_ruamel() -> None:
    """`node.load` reads the common shape itself in any process: ruamel.yaml (some 12 ms to
    import) is imported for the first document it leaves, and then reads it as it always did."""
    script = (
        "import sys\n"
        "from trailblaze.yaml import node\n"
        "common = node.load('trail:\\n  - step: s\\n    recording: {a: [1, x]}\\n')\n"
        "print('ruamel.yaml' in sys.modules)\n"
        "anchored = node.load('a: &x 1\\nb: *x\\n')\n"
        "print('ruamel.yaml' in sys.modules)\n"
        "print(repr(common.get('trail').items[0].get('step')), repr(anchored.get('b')))\n"
        "try:\n"
        "    node.load('a: [1\\n')\n"
        "except node.YamlError as exc:\n"
        "    print(exc.line, exc.column, exc.message)\n"
    )
    done = run_python(Path.cwd(), "-c", script)
    assert done.returncode == 0, done.stderr
    out = done.stdout.splitlines()
    assert out[:2] == ["False", "True"]
    assert out[2] == (
        "YScalar(value='s', text='s', style='', line=2, column=11) "
        "YScalar(value=1, text='1', style='', line=1, column=4)"
    )
    assert out[3].startswith("2 1 invalid YAML: ")
