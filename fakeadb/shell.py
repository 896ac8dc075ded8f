"""The fake device's shell: command lines as adbd's ``sh`` would run them.

A small interpreter for what adbutils and replay send: ``;``, ``&&``, ``||``, ``|``, quotes,
``$?``, simple redirections, the builtins adbutils' own helpers use (``echo``, ``rm``,
``cat``, ``grep``, ``ls``, ``sleep``), and ``sh -c LINE`` (what a scripted tool's
``android_adbShell`` sends to run a line of shell). The shell is given the device's ``Files`` and two
callables: the fault overrides and the device's programs (``input``, ``am``, ``pm``, ...:
``commands``). Output chunks keep their execution order, as adbd's do (replay.md §3.5.2).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import NamedTuple

from fakeadb.files import Files
from fakeadb.result import STDERR, STDOUT, CommandResult

Program = Callable[[list[str]], CommandResult | None]
"""Runs one command line's words; None when it does not know the program."""

_STATUS = None  # a `$?` inside a word, expanded when the command runs
WordPart = str | None
Word = tuple[WordPart, ...]
_OPERATORS = (";", "&&", "||", "|", "&")
_REDIRECTS = (">>", ">", "2>&1", "2>", "<")


class ShellSyntaxError(ValueError):
    """The fake's shell cannot parse the line (an unclosed quote)."""


class _Token(NamedTuple):
    op: str | None  # operator or redirect; None for a word
    word: Word = ()


def tokenize(line: str) -> list[_Token]:
    """Split a shell line into words and operators, honouring quotes like ``sh`` does."""
    tokens: list[_Token] = []
    parts: list[WordPart] = []
    buf: list[str] = []
    in_word = False
    i, n = 0, len(line)

    def flush() -> None:
        nonlocal in_word
        if buf:
            parts.append("".join(buf))
            buf.clear()
        if in_word:
            tokens.append(_Token(None, tuple(parts)))
            parts.clear()
        in_word = False

    def status() -> None:
        # `$?` is a part of its own, expanded when the command runs.
        nonlocal in_word
        parts.append("".join(buf))
        buf.clear()
        parts.append(_STATUS)
        in_word = True

    while i < n:
        c = line[i]
        if c in " \t\n":
            flush()
            i += 1
        elif c == "'":
            end = line.find("'", i + 1)
            if end < 0:
                raise ShellSyntaxError(f"unterminated quote in {line!r}")
            buf.append(line[i + 1 : end])
            in_word = True
            i = end + 1
        elif c == '"':
            i += 1
            in_word = True
            while i < n and line[i] != '"':
                if line[i] == "\\" and i + 1 < n and line[i + 1] in '"\\$`':
                    buf.append(line[i + 1])
                    i += 2
                elif line.startswith("$?", i):
                    status()
                    i += 2
                else:
                    buf.append(line[i])
                    i += 1
            if i >= n:
                raise ShellSyntaxError(f"unterminated quote in {line!r}")
            i += 1
        elif c == "\\" and i + 1 < n:
            buf.append(line[i + 1])
            in_word = True
            i += 2
        elif line.startswith("$?", i):
            status()
            i += 2
        elif not in_word and line.startswith("2>", i):
            flush()
            redirect = "2>&1" if line.startswith("2>&1", i) else "2>"
            tokens.append(_Token(redirect))
            i += len(redirect)
        elif c in ";&|<>":
            flush()
            op = next(o for o in (*_OPERATORS, *_REDIRECTS) if line.startswith(o, i))
            tokens.append(_Token(op))
            i += len(op)
        else:
            buf.append(c)
            in_word = True
            i += 1
    flush()
    return tokens


class _Command(NamedTuple):
    words: tuple[Word, ...]
    redirects: tuple[tuple[str, Word], ...]


