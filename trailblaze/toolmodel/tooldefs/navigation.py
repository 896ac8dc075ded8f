"""The navigation metadata of a tool file: a `shortcut:` block (an edge from one waypoint to
another) or a `trailhead:` block (a bootstrap that lands on a waypoint from any state).

The rules are the reference loader's (`ToolYamlConfig.validate`): at most one of the two blocks;
a shortcut names a `from` and a `to`; a trailhead names its destination (`to:`, or per platform
in the newer `toByPlatform:`) or says it has none fixed (`dynamic: true`), never both; every
waypoint it names has the waypoint id shape (two or more non-blank segments separated by `/`);
a shortcut lives in a `*.shortcut.yaml`, a trailhead in a `*.trailhead.yaml`. A key the
reference does not know inside a block is a warning: its decoder drops it.
"""

from __future__ import annotations

from trailblaze import codes
from trailblaze.finding import did_you_mean, join_key
from trailblaze.toolmodel.tooldefs.loader import Loader
from trailblaze.yaml.node import YMap, YNode, YScalar

SHORTCUT_KEYS = ("from", "to", "variant")
TRAILHEAD_KEYS = ("to", "toByPlatform", "dynamic")
WAYPOINT_ID_HINT = (
    "waypoint ids are slash-namespaced with at least two non-blank segments "
    "(e.g. 'clock/android/alarm_tab')"
)


def _say(  # noqa: PLR0917 - one call shape for both severities
    loader: Loader, fatal: bool, rel: str, at: YNode, key_path: str, message: str, *, code: str
) -> None:
    """A finding: fatal in a tool file, a warning in a scripted tool's own `trailhead` (the
    reference drops such a trailhead with a warning; the tool itself still loads)."""
    if fatal:
        loader.error(rel, at, key_path, message, code=code)
    else:
        loader.warn(
            rel, at, key_path, f"{message} (the trailhead is dropped, the tool kept)", code=code
        )


def waypoint_id_problem(value: str) -> str | None:
    """What is wrong with `value` as a waypoint id the reference can match, or None."""
    segments = value.split("/")
    if len(segments) >= 2 and all(s.strip() for s in segments):
        return None
    return f"'{value}' is not a waypoint id: {WAYPOINT_ID_HINT}"


def present(root: YMap, key: str) -> YNode | None:
    """The value of `key` unless it is missing or null (the reference reads null as absent)."""
    node = root.get(key)
    if node is None or (isinstance(node, YScalar) and node.value is None):
        return None
    return node


def check_navigation(loader: Loader, rel: str, root: YMap) -> tuple[bool, str | None]:
    """Validate the file's `shortcut:`/`trailhead:` blocks; (valid, the trailhead's `to`)."""
    shortcut = present(root, "shortcut")
    trailhead = present(root, "trailhead")
    ok = True
    if shortcut is not None and trailhead is not None:
        key = root.key_node("trailhead")
        assert key is not None
        loader.error(
            rel,
            key,
            "",
            "a tool is a shortcut (gated on the current waypoint) or a trailhead (always "
            "available), not both: keep one of the 'shortcut' and 'trailhead' blocks",
            code=codes.SHORTCUT_AND_TRAILHEAD,
        )
        ok = False
    for block, suffix in (("shortcut", ".shortcut.yaml"), ("trailhead", ".trailhead.yaml")):
        if present(root, block) is not None and not rel.endswith(suffix):
            key = root.key_node(block)
            assert key is not None
            loader.error(
                rel,
                key,
                "",
                f"a '{block}' block belongs in a file named '*{suffix}' (in the trailmap's "
                f"'{block}s/'): the reference refuses it here",
                code=codes.NAVIGATION_SUFFIX,
            )
            ok = False
    to = None
    if isinstance(shortcut, YMap):
        ok = _shortcut(loader, rel, shortcut) and ok
    if isinstance(trailhead, YMap):
        valid, to = _trailhead(loader, rel, trailhead)
        ok = valid and ok
    return ok, to


def _unknown_keys(loader: Loader, rel: str, block: YMap, name: str, known: tuple[str, ...]) -> None:
    for key, _ in block:
        if key.text not in known:
            loader.warn(
                rel,
                key,
                name,
                f"unknown key '{key.text}'{did_you_mean(key.text, known)}: the reference "
                f"ignores it (a '{name}' block takes {', '.join(known)})",
                code=codes.UNKNOWN_KEY,
            )


