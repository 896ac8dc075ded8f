"""A trail's `config:` block, in either format, and its declared arguments (`config.args`)."""

from __future__ import annotations

import contextlib

from trailblaze import codes
from trailblaze.finding import did_you_mean, join_key
from trailblaze.trail.argbind import coerce, malformed_arg_token, raw_value
from trailblaze.trail.argtokens import ARG_NAME
from trailblaze.trail.grammar import ARG_DECL, ARG_TYPES, SOURCE, Block
from trailblaze.trail.model import ArgDecl, TrailConfig
from trailblaze.trail.parse.reader import Reader, Reject
from trailblaze.yaml.node import YMap, YNode, YScalar, kind_of

Pairs = tuple[tuple[str, str], ...]


def read_config(reader: Reader, node: YNode, key_path: str, block: Block) -> TrailConfig:
    """A config mapping checked against `block` (the unified or the legacy config)."""
    try:
        cfg = reader.expect_map(node, key_path)
    except Reject:
        return TrailConfig()
    reader.unknown_keys(cfg, key_path, block)
    allowed = block.names

    def text(name: str) -> str | None:
        if name in allowed and (value := cfg.get(name)) is not None:
            return reader.text(value, join_key(key_path, name))
        return None

    # Each field read in turn, so that the findings come in this order.
    id_ = text("id")
    target = text("target")
    title = text("title")
    description = text("description")
    priority = text("priority")
    context = text("context")
    platform = text("platform")
    driver = text("driver")
    devices = _string_map(reader, cfg, "devices", key_path)
    memory = _string_map(reader, cfg, "memory", key_path)
    _string_map(reader, cfg, "metadata", key_path)
    skip: Pairs = ()
    skip_all = None
    if (skip_node := cfg.get("skip")) is not None:
        if "platform" in allowed and isinstance(skip_node, YScalar):
            if skip_node.value not in (None, False, ""):
                skip_all = skip_node.text
        else:
            skip = _string_map(reader, cfg, "skip", key_path)
    tags: tuple[str, ...] = ()
    if (tags_node := cfg.get("tags")) is not None:
        tag_path = join_key(key_path, "tags")
        with contextlib.suppress(Reject):
            items = reader.expect_list(tags_node, tag_path).items
            texts = (reader.text(v, join_key(tag_path, i)) for i, v in enumerate(items))
            tags = tuple(t for t in texts if t is not None)
    if (source := cfg.get("source")) is not None and "source" in allowed:
        source_path = join_key(key_path, "source")
        with contextlib.suppress(Reject):
            reader.unknown_keys(reader.expect_map(source, source_path), source_path, SOURCE)
    args: tuple[ArgDecl, ...] = ()
    if (args_node := cfg.get("args")) is not None:
        args = _arg_decls(reader, args_node, join_key(key_path, "args"))
    return TrailConfig(
        id=id_,
        target=target,
        title=title,
        description=description,
        priority=priority,
        context=context,
        platform=platform,
        driver=driver,
        devices=devices,
        skip=skip,
        skip_all=skip_all,
        tags=tags,
        memory=memory,
        args=args,
        has_args_block=args_node is not None,
        line=cfg.line,
        column=cfg.column,
    )


def _string_map(reader: Reader, cfg: YMap, name: str, key_path: str) -> Pairs:
    node = cfg.get(name)
    if node is None:
        return ()
    path = join_key(key_path, name)
    try:
        mapping = reader.expect_map(node, path)
    except Reject:
        return ()
    out: list[tuple[str, str]] = []
    for key, value in mapping:
        text = reader.text(value, join_key(path, key.text))
        out.append((key.text, text or ""))
    return tuple(out)


_BOOLEANS = {
    "true": True,
    "True": True,
    "TRUE": True,
    "false": False,
    "False": False,
    "FALSE": False,
}
"""The spellings of `required:` Trailblaze reads (quoted or not)."""


