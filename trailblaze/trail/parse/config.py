"""A trail's `config:` block, in either format, and its declared arguments (`config.args`)."""

from __future__ import annotations

import contextlib

from trailblaze import codes
from trailblaze.finding import did_you_mean, join_key
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


def _arg_decls(reader: Reader, node: YNode, key_path: str) -> tuple[ArgDecl, ...]:
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
                f"argument name '{name}' must match [A-Za-z_][A-Za-z0-9_]*",
                code=codes.INVALID_VALUE,
            )
            continue
        arg_type, description, default, has_default = "string", None, None, False
        if isinstance(value, YScalar):
            arg_type = reader.text(value, path) or "string"
        elif isinstance(value, YMap):
            reader.unknown_keys(value, path, ARG_DECL)
            if (t := value.get("type")) is not None:
                arg_type = reader.text(t, join_key(path, "type")) or "string"
            if (d := value.get("description")) is not None:
                description = reader.text(d, join_key(path, "description"))
            if "default" in value:
                default, has_default = value.get("default"), True
        else:
            reader.error(
                value,
                path,
                f"expected a type name or a mapping, found {kind_of(value)}",
                code=codes.WRONG_TYPE,
            )
            continue
        if arg_type not in ARG_TYPES:
            where = value.get("type") if isinstance(value, YMap) else value
            reader.error(
                where or value,
                path,
                f"unknown argument type '{arg_type}'{did_you_mean(arg_type, ARG_TYPES)}; "
                f"expected one of {', '.join(ARG_TYPES)}",
                code=codes.INVALID_VALUE,
            )
        decls.append(
            ArgDecl(
                name=name,
                type=arg_type,
                description=description,
                default=default,
                has_default=has_default,
                line=key.line,
                column=key.column,
            )
        )
    return tuple(decls)
