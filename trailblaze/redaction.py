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

This module imports nothing of the package, so that every module may import it.
"""

from __future__ import annotations

import re

HIDDEN = "***"
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