def _waypoint(loader: Loader, rel: str, node: YNode, key_path: str, fatal: bool = True) -> bool:
    """Check one waypoint reference; True when it is a valid id."""
    if not isinstance(node, YScalar) or node.value is None:
        _say(loader, fatal, rel, node, key_path, "expected a waypoint id", code=codes.WRONG_TYPE)
        return False
    problem = waypoint_id_problem(node.text)
    if problem is None:
        return True
    _say(loader, fatal, rel, node, key_path, problem, code=codes.WAYPOINT_ID)
    return False


def _shortcut(loader: Loader, rel: str, block: YMap) -> bool:
    _unknown_keys(loader, rel, block, "shortcut", SHORTCUT_KEYS)
    ok = True
    for key in ("from", "to"):
        node = present(block, key)
        if node is None:
            loader.error(
                rel,
                block,
                "shortcut",
                f"a shortcut needs '{key}:', the waypoint it {'starts' if key == 'from' else 'lands'} on",
                code=codes.MISSING_KEY,
            )
            ok = False
            continue
        ok = _waypoint(loader, rel, node, join_key("shortcut", key)) and ok
    variant = present(block, "variant")
    if variant is not None and (not isinstance(variant, YScalar) or not variant.text.strip()):
        loader.error(
            rel,
            variant,
            "shortcut.variant",
            "'variant' is present but blank: omit it, or name what tells this shortcut "
            "apart from the others of the same 'from' and 'to'",
            code=codes.INVALID_VALUE,
        )
        ok = False
    return ok


def _trailhead(
    loader: Loader, rel: str, block: YMap, fatal: bool = True, prefix: str = "trailhead"
) -> tuple[bool, str | None]:
    """Check a trailhead block; (valid, its `to`). `prefix` is its key path in the file."""
    _unknown_keys(loader, rel, block, prefix, TRAILHEAD_KEYS)
    ok = True
    dynamic_node = present(block, "dynamic")
    dynamic = False
    if dynamic_node is not None:
        if isinstance(dynamic_node, YScalar) and isinstance(dynamic_node.value, bool):
            dynamic = dynamic_node.value
        else:
            path = join_key(prefix, "dynamic")
            _say(
                loader,
                fatal,
                rel,
                dynamic_node,
                path,
                "expected true or false",
                code=codes.WRONG_TYPE,
            )
            return False, None
    to_node = present(block, "to")
    by_platform = present(block, "toByPlatform")
    to = None
    if dynamic:
        for key, node in (("to", to_node), ("toByPlatform", by_platform)):
            if node is not None:
                at = block.key_node(key)
                assert at is not None
                _say(
                    loader,
                    fatal,
                    rel,
                    at,
                    prefix,
                    f"'dynamic: true' says the destination varies by input, so the trailhead "
                    f"cannot also name one in '{key}': drop '{key}', or drop 'dynamic' and name "
                    f"the destination",
                    code=codes.TRAILHEAD_DESTINATION,
                )
                ok = False
        return ok, None
    if to_node is not None:
        if _waypoint(loader, rel, to_node, join_key(prefix, "to"), fatal):
            assert isinstance(to_node, YScalar)
            to = to_node.text
        else:
            ok = False
    destinations = 0
    if by_platform is not None:
        if not isinstance(by_platform, YMap):
            _say(
                loader,
                fatal,
                rel,
                by_platform,
                join_key(prefix, "toByPlatform"),
                "expected a mapping of platform to waypoint id",
                code=codes.WRONG_TYPE,
            )
            return False, to
        for platform, value in by_platform:
            destinations += 1
            key_path = join_key(join_key(prefix, "toByPlatform"), platform.text)
            ok = _waypoint(loader, rel, value, key_path, fatal) and ok
    if to_node is None and destinations == 0:
        _say(
            loader,
            fatal,
            rel,
            block,
            prefix,
            "a trailhead needs the waypoint it lands on ('to:', or 'toByPlatform:'), or "
            "'dynamic: true' when its destination varies by input",
            code=codes.TRAILHEAD_DESTINATION,
        )
        ok = False
    return ok, to


def check_spec_trailhead(loader: Loader, rel: str, root: YMap) -> str | None:
    """A scripted tool's own `trailhead` (its descriptor's, as the SDK's `TrailheadSpec`): the
    same rules, each a warning, as the reference drops a bad one and keeps the tool. Its `to`
    when valid."""
    block = present(root, "trailhead")
    if block is None:
        return None
    if not isinstance(block, YMap):
        _say(
            loader,
            False,
            rel,
            block,
            "trailhead",
            "expected a mapping ({to: <waypoint id>} or {dynamic: true})",
            code=codes.WRONG_TYPE,
        )
        return None
    ok, to = _trailhead(loader, rel, block, fatal=False)
    return to if ok else None
