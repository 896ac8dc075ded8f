"""Tools over the trail's memory and the recording itself: no screen involved.

Memory values are substituted into arguments before a tool runs (``{{memory.x}}``, and ``{{x}}``
as upstream's runtime does), so ``assertEquals`` compares the substituted texts.
``inputTextRandom`` types a fresh value and keeps it in memory for later calls. ``assertMath``
computes its expression with a small arithmetic evaluator (numbers, ``+ - * / // % **``,
parentheses), never ``eval``. ``objectiveStatus`` is the agent's own report: COMPLETED and
IN_PROGRESS pass, FAILED fails the step with the recorded explanation.
"""

from __future__ import annotations

import ast
import math
import operator
import secrets
from collections.abc import Callable
from typing import Any

from trailblaze.replay.context import ExecutionContext
from trailblaze.replay.failure import ExpectedFailure, ToolError
from trailblaze.replay.tools.base import ToolImpl
from trailblaze.replay.tools.keys import hide_keyboard_if_shown

_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_UNARY: dict[type[ast.unaryop], Callable[[Any], Any]] = {
    ast.UAdd: operator.pos,
    ast.USub: operator.neg,
}
#: Bounds that keep one expression from eating the machine (``9**9**9``).
_MAX_EXPONENT = 1000
_MAX_LENGTH = 500


def assert_equals(context: ExecutionContext, args: dict[str, Any]) -> str:
    actual, expected = args["actual"], args["expected"]
    if actual != expected:
        raise ExpectedFailure(f"expected {expected!r}, got {actual!r}")
    return f"{actual!r} equals {expected!r}"


def assert_not_equals(context: ExecutionContext, args: dict[str, Any]) -> str:
    actual, expected = args["actual"], args["expected"]
    if actual == expected:
        raise ExpectedFailure(f"expected a value other than {expected!r}, got it")
    return f"{actual!r} differs from {expected!r}"


def _number(text: str, what: str) -> float:
    cleaned = text.strip().replace(",", "")
    try:
        return float(cleaned)
    except ValueError:
        raise ToolError(f"{what} {text!r} is not a number") from None


def evaluate(expression: str) -> float:
    """The value of an arithmetic expression; ``ToolError`` for anything else."""
    if len(expression) > _MAX_LENGTH:
        raise ToolError(f"expression is longer than {_MAX_LENGTH} characters")
    try:
        tree = ast.parse(expression.strip().replace(",", ""), mode="eval")
    except SyntaxError as exc:
        raise ToolError(f"expression {expression!r} does not parse: {exc.msg}") from None

    def walk(node: ast.AST) -> Any:
        if isinstance(node, ast.Expression):
            return walk(node.body)
        if isinstance(node, ast.Constant) and type(node.value) in (int, float):
            return node.value
        if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
            left, right = walk(node.left), walk(node.right)
            if isinstance(node.op, ast.Pow) and abs(right) > _MAX_EXPONENT:
                raise ToolError(f"exponent {right} is too large")
            return _BINARY[type(node.op)](left, right)
        if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
            return _UNARY[type(node.op)](walk(node.operand))
        raise ToolError(
            f"expression {expression!r}: only numbers, + - * / // % ** and parentheses are "
            f"allowed, not {ast.unparse(node)!r}"
        )

    try:
        value = walk(tree)
    except ZeroDivisionError:
        raise ToolError(f"expression {expression!r} divides by zero") from None
    except OverflowError:
        raise ToolError(f"expression {expression!r} overflows") from None
    return float(value)


def _shown(value: float) -> str:
    return str(int(value)) if value.is_integer() else f"{value:g}"


def assert_math(context: ExecutionContext, args: dict[str, Any]) -> str:
    expression, expected_text = args["expression"], args["expected"]
    value = evaluate(expression)
    expected = _number(expected_text, "expected value")
    if not math.isclose(value, expected, rel_tol=1e-9, abs_tol=1e-9):
        raise ExpectedFailure(f"{expression} = {_shown(value)}, expected {expected_text.strip()}")
    return f"{expression} = {_shown(value)}"


def dump_memory(context: ExecutionContext, args: dict[str, Any]) -> str:
    if not context.memory:
        return "memory is empty"
    return "memory: " + ", ".join(
        f"{k}=(secret)" if k in context.sensitive else f"{k}={v!r}"
        for k, v in sorted(context.memory.items())
    )


def input_text_random(context: ExecutionContext, args: dict[str, Any]) -> str:
    variable = args["variable"].strip()
    if not variable:
        raise ToolError("'variable' is empty: name the memory value that receives the text")
    digits = int(args.get("digitCount", 6))
    if not 0 <= digits <= 64:
        raise ToolError(f"digitCount must be between 0 and 64, got {digits}")
    value = str(args.get("prefix", "TBZ-")) + "".join(
        str(secrets.randbelow(10)) for _ in range(digits)
    )
    context.device.input_text(value)
    context.memory[variable] = value
    hid = args.get("hideKeyboardAfter", True) and hide_keyboard_if_shown(context)
    return f"typed {value!r} (memory.{variable})" + (" and hid the keyboard" if hid else "")


def objective_status(context: ExecutionContext, args: dict[str, Any]) -> str:
    status, explanation = str(args["status"]), args["explanation"]
    if status == "FAILED":
        raise ExpectedFailure(f"the recording reports the objective failed: {explanation}")
    return f"objective {status.lower().replace('_', ' ')}: {explanation}"


TOOLS = (
    ToolImpl("assertEquals", assert_equals, mutates=False),
    ToolImpl("assertNotEquals", assert_not_equals, mutates=False),
    ToolImpl("assertMath", assert_math, mutates=False),
    ToolImpl("dumpMemory", dump_memory, mutates=False),
    ToolImpl("inputTextRandom", input_text_random),
    ToolImpl("objectiveStatus", objective_status, mutates=False),
)
