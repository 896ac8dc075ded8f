"""The registry of finding codes (`trailblaze/codes.py`), and that no module makes a code of its own.

Every code a finding carries is registered once in `codes.py` and passed as its constant. The
walk below reads the package's source (`ast`) and fails on any other way to make one:

- a string (or f-string, or a name bound to a string at module level) given as `code=` to any
  call: `Finding(...)`, the helpers that pass a code through (`reader.error(..., code=...)`,
  `loader.error`, `infra_finding`, `manifest_finding`, ...), the records that carry one
  (`SchemaIssue`, `TokenProblem`);
- a `codes.NAME` that is not a registered code;
- a text parameter named `code` that is not keyword-only (a positional code would escape the
  first rule), or whose default is a string;
- a record with a `code` field built with the code by position, or a `Finding` built without a
  code;
- a finding's `.code` compared with a string of ours (the TypeScript compiler's `TS` codes are
  tsc's and may be named where they are handled).

What the source cannot show, a code computed at run time, the runtime cross-check shows: every
code in the golden reports here, and every code of the case corpus in `tests/test_cases.py`,
has an entry.
"""

from __future__ import annotations

import ast
import functools
import json
import typing
from collections.abc import Mapping
from pathlib import Path

import pytest

from tests.conftest import DATA, ROOT
from trailblaze import codes
from trailblaze.finding import Kind

PACKAGE = ROOT / "trailblaze"
REGISTRY_MODULE = PACKAGE / "codes.py"
CODE = "code"
RECORDS_WITH_A_CODE_FIELD = frozenset(
    {"Finding", "SchemaIssue", "TokenProblem", "Diagnostic", "HostTool"}
)
"""The records of the package with a `code` field (the walk checks this list is complete)."""


# -- the registry ---------------------------------------------------------------------------------


def test_every_entry_says_what_the_code_is() -> None:
    kinds = set(typing.get_args(Kind))
    assert set(codes.KINDS) == kinds
    for entry in (*codes.REGISTRY.values(), codes.TYPESCRIPT):
        assert entry.kinds, entry.id
        assert set(entry.kinds) <= kinds, entry.id
        assert len(set(entry.kinds)) == len(entry.kinds), entry.id
        assert "\n" not in entry.description, entry.id
        assert entry.description.endswith("."), entry.id
        assert len(entry.description) <= 100, entry.id
        assert entry.help.endswith("."), entry.id
        assert len(entry.help) > len(entry.description), entry.id
        assert entry.no_case == entry.no_case.strip(), entry.id


def test_ids_are_words_and_never_look_like_the_compilers() -> None:
    for code in codes.REGISTRY:
        assert code.replace("-", "").isalpha(), code
        assert code == code.lower(), code
        assert not codes.is_typescript(code.upper()), code


def test_every_constant_of_the_registry_names_its_own_entry() -> None:
    constants = {
        name: value
        for name, value in vars(codes).items()
        if name.isupper() and isinstance(value, str) and name not in ("TYPESCRIPT_FAMILY",)
    }
    assert sorted(constants.values()) == sorted(codes.REGISTRY)
    for name, value in constants.items():
        assert name == value.upper().replace("-", "_"), (name, value)


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("unknown-key", "unknown-key"),
        ("TS2322", codes.TYPESCRIPT_FAMILY),
        ("TS1", codes.TYPESCRIPT_FAMILY),
        ("TS", None),
        ("TS23a", None),
        ("ts2322", None),
        ("TS２３", None),  # full-width digits are digits to str.isdigit, not to tsc
        ("unknown_key", None),
        ("", None),
    ],
)
def test_lookup(code: str, expected: str | None) -> None:
    found = codes.lookup(code)
    assert (found.id if found else None) == expected


# -- the source: no code made outside the registry ------------------------------------------------


def _is_str(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, ast.JoinedStr):
        return True
    if isinstance(node, ast.BinOp):
        return _is_str(node.left) or _is_str(node.right)
    return False


def _module_strings(tree: ast.Module) -> set[str]:
    """Names the module binds to a string at its top level (`QUOTED = "quoted-number"`)."""
    bound: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Assign) and _is_str(node.value):
            bound.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and node.value is not None
            and _is_str(node.value)
        ):
            bound.add(node.target.id)
    return bound


