"""URLs as we show them: `redacted_url`, the one function every message, warning, report and log
line that holds a URL goes through.

A URL a user gives us (the remote cache's, above all) may carry a secret: a user and password
before the host, a token in the query. Neither is ever shown, whatever the URL holds, so the
function does not trust a parser to find them: a password may hold `/`, `?`, `#` or `@`, where a
URL parser ends the user part early and leaves the rest of the secret in the host, the port or
the path. Instead, after the scheme:

- from the first `?` or `#` on, nothing is shown but `?***` or `#***`; when an `@` follows
  one, nothing at all is shown after the scheme but `***` (a user part with a `?` in it and a
  query with an `@` in it cannot be told apart);
- before that, everything up to the last `@` (or `%40`) is the user part, shown as `***@`;
- what is left must read as a host, a numeric port and a path. When it does not (`user:secret`
  with its `@` left out), nothing of it is shown but `***`.

What is shown is the scheme, the host, a numeric port and the path: enough to tell which server
was meant. A URL with an `@` in its path shows less than it could; a redaction errs that way.

`Secrets` is the other redaction: the values of a replay's `--secret NAME=VALUE`. They are
hidden by value, wherever they turn up, in every text we show: each is replaced by the marker
`[secret:NAME]` (`***` when the marker would hold the value itself). `Secrets.redact` is the one
function that does it, and every output of a replay goes through it:

- the results: each trail's result is redacted as a whole (`redact_data`) when it is made, so
  the console, `--json`, `--junit` and every report drawn from the results show no value;
- the log records of the run (`logging_redacted`: their message, arguments and traceback);
- any other text a writer adds to an output (a device's log, a screen dump): the writer calls
  `redact` on it before it writes.

Besides the value as given, the forms a message may show it in are hidden too: as `repr`,
JSON or HTML quote it, and as `adb shell input text` and a shell quote it; and so is the start
of one that a message cut short (`…`) inside it.

This module imports nothing of the package, so that every module may import it.
"""

from __future__ import annotations

import dataclasses
import html
import json
import logging
import re
import shlex
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any, TypeVar

import msgspec

T = TypeVar("T")

HIDDEN = "***"
CUT = "…"
"""What a message puts where it cut a long text short."""
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
_HOST_PORT = re.compile(r"^(\[[^\]]*\]|[^:\[\]%]*)(:\d*)?$")


def redacted_url(text: str) -> str:
    """`text`, a URL or what was meant as one, without anything that may be a secret."""
    scheme = _SCHEME.match(text)
    head = scheme.group(0) if scheme else ""
    rest = text[len(head) :]
    tail = ""
    cut = min((i for i in (rest.find("?"), rest.find("#")) if i >= 0), default=-1)
    if cut >= 0:
        if "@" in rest[cut:] or "%40" in rest[cut:]:
            # A user part that holds a `?` or `#` (`Zq?Zq@host`), or a query that holds an `@`
            # (`?token=Zq@Zq`): no part of it can be told from a host.
            return f"{head}{HIDDEN}"
        rest, tail = rest[:cut], f"{rest[cut]}{HIDDEN}"
    # A percent-encoded `@` counts as one: `user:secret%40host` is a user and password too.
    at, encoded = rest.rfind("@"), rest.rfind("%40")
    end = max(at + 1, encoded + 3 if encoded >= 0 else 0)
    user = f"{HIDDEN}@" if end else ""
    rest = rest[end:]
    authority, slash, path = rest.partition("/")
    if not _HOST_PORT.match(authority):
        return f"{head}{user}{HIDDEN}"
    return f"{head}{user}{authority}{slash}{path}{tail}"


def _forms(value: str) -> set[str]:
    """`value` and the forms a message may quote it in."""
    typed = value.replace(" ", "%s")  # as `adb shell input text` is given it
    forms = {
        value,
        typed,
        repr(value)[1:-1],
        json.dumps(value)[1:-1],
        json.dumps(value, ensure_ascii=False)[1:-1],
        html.escape(value),
        html.escape(value, quote=False),
    }
    # A shell quote that only wraps the value leaves the value itself to hide (and the quotes
    # to show); one that rewrites it (a value with a `'`) is a form of its own.
    forms.update(q for q in (shlex.quote(value), shlex.quote(typed)) if q[1:-1] not in forms)
    return {form for form in forms if form}


