"""One invocation of a scripted tool in a Node child: its messages, and how it ends.

The engine sends ``invoke``; the child answers, for that invocation's id:

- ``started`` when the module is loaded (the tool's own time starts). When the tool declares an
  input (a typed spec's JSON Schema ``inputSchema``, an imperative tool's zod ``inputSchema``)
  the message carries it as JSON Schema, the engine parses the call's arguments with it (the
  messages point into the trail, as for any tool) and sends them back (``args``), or refuses the
  call (``drop``) with a located "invalid arguments" failure;
- ``call`` for each ``ctx.tools.X(args)``: the engine runs it through its own dispatch, in the
  execution context of the scripted tool's call (so in the recording's batch context: same
  clipboard, same snapshot frame, same trace id), with its own result, log line and position
  (``notes_copy.calls[0]``), and answers with a ``reply``;
- ``log`` for the tool's ``ctx.logger`` lines and what it prints (``[console]``);
- ``result`` (``ok`` with the return value and the memory delta, or the error it threw) or
  ``unrunnable``; ``crash`` (no id) when the child dies of an error nothing caught.

How it fails, as the engine's three kinds (``failure``):

- the tool threw, or returned ``isError``: ``ExpectedFailure`` with its message. A ``runIf``
  condition reads it as false. A nested call that could not run (or lost the device) and that
  the tool let escape keeps its own kind;
- the tool could not run at all (its module does not compile or load, no such export, arguments
  its input schema refuses, a crash, no answer within the timeout, no Node): ``ToolError``,
  "could not run". It fails the step, even as a ``runIf`` condition;
- a nested call that lost the device: ``FatalToolError`` at once, and the child is stopped.
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trailblaze.replay.context import ExecutionContext
from trailblaze.replay.failure import (
    Cancelled,
    ExpectedFailure,
    FatalToolError,
    ToolError,
    ToolFailure,
)
from trailblaze.replay.results import ToolResult
from trailblaze.replay.scripted.child import ChildGone, NodeChild
from trailblaze.replay.structured import Structured, structured_value

logger = logging.getLogger(__name__)

_LOG_LINES = 200
_FRAME = re.compile(
    r"\(?(?:file://)?(?P<file>/[^():?]+)(?:\?[^:]*)?:(?P<line>\d+):(?P<col>\d+)\)?$"
)

_KINDS: dict[str, type[ToolFailure]] = {
    "expected": ExpectedFailure,
    "error": ToolError,
    "fatal": FatalToolError,
}

DispatchCall = Callable[[str, dict[str, Any], int], ToolResult]
"""Runs one nested call (name, arguments, index among this invocation's calls); its result."""

Validate = Callable[[dict[str, Any]], dict[str, Any]]
"""Parses the call's arguments with a JSON Schema the tool declares; ``ToolError`` if they fail."""


@dataclass(frozen=True, slots=True)
class ScriptOutcome:
    detail: str
    sets: dict[str, str]
    """What the tool wrote to memory (``ctx.memory.set``), to apply now that it succeeded."""
    deletions: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Caller:
    """The engine's side of one invocation: where nested calls run and what they log."""

    context: ExecutionContext
    call: DispatchCall
    logs: list[str]
    validate: Validate | None
    timeout: float
    root: Path
    """The workspace: a stack frame inside it locates a throw."""


class Invocation:
    """One invocation of tool ``name`` on ``child``; ``run`` returns or raises its failure."""

    def __init__(self, child: NodeChild, name: str, caller: Caller) -> None:
        self.child = child
        self.name = name
        self.caller = caller
        self.id = child.next_id()
        self._calls = 0
        self._console: list[str] = []
        self._done = False

    def run(self, request: dict[str, Any]) -> ScriptOutcome:
        try:
            with contextlib.ExitStack() as phases:
                self.child.send({**request, "type": "invoke", "id": self.id})
                return self._messages(phases)
        except ChildGone as gone:
            raise self._could_not_run(f"{gone}{self._tail()}") from None
        finally:
            self.child.forget(self.id)
            if not self._done:
                # Cancelled, the device lost in a nested call, ...: the child may still be
                # running this tool. It is stopped; the next call gets a fresh one.
                self.child.kill(f"'{self.name}' was stopped")

    def _could_not_run(self, why: str) -> ToolError:
        return ToolError(f"scripted tool '{self.name}' could not run: {why}")

    def _messages(self, phases: contextlib.ExitStack) -> ScriptOutcome:
        caller = self.caller
        while True:
            message = self.child.receive(
                self.id, timeout=caller.timeout, check=caller.context.check_cancelled
            )
            kind = message.get("type")
            if kind == "started":
                # Compiling, starting node and loading the module were the startup phase.
                phases.enter_context(caller.context.phase("act"))
                schema = message.get("inputSchema")
                if isinstance(schema, dict):
                    self._send_args(schema)
            elif kind == "log":
                self._log(message)
            elif kind == "call":
                self._nested(message)
            elif kind == "result":
                self._done = True
                return self._result(message)
            elif kind == "unrunnable":
                self._done = True
                raise self._could_not_run(f"{message.get('error')}{self._where(message)}")
            elif kind == "crash":
                raise self._could_not_run(f"{message.get('error')}{self._where(message)}")

    def _send_args(self, schema: dict[str, Any]) -> None:
        """The arguments parsed with the tool's own input schema, or a located refusal."""
        validate = self.caller.validate
        problem = _schema_problem(schema)
        if validate is None or problem is not None:
            if problem is not None:
                self._keep(f"[warn] its inputSchema is not a JSON Schema ({problem}): not checked")
            self.child.send({"type": "args", "id": self.id, "args": None})
            return
        try:
            args = validate(schema)
        except ToolError:
            self.child.send({"type": "drop", "id": self.id})
            self._done = True
            raise
        self.child.send({"type": "args", "id": self.id, "args": args})

    def _log(self, message: dict[str, Any]) -> None:
        level = str(message.get("level", "info"))
        text = f"[{level}] {message.get('message', '')}"
        fields = message.get("fields")
        if fields:
            text += f" {json.dumps(fields, ensure_ascii=False)}"
        if level == "console":
            self._console.append(str(message.get("message", "")))
        self._keep(text)

    def _keep(self, text: str) -> None:
        if len(self.caller.logs) < _LOG_LINES:
            self.caller.logs.append(text)
        logger.info("[%s] %s", self.name, text)

    def _nested(self, message: dict[str, Any]) -> None:
        tool = str(message.get("tool"))
        args = message.get("args")
        index = self._calls
        self._calls += 1
        if not isinstance(args, dict):
            args = {}
        result = self.caller.call(tool, args, index)
        if result.status == "cancelled":
            raise Cancelled
        if result.status == "failed" and result.error_kind == "fatal":
            raise FatalToolError(f"{result.label} failed: {result.error}")
        reply: dict[str, Any] = {"type": "reply", "id": self.id, "call": message.get("call")}
        if result.status == "passed":
            reply.update(ok=True, text=result.detail or "")
            value = structured_value(result.detail)
            if value is not None:
                reply["structured"] = value
        else:
            reply.update(
                ok=False, error=result.error or "failed", kind=result.error_kind, label=result.label
            )
        self.child.send(reply)

    def _result(self, message: dict[str, Any]) -> ScriptOutcome:
        if not message.get("ok"):
            error = str(message.get("error") or "failed")
            kind = message.get("kind")
            if kind in _KINDS:
                # A failed call (or a helper replay lacks) that the tool let through keeps its
                # message and its kind: a runIf condition must not read "could not run" as false.
                raise _KINDS[kind](error)
            raise ExpectedFailure(f"{self.name} threw {error}{self._where(message)}")
        delta = message.get("memory") or {}
        sets = {str(k): str(v) for k, v in (delta.get("sets") or {}).items()}
        deletions = tuple(str(k) for k in delta.get("deletions") or ())
        text = str(message.get("text") or "")
        value = message.get("structured")
        detail = Structured(text, value) if value is not None else text
        return ScriptOutcome(detail, sets, deletions)

    def _tail(self) -> str:
        lines = [line for line in self._console if line.strip()][-5:]
        lines += self.child.stderr_tail(5 - len(lines)) if len(lines) < 5 else []
        return (": " + " | ".join(lines)) if lines else ""

    def _where(self, message: dict[str, Any]) -> str:
        """`` (at trailmaps/x/tools/y.ts:3:9)``: the first frame of the stack in the workspace."""
        stack = message.get("stack")
        if not isinstance(stack, str):
            return ""
        root = self.caller.root
        for line in stack.splitlines()[1:]:
            match = _FRAME.search(line.strip())
            if match is None:
                continue
            path = Path(match["file"])
            if "node_modules" in path.parts or not path.is_relative_to(root):
                continue
            rel = path.relative_to(root).as_posix()
            return f" (at {rel}:{match['line']}:{match['col']})"
        return ""


def _schema_problem(schema: dict[str, Any]) -> str | None:
    """Why ``schema`` cannot check anything (not a valid JSON Schema), or None."""
    from jsonschema import Draft202012Validator  # noqa: PLC0415 - only when a tool declares one
    from jsonschema.exceptions import SchemaError  # noqa: PLC0415

    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        return str(exc.message)
    return None
