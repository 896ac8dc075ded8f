"""Argument tokens (`{{args.x}}`, `${args.x}`) in trail text, checked against `config.args`.

Only bodies that start with `args.` are checked. A body must be a dotted path; anything else is
a malformed expression. The first segment after `args.` must be declared under `config.args`.
`{{x}}` and `{{memory.x}}` belong to the runtime's memory and are left alone.
`parse_token` is the one parser of these bodies: the check and replay (which resolves the
segments after the name inside an object argument's value) both use it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import msgspec

from trailblaze import codes

TOKEN = re.compile(r"\{\{(.*?)\}\}|\$\{(.*?)\}", re.DOTALL)
_PATH = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")
ARG_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def token_body(match: re.Match[str]) -> str:
    """The expression inside a `TOKEN` match, without surrounding spaces."""
    return (match.group(1) if match.group(1) is not None else match.group(2)).strip()


def is_args_body(body: str) -> bool:
    """Whether a token body addresses the trail's arguments (well formed or not)."""
    return body == "args" or body.startswith("args.") or body.startswith("args[")


def parse_token(body: str) -> tuple[str, tuple[str, ...]] | None:
    """`args.<name>.<field>...` as (name, fields); None when the body is malformed.

    The one parser of argument token bodies: the check and replay both use it.
    """
    if body == "args" or not _PATH.fullmatch(body):
        return None
    head, name, *path = body.split(".")
    if head != "args":
        return None
    return name, tuple(path)


def malformed_message(token: str) -> str:
    return f"malformed argument token '{token}': expected '{{{{args.<name>}}}}'"


class TokenProblem(msgspec.Struct, frozen=True, kw_only=True):
    """A token in a string argument that will not resolve, where it is in the string."""

    offset: int
    token: str
    message: str
    code: str


def check_tokens(
    text: str, declared: frozenset[str], has_args_block: bool
) -> Iterator[TokenProblem]:
    """Problems with the `args.` tokens of one string, with their offset in the string."""
    for match in TOKEN.finditer(text):
        body = token_body(match)
        if not is_args_body(body):
            continue
        token = match.group(0)
        parsed = parse_token(body)
        if parsed is None:
            yield TokenProblem(
                offset=match.start(),
                token=token,
                message=malformed_message(token),
                code=codes.MALFORMED_ARG_TOKEN,
            )
            continue
        name = parsed[0]
        if name in declared:
            continue
        where = "config.args" if has_args_block else "config.args (the trail has none)"
        yield TokenProblem(
            offset=match.start(),
            token=token,
            message=f"argument '{name}' used in '{token}' is not declared in {where}",
            code=codes.UNDECLARED_ARG,
        )


def offset_position(text: str, offset: int, line: int, column: int, style: str) -> tuple[int, int]:
    """Best position of `offset` inside a scalar that starts at (line, column).

    Exact for plain and quoted single-line scalars; for multi-line and block scalars it
    points at the start of the scalar's line that holds the token.
    """
    before = text[:offset]
    newlines = before.count("\n")
    if newlines == 0 and style in ("", "'", '"'):
        return line, column + offset + (1 if style else 0)
    if style in ("|", ">"):
        return line + 1 + newlines, column
    return line + newlines, column
