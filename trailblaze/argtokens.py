"""Argument tokens (`{{args.x}}`, `${args.x}`) in trail text, checked against `config.args`.

Only bodies that start with `args.` are checked. A body must be a dotted path; anything else is
a malformed expression. The first segment after `args.` must be declared under `config.args`.
`{{x}}` and `{{memory.x}}` belong to the runtime's memory and are left alone.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

TOKEN = re.compile(r"\{\{(.*?)\}\}|\$\{(.*?)\}", re.DOTALL)
_PATH = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")
ARG_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True, slots=True)
class TokenProblem:
    offset: int
    token: str
    message: str
    code: str


def check_tokens(
    text: str, declared: frozenset[str], has_args_block: bool
) -> Iterator[TokenProblem]:
    """Problems with the `args.` tokens of one string, with their offset in the string."""
    for match in TOKEN.finditer(text):
        body = (match.group(1) if match.group(1) is not None else match.group(2)).strip()
        if not (body == "args" or body.startswith("args.") or body.startswith("args[")):
            continue
        token = match.group(0)
        if not _PATH.fullmatch(body) or body == "args":
            yield TokenProblem(
                match.start(),
                token,
                f"malformed argument token '{token}': expected '{{{{args.<name>}}}}'",
                "malformed-arg-token",
            )
            continue
        name = body.split(".")[1]
        if name in declared:
            continue
        where = "config.args" if has_args_block else "config.args (the trail has none)"
        yield TokenProblem(
            match.start(),
            token,
            f"argument '{name}' used in '{token}' is not declared in {where}",
            "undeclared-arg",
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