def _parse(tokens: list[_Token]) -> list[tuple[str, list[_Command]]]:
    """[(operator before, pipeline)]: the first operator is ``;``."""
    items: list[tuple[str, list[_Command]]] = []
    pipeline: list[_Command] = []
    words: list[Word] = []
    redirects: list[tuple[str, Word]] = []
    pending = ";"
    i = 0

    def end_command() -> None:
        if words or redirects:
            pipeline.append(_Command(tuple(words), tuple(redirects)))
        words.clear()
        redirects.clear()

    while i < len(tokens):
        token = tokens[i]
        if token.op is None:
            words.append(token.word)
        elif token.op == "2>&1":
            redirects.append((token.op, ()))
        elif token.op in _REDIRECTS:
            if i + 1 >= len(tokens) or tokens[i + 1].op is not None:
                raise ShellSyntaxError(f"missing file after {token.op}")
            redirects.append((token.op, tokens[i + 1].word))
            i += 1
        elif token.op == "|":
            end_command()
        else:
            end_command()
            if pipeline:
                items.append((pending, list(pipeline)))
            pipeline.clear()
            pending = ";" if token.op == "&" else token.op
        i += 1
    end_command()
    if pipeline:
        items.append((pending, list(pipeline)))
    return items


def _expand(word: Word, status: int) -> str:
    return "".join(str(status) if part is None else part for part in word)


