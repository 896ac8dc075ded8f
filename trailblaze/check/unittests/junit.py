"""bun's JUnit report (`bun test --reporter=junit`) as test cases by file.

bun writes one `testsuite` per test file (`file` relative to its working directory), with a
nested `testsuite` per `describe` block and a `testcase` per test (`line`, `time`), a `failure`
(its `message`, and a stack in its text) or a `skipped` (`message="TODO"` for `test.todo`). A
file that did not load (a syntax error, an import that does not resolve) has no suite at all.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from xml.etree import ElementTree

from trailblaze.state.testresults import CaseResult

_MESSAGE_LIMIT = 600


class JunitError(Exception):
    """The report is missing or not bun's JUnit."""


def read_junit(path: Path, cwd: Path) -> dict[Path, list[CaseResult]]:
    """The cases of each test file the report names (absolute paths), in report order."""
    try:
        root = ElementTree.parse(path).getroot()
    except (OSError, ElementTree.ParseError) as exc:
        raise JunitError(f"no JUnit report from bun ({exc})") from None
    if root.tag != "testsuites":
        raise JunitError(f"not bun's JUnit report (root element {root.tag!r})")
    out: dict[Path, list[CaseResult]] = {}
    for suite in root.findall("testsuite"):
        name = suite.get("file") or suite.get("name") or ""
        file = Path(name) if Path(name).is_absolute() else cwd / name
        cases = out.setdefault(Path(_normal(file)), [])
        _collect(suite, [], name, cases)
    return out


def _normal(path: Path) -> str:
    return os.path.normpath(path)


def _collect(
    suite: ElementTree.Element, names: list[str], file: str, out: list[CaseResult]
) -> None:
    for child in suite:
        if child.tag == "testsuite":
            _collect(child, [*names, child.get("name") or ""], file, out)
        elif child.tag == "testcase":
            out.append(_case(child, names, file))


def _case(case: ElementTree.Element, names: list[str], file: str) -> CaseResult:
    name = " > ".join([*names, case.get("name") or ""])
    line = _int(case.get("line"), 1)
    duration = _float(case.get("time"))
    failure = case.find("failure")
    if failure is None:
        failure = case.find("error")
    if failure is not None:
        message = failure.get("message") or (failure.text or "").strip() or "failed"
        frame = _frame(failure.text or "", file)
        line, column = frame if frame is not None else (line, 1)
        return CaseResult(name, line, "failed", duration, _shorten(message), column)
    skipped = case.find("skipped")
    if skipped is not None:
        status = "todo" if (skipped.get("message") or "") == "TODO" else "skipped"
        return CaseResult(name, line, status, duration)
    return CaseResult(name, line, "passed", duration)


def _frame(stack: str, file: str) -> tuple[int, int] | None:
    """The first frame of the stack in the test file itself: where the test failed."""
    base = Path(file).name
    for match in re.finditer(r"at (?:.*?\()?([^\s()]+):(\d+):(\d+)\)?", stack):
        if Path(match.group(1)).name == base:
            return int(match.group(2)), int(match.group(3))
    return None


def _shorten(message: str) -> str:
    lines = [line.strip() for line in message.strip().splitlines() if line.strip()]
    text = " | ".join(lines)
    return text if len(text) <= _MESSAGE_LIMIT else text[: _MESSAGE_LIMIT - 3] + "..."


def _int(value: str | None, default: int) -> int:
    try:
        number = int(value or "")
    except ValueError:
        return default
    return number if number >= 1 else default


def _float(value: str | None) -> float:
    try:
        return round(max(float(value or "0"), 0.0), 6)
    except ValueError:
        return 0.0
