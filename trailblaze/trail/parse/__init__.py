"""The parse gate: trail text to `Trail` records, strictly, with located findings.

Format detection is by the document's root: a mapping is the unified format (`unified`), a list
is the legacy format (`legacy`). Which keys each mapping of a trail accepts is declared once, in
`trailblaze.trail.grammar`. Strict mode (the default everywhere) rejects every unknown or mis-nested
key and duplicate keys, with a "did you mean". Tool arguments are not judged here: which tools
exist and what they accept depends on the trail's trailmap, and the type gate checks them
against that trailmap's surface. Lenient mode exists only as an explicit opt-in; it keeps what
the reference's runtime accepts and reports each dropped key as a warning instead of silently
forgetting it.

The modules: `reader` (located values and findings), `calls` (recorded tool calls), `config`
(the `config:` block and its declared arguments), `step` (what both formats' steps share),
`unified` and `legacy` (the two formats); this module dispatches and checks `{{args.x}}` tokens.
"""

from __future__ import annotations

from trailblaze import codes
from trailblaze.finding import Finding
from trailblaze.trail.argtokens import check_tokens, offset_position
from trailblaze.trail.model import ParseOutcome, Trail
from trailblaze.trail.parse.legacy import read_legacy
from trailblaze.trail.parse.reader import Reader, Reject
from trailblaze.trail.parse.unified import read_unified
from trailblaze.yaml.node import YamlError, YMap, YNode, YScalar, YSeq, kind_of, load

__all__ = ["ParseOutcome", "file_error", "parse_trail"]


def parse_trail(
    path: str,
    text: str,
    *,
    strict: bool = True,
    pure: bool = False,
) -> ParseOutcome:
    """Parse one trail document. `path` is the workspace-relative name used in findings.

    `pure` forces ruamel.yaml's pure-Python composer (the parse benchmark compares the two).
    """
    try:
        root = load(text, pure=pure)
    except YamlError as exc:
        return file_error(path, exc)
    reader = Reader(path, strict=strict)
    trail = _document(reader, root)
    if trail is not None and not reader.rejected and _may_hold_tokens(text):
        _check_tokens(reader, trail, root)
    rejected = reader.rejected or trail is None
    return ParseOutcome(trail=None if rejected else trail, findings=tuple(reader.findings))


def file_error(path: str, error: YamlError) -> ParseOutcome:
    """The outcome for a file that could not be read (I/O, encoding, size) or is not YAML."""
    finding = Finding(
        kind="parse",
        path=path,
        line=error.line,
        column=error.column,
        message=error.message,
        code=codes.YAML,
    )
    return ParseOutcome(trail=None, findings=(finding,))


def _document(reader: Reader, root: YNode | None) -> Trail | None:
    if root is None:
        reader.findings.append(
            reader.finding(1, 1, key_path="", message="empty trail file", code=codes.EMPTY)
        )
        reader.rejected = True
        return None
    try:
        if isinstance(root, YMap):
            return read_unified(reader, root)
        if isinstance(root, YSeq):
            return read_legacy(reader, root)
        reader.error(
            root,
            "",
            f"a trail is a mapping (config/trailhead/trail) or a legacy list, "
            f"found {kind_of(root)}",
            code=codes.WRONG_TYPE,
        )
    except Reject:
        pass
    return None


def _may_hold_tokens(text: str) -> bool:
    """False when no scalar of the document can contain `{{` or `${`.

    Without a backslash (an escape, or an escaped line break joining two lines) a scalar holds
    those two characters only where the document does; most trails have none, and skipping
    the walk over every scalar saves a tenth of the parse.
    """
    return "{{" in text or "${" in text or "\\" in text


def _check_tokens(reader: Reader, trail: Trail, root: YNode | None) -> None:
    """Check `{{args.x}}` tokens everywhere outside `config` (they do not reject the trail)."""
    declared = trail.config.arg_names
    for scalar in _token_scalars(root):
        if not isinstance(scalar.value, str):
            continue
        for problem in check_tokens(scalar.text, declared, trail.config.has_args_block):
            line, column = offset_position(
                scalar.text, problem.offset, scalar.line, scalar.column, scalar.style
            )
            reader.findings.append(
                Finding(
                    kind="parse",
                    path=reader.path,
                    line=line,
                    column=column,
                    message=problem.message,
                    code=problem.code,
                )
            )


def _token_scalars(root: YNode | None) -> list[YScalar]:
    """The scalars outside `config` whose text has a `{`, depth first (as `model.scalars`)."""
    out: list[YScalar] = []
    if isinstance(root, YMap):
        _braced([value for key, value in root if key.text != "config"], out)
    elif isinstance(root, YSeq):
        _braced([i for i in root.items if isinstance(i, YMap) and i.keys() != ["config"]], out)
    return out


def _braced(nodes: list[YNode] | tuple[YNode, ...], out: list[YScalar]) -> None:
    # Every scalar of a trail with tokens passes here: no generator, no call per scalar.
    for node in nodes:
        if type(node) is YScalar:
            if "{" in node.text:
                out.append(node)
        elif type(node) is YMap:
            _braced([value for _, value in node.items], out)
        elif type(node) is YSeq:
            _braced(node.items, out)