class Secrets:
    """The secret values of a run, by name, and the one function that hides them."""

    def __init__(self, values: Mapping[str, str] | None = None) -> None:
        self.values: dict[str, str] = dict(values or {})
        replacements: dict[str, str] = {}
        for name, value in self.values.items():
            marker = f"[secret:{name}]"
            for form in _forms(value):
                if form in marker:  # the marker would show the value (or part of it)
                    marker = HIDDEN
                replacements.setdefault(form, marker)
        self._replacements = replacements
        # Longest first, so a value that holds another is hidden whole.
        alternatives = sorted(replacements, key=len, reverse=True)
        self._pattern = (
            re.compile("|".join(re.escape(form) for form in alternatives)) if alternatives else None
        )
        # A message that cuts a long text short (`…`) may cut it inside a value: the start of
        # a value just before the cut is hidden too.
        starts: dict[str, str] = {}
        for form, marker in replacements.items():
            for end in range(1, len(form)):
                starts.setdefault(form[:end], marker)
        self._starts = starts
        self._cut = (
            re.compile(
                "("
                + "|".join(re.escape(s) for s in sorted(starts, key=len, reverse=True))
                + ")"
                + re.escape(CUT)
            )
            if starts
            else None
        )

    @property
    def names(self) -> frozenset[str]:
        return frozenset(self.values)

    def __bool__(self) -> bool:
        return self._pattern is not None

    def redact(self, text: str) -> str:
        """`text` with every form of every secret value replaced by its marker."""
        if self._pattern is None or not text:
            return text
        text = self._pattern.sub(lambda m: self._replacements[m.group(0)], text)
        if self._cut is not None and CUT in text:
            text = self._cut.sub(lambda m: self._starts[m.group(1)] + CUT, text)
        return text

    def redact_data(self, value: T) -> T:
        """`value` with every string in it redacted: strings, dataclasses and msgspec
        structs (copied with their `replace`), tuples, lists and mappings, however deep."""
        if self._pattern is None:
            return value
        return self._walk(value)  # type: ignore[no-any-return]

    def _walk(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.redact(value)
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            changes = {
                f.name: self._walk(getattr(value, f.name))
                for f in dataclasses.fields(value)
                if f.init
            }
            return dataclasses.replace(value, **changes)
        if isinstance(value, msgspec.Struct):
            fields = value.__struct_fields__
            return msgspec.structs.replace(
                value, **{name: self._walk(getattr(value, name)) for name in fields}
            )
        if isinstance(value, tuple):
            return tuple(self._walk(item) for item in value)
        if isinstance(value, list):
            return [self._walk(item) for item in value]
        if isinstance(value, Mapping):
            return {self._walk(key): self._walk(item) for key, item in value.items()}
        return value

    @contextmanager
    def logging_redacted(self) -> Iterator[None]:
        """While it lasts, every log record made (by any logger, in any thread) is redacted:
        its message with its arguments, and its traceback."""
        if self._pattern is None:
            yield
            return
        with _FACTORY_LOCK:
            previous = logging.getLogRecordFactory()

            def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
                record = previous(*args, **kwargs)
                record.msg = self.redact(record.getMessage())
                record.args = None
                if record.exc_info and record.exc_info[1] is not None:
                    record.exc_text = self.redact(
                        logging.Formatter().formatException(record.exc_info)
                    )
                    record.exc_info = None
                if record.stack_info:
                    record.stack_info = self.redact(record.stack_info)
                return record

            logging.setLogRecordFactory(factory)
        try:
            yield
        finally:
            with _FACTORY_LOCK:
                if logging.getLogRecordFactory() is factory:
                    logging.setLogRecordFactory(previous)


_FACTORY_LOCK = threading.Lock()