def _registry_names(tree: ast.Module) -> set[str]:
    """Names under which the module refers to the registry (`from trailblaze import codes`)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "trailblaze":
            names.update(a.asname or a.name for a in node.names if a.name == "codes")
        elif isinstance(node, ast.Import):
            names.update(a.asname for a in node.names if a.name == "trailblaze.codes" and a.asname)
    return names


def _value_problem(value: ast.expr, strings: set[str], registry: set[str]) -> str | None:
    """What is wrong with an expression given as a code; None when it is a registry constant
    or a value passed through (a parameter, `problem.code`)."""
    if isinstance(value, ast.IfExp):
        return _value_problem(value.body, strings, registry) or _value_problem(
            value.orelse, strings, registry
        )
    if _is_str(value):
        return f"a code written as a string ({ast.unparse(value)}): register it in codes.py"
    if isinstance(value, ast.Name) and value.id in strings:
        return f"a code bound to a string here ({value.id}): register it in codes.py"
    if (
        isinstance(value, ast.Attribute)
        and isinstance(value.value, ast.Name)
        and value.value.id in registry
        and getattr(codes, value.attr, None) not in codes.REGISTRY
    ):
        return f"codes.{value.attr} is not a registered code"
    return None


def _code_fields(tree: ast.Module) -> dict[str, int | None]:
    """Classes of the module with a `code` field -> its position (None when keyword-only)."""
    found: dict[str, int | None] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.ClassDef):
            continue
        fields = [
            s.target.id
            for s in node.body
            if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)
        ]
        if CODE not in fields:
            continue
        kw_only = any(
            isinstance(d, ast.Call) and any(k.arg == "kw_only" for k in d.keywords)
            for d in node.decorator_list
        )
        found[node.name] = None if kw_only else fields.index(CODE)
    return found


def _may_be_text(arg: ast.arg) -> bool:
    return arg.annotation is None or "str" in ast.unparse(arg.annotation)


def _callee(call: ast.Call) -> str:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


@functools.cache
def _parsed(text: str) -> ast.Module:
    return ast.parse(text)


def code_problems(package: Path = PACKAGE, planted: Mapping[str, str] | None = None) -> list[str]:
    """Every place of `package` that makes a finding code outside the registry.

    `planted`: text appended to some modules (by path inside the package) before the walk.
    """
    trees = {
        path: _parsed(
            path.read_text("utf-8") + (planted or {}).get(path.relative_to(package).as_posix(), "")
        )
        for path in sorted(package.rglob("*.py"))
        if path != package / "codes.py"
    }
    records: dict[str, int | None] = {}
    for tree in trees.values():
        records.update(_code_fields(tree))
    problems: list[str] = []
    for path, tree in trees.items():
        where = path.relative_to(package.parent).as_posix()
        strings, registry = _module_strings(tree), _registry_names(tree)

        def problem(node: ast.AST, text: str, where: str = where) -> None:
            problems.append(f"{where}:{getattr(node, 'lineno', 0)}: {text}")

        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                args = node.args
                positional = [*args.posonlyargs, *args.args]
                # An exit code (`code: int`) is no finding's business.
                if any(a.arg == CODE and _may_be_text(a) for a in positional):
                    problem(node, "a parameter 'code' that may be passed by position: make it "
                            "keyword-only ('*, code: str')")  # fmt: skip
                for arg, default in zip(args.kwonlyargs, args.kw_defaults, strict=True):
                    if (
                        arg.arg == CODE
                        and default is not None
                        and (text := _value_problem(default, strings, registry)) is not None
                    ):
                        problem(node, text)
            elif isinstance(node, ast.ClassDef) and node.name in records:
                for s in node.body:
                    if (
                        isinstance(s, ast.AnnAssign)
                        and isinstance(s.target, ast.Name)
                        and s.target.id == CODE
                        and s.value is not None
                        and _is_str(s.value)
                        and not (isinstance(s.value, ast.Constant) and s.value.value == "")
                    ):
                        problem(s, f"a default code written as a string ({ast.unparse(s.value)})")
            elif isinstance(node, ast.Call):
                for keyword in node.keywords:
                    if keyword.arg == CODE:
                        text = _value_problem(keyword.value, strings, registry)
                        if text is not None:
                            problem(node, text)
                name = _callee(node)
                if name in records:
                    index = records[name]
                    if index is not None and len(node.args) > index:
                        problem(node, f"{name}(...) with its code by position: write code=...")
                    elif (
                        name == "Finding"
                        and not any(k.arg in (CODE, None) for k in node.keywords)
                        and (index is None or len(node.args) <= index)
                    ):
                        problem(node, "a Finding without a code")
            elif isinstance(node, ast.Compare):
                sides = [node.left, *node.comparators]
                if any(isinstance(s, ast.Attribute) and s.attr == CODE for s in sides):
                    for side in sides:
                        if (
                            isinstance(side, ast.Constant)
                            and isinstance(side.value, str)
                            and not codes.is_typescript(side.value)
                        ):
                            problem(node, f"a code compared with a string ({side.value!r}): "
                                    "use its constant from codes.py")  # fmt: skip
    return problems


def test_no_module_makes_a_code_outside_the_registry() -> None:
    assert code_problems() == []


def test_the_walk_knows_every_record_with_a_code_field() -> None:
    records: set[str] = set()
    for path in PACKAGE.rglob("*.py"):
        if path != REGISTRY_MODULE:
            records.update(_code_fields(ast.parse(path.read_text("utf-8"))))
    assert records == RECORDS_WITH_A_CODE_FIELD


PLANTED = [
    # (module, text appended to it): each makes one code outside the registry.
    (
        "trail/parse/unified.py",
        "def _planted(reader: Reader, node: YMap) -> None:\n"
        "    reader.error(node, '', 'planted', code='made-up')\n",
    ),
    (
        "toolmodel/tooldefs/yamltool.py",
        "def _planted(loader: Loader, node: YNode) -> None:\n"
        "    loader.error('x.tool.yaml', node, '', 'planted', code=f'made-{1}')\n",
    ),
    (
        "check/crosstrail.py",
        "def _planted() -> Finding:\n"
        "    return Finding('warning', 'a', 1, 1, 'planted', code='made-up', fatal=False)\n",
    ),
    (
        "check/crosstrail.py",
        "def _planted() -> Finding:\n"
        "    return Finding('warning', 'a', 1, 1, 'planted', '', 'made-up')\n",
    ),
    (
        "check/crosstrail.py",
        "def _planted() -> Finding:\n    return Finding('warning', 'a', 1, 1, 'planted')\n",
    ),
    (
        "generate/codegen.py",
        "MADE_UP = 'made-up'\n"
        "def _planted() -> Finding:\n"
        "    return Finding('warning', 'a', 1, 1, 'planted', code=MADE_UP)\n",
    ),
    (
        "trail/runif.py",
        "def _planted() -> Finding:\n"
        "    return Finding('runif', 'a', 1, 1, 'planted', code=codes.RUNIF_MADE_UP)\n",
    ),
    (
        "check/typegate/settings.py",
        "def _planted(path: str, code: str = 'typegate') -> None:\n    pass\n",
    ),
    (
        "check/typegate/settings.py",
        "def _planted(path: str, *, code: str = 'made-up') -> None:\n    pass\n",
    ),
    (
        "trail/argtokens.py",
        "def _planted() -> TokenProblem:\n"
        "    return TokenProblem(offset=0, token='', message='m', code='made-up')\n",
    ),
    (
        "cli/scope.py",
        "def _planted(finding: Finding) -> bool:\n    return finding.code == 'made-up'\n",
    ),
    (
        "yaml/schema.py",
        "def _planted(ok: bool) -> SchemaIssue:\n"
        "    return SchemaIssue(line=1, column=1, key_path='', message='m',\n"
        "                       code=codes.EMPTY if ok else 'made-up')\n",
    ),
]


@pytest.mark.parametrize(
    ("module", "text"), PLANTED, ids=[f"{m}-{i}" for i, (m, _) in enumerate(PLANTED)]
)
def test_a_code_made_outside_the_registry_is_found(module: str, text: str) -> None:
    # The same walk over the package with one code planted at the end of one module.
    found = code_problems(planted={module: "\n\n" + text})
    assert len(found) == 1, found
    assert found[0].startswith(f"trailblaze/{module}:")


# -- at run time: the codes reports carry ---------------------------------------------------------


def unregistered(found: list[str] | set[str]) -> list[str]:
    """The codes of `found` that have no entry in the registry."""
    return sorted(code for code in set(found) if codes.lookup(code) is None)


def test_every_code_of_the_golden_reports_is_registered() -> None:
    reports = DATA / "golden" / "reports"
    found = {f["code"] for f in json.loads((reports / "report.json").read_text())["findings"]}
    sarif = json.loads((reports / "report.sarif").read_text())
    rules = {r["id"] for run in sarif["runs"] for r in run["tool"]["driver"]["rules"]}
    assert found
    assert rules == found
    assert unregistered(found) == []


def test_an_unregistered_code_is_found() -> None:
    assert unregistered(["TS2322", "unknown-key", "made-up", ""]) == ["", "made-up"]