class Shell:
    """Runs command lines on one device: fault overrides, then builtins, then its programs."""

    def __init__(self, files: Files, *, override: Program, programs: Program) -> None:
        self.files = files
        self._override = override
        self._programs = programs

    def run(self, line: str) -> CommandResult:
        try:
            items = _parse(tokenize(line))
        except ShellSyntaxError as exc:
            return CommandResult.of(stderr=f"/system/bin/sh: syntax error: {exc}\n", returncode=2)
        status = 0
        chunks: list[tuple[int, bytes]] = []
        for operator, pipeline in items:
            if (operator == "&&" and status != 0) or (operator == "||" and status == 0):
                continue
            status = self._pipeline(pipeline, status, chunks)
        return CommandResult(status, tuple(chunks))

    def _pipeline(self, pipeline: list[_Command], status: int, out: list[tuple[int, bytes]]) -> int:
        stdin = b""
        returncode = status
        for position, command in enumerate(pipeline):
            # `$?` inside a pipeline is the status from before the pipeline, as in sh.
            argv = [_expand(w, status) for w in command.words]
            redirects = [(kind, _expand(target, status)) for kind, target in command.redirects]
            for kind, path in redirects:
                if kind == "<":
                    stdin = self.files.read(path) or b""
            result = self.command(argv, stdin)
            chunks = list(result.chunks)
            for kind, path in redirects:
                chunks = self._redirect(kind, path, chunks)
            if position == len(pipeline) - 1:
                out.extend(chunks)
            else:
                out.extend((s, d) for s, d in chunks if s == STDERR)
                stdin = b"".join(d for s, d in chunks if s == STDOUT)
            returncode = result.returncode
        return returncode

    def _redirect(
        self, kind: str, path: str, chunks: list[tuple[int, bytes]]
    ) -> list[tuple[int, bytes]]:
        if kind == "2>&1":
            return [(STDOUT, d) for _, d in chunks]
        if kind == "<":
            return chunks
        stream = STDERR if kind == "2>" else STDOUT
        data = b"".join(d for s, d in chunks if s == stream)
        if path != "/dev/null":
            self.files.write(path, data, append=kind == ">>")
        return [(s, d) for s, d in chunks if s != stream]

    def command(self, argv: list[str], stdin: bytes = b"") -> CommandResult:
        """Run one command: a fault override, a shell builtin, a device program, or 127."""
        if not argv:
            return CommandResult(0)
        overridden = self._override(argv)
        if overridden is not None:
            return overridden
        builtin = getattr(self, f"_builtin_{argv[0]}", None)
        if builtin is not None:
            result: CommandResult = builtin(argv[1:], stdin)
            return result
        result_or_none = self._programs(argv)
        if result_or_none is None:
            return CommandResult.of(
                stderr=f"/system/bin/sh: {argv[0]}: inaccessible or not found\n", returncode=127
            )
        return result_or_none

    def _builtin_sh(self, args: list[str], stdin: bytes) -> CommandResult:
        if len(args) >= 2 and args[0] == "-c":
            return self.run(args[1])
        return CommandResult.of(
            stderr="/system/bin/sh: the fake runs `sh -c COMMAND` only, no scripts or "
            "interactive shells\n",
            returncode=2,
        )

    def _builtin_true(self, args: list[str], stdin: bytes) -> CommandResult:
        return CommandResult(0)

    def _builtin_false(self, args: list[str], stdin: bytes) -> CommandResult:
        return CommandResult(1)

    def _builtin_echo(self, args: list[str], stdin: bytes) -> CommandResult:
        newline = "\n"
        if args[:1] == ["-n"]:
            args, newline = args[1:], ""
        return CommandResult.of(" ".join(args) + newline)

    def _builtin_sleep(self, args: list[str], stdin: bytes) -> CommandResult:
        try:
            time.sleep(min(float(args[0]), 5.0) if args else 0.0)
        except ValueError:
            return CommandResult.of(stderr=f"sleep: invalid number '{args[0]}'\n", returncode=1)
        return CommandResult(0)

    def _builtin_rm(self, args: list[str], stdin: bytes) -> CommandResult:
        force = any(a.startswith("-") and "f" in a for a in args)
        paths = [a for a in args if not a.startswith("-")]
        errors = [
            f"rm: {path}: No such file or directory\n"
            for path in paths
            if not self.files.remove(path) and not force
        ]
        return CommandResult.of(stderr="".join(errors), returncode=1 if errors else 0)

    def _builtin_cat(self, args: list[str], stdin: bytes) -> CommandResult:
        if not args:
            return CommandResult(0, ((STDOUT, stdin),) if stdin else ())
        chunks: list[tuple[int, bytes]] = []
        rc = 0
        for path in args:
            data = self.files.read(path)
            if data is None:
                chunks.append((STDERR, f"cat: {path}: No such file or directory\n".encode()))
                rc = 1
            elif data:
                chunks.append((STDOUT, data))
        return CommandResult(rc, tuple(chunks))

    def _builtin_ls(self, args: list[str], stdin: bytes) -> CommandResult:
        paths = [a for a in args if not a.startswith("-")] or ["/"]
        lines: list[str] = []
        for path in paths:
            names = self.files.list_dir(path)
            if names is None:
                return CommandResult.of(
                    stderr=f"ls: {path}: No such file or directory\n", returncode=1
                )
            lines.extend(sorted(names))
        return CommandResult.of("".join(f"{n}\n" for n in lines))

    def _builtin_grep(self, args: list[str], stdin: bytes) -> CommandResult:
        flags = {c for a in args if a.startswith("-") and len(a) > 1 for c in a[1:]}
        rest = [a for a in args if not (a.startswith("-") and len(a) > 1)]
        if not rest:
            return CommandResult.of(
                stderr="usage: grep [-icvqEF] PATTERN [FILE...]\n", returncode=2
            )
        pattern, files = rest[0], rest[1:]
        text = stdin
        if files:
            text = b"".join(self.files.read(f) or b"" for f in files)
        source = re.escape(pattern) if "F" in flags else pattern
        regex = re.compile(source, re.IGNORECASE if "i" in flags else 0)
        lines = text.decode(errors="replace").splitlines()
        hits = [line for line in lines if (regex.search(line) is not None) != ("v" in flags)]
        rc = 0 if hits else 1
        if "q" in flags:
            return CommandResult(rc)
        if "c" in flags:
            return CommandResult.of(f"{len(hits)}\n", returncode=rc)
        return CommandResult.of("".join(f"{h}\n" for h in hits), returncode=rc)
