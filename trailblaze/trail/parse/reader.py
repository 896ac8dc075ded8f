"""Reading located YAML nodes for the parse gate: typed values, unknown keys, findings.

A `Reader` walks one trail file. Each question it asks of a node (is it a mapping, a boolean,
text?) either returns the value or records a located finding; `Reject` stops the construct at
hand after such a finding, and the caller carries on with the next one, so one run reports
every problem of the file.
"""

from __future__ import annotations

from trailblaze import codes
from trailblaze.finding import Finding, did_you_mean, join_key
from trailblaze.trail.grammar import Block
from trailblaze.yaml.node import YMap, YNode, YScalar, YSeq, kind_of


class Reject(Exception):
    """Stops parsing the current construct after an error was recorded."""


class Reader:
    """The findings about one file so far, and whether any of them rejects it."""

    def __init__(self, path: str, *, strict: bool) -> None:
        self.path = path
        self.strict = strict
        self.findings: list[Finding] = []
        self.rejected = False

    # -- findings -----------------------------------------------------------------------------

    def finding(
        self,
        line: int,
        column: int,
        *,
        key_path: str,
        message: str,
        code: str,
        fatal: bool = True,
    ) -> Finding:
        return Finding(
            kind="parse" if fatal else "warning",
            path=self.path,
            line=line,
            column=column,
            message=message,
            key_path=key_path,
            code=code,
            fatal=fatal,
        )

    def error(self, node: YNode | YScalar, key_path: str, message: str, *, code: str) -> None:
        self.rejected = True
        self.findings.append(
            self.finding(node.line, node.column, key_path=key_path, message=message, code=code)
        )

    def warn(self, node: YNode | YScalar, key_path: str, message: str, *, code: str) -> None:
        self.findings.append(
            self.finding(
                node.line, node.column, key_path=key_path, message=message, code=code, fatal=False
            )
        )

    def unknown_keys(self, mapping: YMap, key_path: str, block: Block) -> None:
        """Report keys `block` does not declare: an error, or a warning when lenient may drop it."""
        allowed = block.names
        for key, _ in mapping:
            name = key.text
            if name in allowed:
                continue
            message = f"unknown key '{name}'{did_you_mean(name, allowed)}"
            if block.ignored:
                self.warn(
                    key, key_path, message + "; Trailblaze ignores it", code=codes.UNKNOWN_KEY
                )
            elif self.strict or not block.lenient:
                self.error(key, key_path, message, code=codes.UNKNOWN_KEY)
            else:
                self.warn(
                    key, key_path, message + "; ignored (lenient mode)", code=codes.UNKNOWN_KEY
                )

    # -- values -------------------------------------------------------------------------------

    def expect_map(self, node: YNode, key_path: str) -> YMap:
        if isinstance(node, YMap):
            return node
        self.error(
            node, key_path, f"expected a mapping, found {kind_of(node)}", code=codes.WRONG_TYPE
        )
        raise Reject

    def expect_list(self, node: YNode, key_path: str) -> YSeq:
        if isinstance(node, YSeq):
            return node
        self.error(node, key_path, f"expected a list, found {kind_of(node)}", code=codes.WRONG_TYPE)
        raise Reject

    def text(self, node: YNode, key_path: str) -> str | None:
        """A string-valued field: any scalar gives its text; null means absent."""
        if isinstance(node, YScalar):
            if node.is_null:
                return None
            return node.text
        self.error(node, key_path, f"expected text, found {kind_of(node)}", code=codes.WRONG_TYPE)
        return None

    def boolean(self, node: YNode, key_path: str) -> bool | None:
        if isinstance(node, YScalar) and isinstance(node.value, bool) and not node.quoted:
            return node.value
        self.error(
            node, key_path, f"expected true or false, found {kind_of(node)}", code=codes.WRONG_TYPE
        )
        return None

    def integer(self, node: YNode, key_path: str) -> int | None:
        if isinstance(node, YScalar) and not node.quoted:
            value = node.value
            if isinstance(value, int) and not isinstance(value, bool):
                return value
        self.error(
            node, key_path, f"expected an integer, found {kind_of(node)}", code=codes.WRONG_TYPE
        )
        return None

    def max_retries(self, owner: YMap, key_path: str) -> int | None:
        """`maxRetries` of a step or trailhead; None when absent or invalid."""
        if (node := owner.get("maxRetries")) is None:
            return None
        return self.integer(node, join_key(key_path, "maxRetries"))