def _arg_decls(reader: Reader, node: YNode, key_path: str) -> tuple[ArgDecl, ...]:
    """`config.args` as Trailblaze's loader reads it (`TrailArgConfig`): what it refuses is a
    located error here, and nothing it accepts is."""
    if isinstance(node, YScalar) and node.is_null:
        return ()  # `args:` with nothing: no arguments, as Trailblaze reads it
    try:
        mapping = reader.expect_map(node, key_path)
    except Reject:
        return ()
    decls: list[ArgDecl] = []
    for key, value in mapping:
        name = key.text
        path = join_key(key_path, name)
        if not ARG_NAME.fullmatch(name):
            reader.error(
                key,
                key_path,
                f"argument name '{name}' must match [A-Za-z_][A-Za-z0-9_]* "
                f"(no dashes, dots or spaces), so that '{{{{args.<name>}}}}' can name it",
                code=codes.INVALID_VALUE,
            )
            continue
        decl = _arg_decl(reader, name, key, value, path)
        if decl is not None:
            decls.append(decl)
    return tuple(decls)


def _arg_decl(reader: Reader, name: str, key: YScalar, value: YNode, path: str) -> ArgDecl | None:
    arg_type, description, default, required = "string", None, None, None
    if isinstance(value, YScalar) and not value.is_null:
        arg_type = value.text  # the shorthand `name: integer`
        type_node: YNode = value
    elif isinstance(value, YMap):
        reader.unknown_keys(value, path, ARG_DECL)
        type_node = value.get("type") or value
        if (t := value.get("type")) is not None:
            arg_type = _arg_scalar(reader, t, join_key(path, "type"), "an argument type") or ""
        if (d := value.get("description")) is not None:
            description = _arg_scalar(reader, d, join_key(path, "description"), "text")
        if (r := value.get("required")) is not None:
            required = _arg_required(reader, r, join_key(path, "required"))
        if "default" in value:
            default = value.get("default")
            if isinstance(default, YScalar) and default.is_null:
                reader.error(
                    default,
                    join_key(path, "default"),
                    "'default: null' is not allowed: an argument is never null (optional is "
                    "not nullable); write default: '' for an empty text, or leave default out "
                    "to keep the argument required",
                    code=codes.INVALID_VALUE,
                )
                default = None
        if required is not None and r is not None and required == ("default" in value):
            reader.error(
                r,
                join_key(path, "required"),
                "'required: true' with a default: a default makes the argument optional; "
                "remove one of them"
                if required
                else "'required: false' without a default: an optional argument needs a "
                "default (there is no null); add a default, or remove 'required: false'",
                code=codes.INVALID_VALUE,
            )
    else:
        reader.error(
            value,
            path,
            f"expected a type name or a mapping, found {kind_of(value)}",
            code=codes.WRONG_TYPE,
        )
        return None
    if arg_type and arg_type not in ARG_TYPES:
        reader.error(
            type_node,
            path,
            f"unknown argument type '{arg_type}'{did_you_mean(arg_type, ARG_TYPES)}; "
            f"expected one of {', '.join(ARG_TYPES)}",
            code=codes.INVALID_VALUE,
        )
    elif arg_type and default is not None:
        try:
            bound = coerce(arg_type, raw_value(default))
        except ValueError as exc:
            # Trailblaze loads it and refuses it only when a replay uses it: a warning.
            reader.warn(
                default,
                join_key(path, "default"),
                f"the default is not of type {arg_type} ({exc}): a replay that does not pass "
                f"--arg {name}=VALUE is refused",
                code=codes.INVALID_VALUE,
            )
        else:
            if (problem := malformed_arg_token(bound)) is not None:
                reader.warn(
                    default,
                    join_key(path, "default"),
                    f"the default has a {problem}: a replay that does not pass "
                    f"--arg {name}=VALUE is refused",
                    code=codes.INVALID_VALUE,
                )
    return ArgDecl(
        name=name,
        type=arg_type or "string",
        description=description,
        default=default,
        has_default=default is not None,
        line=key.line,
        column=key.column,
    )


def _arg_scalar(reader: Reader, node: YNode, key_path: str, what: str) -> str | None:
    """A declaration field Trailblaze reads as a scalar's text (a null is not one)."""
    if isinstance(node, YScalar) and not node.is_null:
        return node.text
    reader.error(node, key_path, f"expected {what}, found {kind_of(node)}", code=codes.WRONG_TYPE)
    return None


def _arg_required(reader: Reader, node: YNode, key_path: str) -> bool | None:
    if isinstance(node, YScalar) and node.text in _BOOLEANS:
        return _BOOLEANS[node.text]
    reader.error(
        node, key_path, f"expected true or false, found {kind_of(node)}", code=codes.WRONG_TYPE
    )
    return None
