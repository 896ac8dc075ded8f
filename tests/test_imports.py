"""No import cycles anywhere in the ``trailblaze`` package, and the fake device kept apart.

A cycle fails the test with its modules and one shortest path round it; the only exceptions
are the imports in ``KNOWN_BACK_EDGES``, each named with its fix, which fail the test once
they no longer close a cycle.

The graph is built from the source (``ast``), not by importing: a module ``A`` depends on ``B``
when ``A`` imports ``B`` anywhere in its body. Every import counts:

- module-level imports, including those under ``try`` / ``if`` at module level;
- ``if TYPE_CHECKING:`` imports: a type-only import is still one module knowing another's
  shape, and a back-pointer typed that way is exactly the design cycle this test exists for;
- function-level ("lazy") imports: laziness changes when the cost is paid, not who depends on
  whom. (``replay.run`` imports ``replay.adb`` lazily so that ``doit check`` runs without
  adbutils; that is an optional dependency, never a reason to close a loop.)

``from pkg import name`` depends on the submodule ``pkg.name`` when there is one, else on
``pkg`` itself. A submodule does not depend on its parent package just because Python runs the
parent's ``__init__`` first: that is how packages load, not a design choice, and counting it
would make every package whose ``__init__`` re-exports its submodules a cycle.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

PACKAGE_DIR = Path(__file__).resolve().parent.parent / "trailblaze"
FAKE_DIR = PACKAGE_DIR.parent / "fakeadb"
"""The fake adb server and device: test support beside the package, not in its wheel."""

Graph = Mapping[str, frozenset[str]]


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imported(node: ast.Import | ast.ImportFrom, module: str, is_package: bool) -> Iterator[str]:
    """The names an import statement asks for: ``pkg.sub`` candidates first, then ``pkg``."""
    if isinstance(node, ast.Import):
        for alias in node.names:
            yield alias.name
        return
    if node.level:
        # The package a relative import is relative to: the module's own for an __init__.
        anchor = module.split(".")
        anchor = anchor if is_package else anchor[:-1]
        anchor = anchor[: len(anchor) - (node.level - 1)]
        base = ".".join([*anchor, node.module] if node.module else anchor)
    else:
        base = node.module or ""
    for alias in node.names:
        yield f"{base}.{alias.name}"
    yield base


def import_graph(*roots: Path) -> dict[str, frozenset[str]]:
    """Each module of the packages -> the packages' modules it imports (anywhere in its body)."""
    paths = {
        module_name(p, root): p
        for root in roots or (PACKAGE_DIR,)
        for p in sorted(root.rglob("*.py"))
    }
    graph: dict[str, frozenset[str]] = {}
    for name, path in paths.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        is_package = path.name == "__init__.py"
        targets: set[str] = set()
        for node in ast.walk(tree):
            if not isinstance(node, ast.Import | ast.ImportFrom):
                continue
            if isinstance(node, ast.Import):
                targets.update(t for t in _imported(node, name, is_package) if t in paths)
                continue
            *submodules, base = _imported(node, name, is_package)
            found = [t for t in submodules if t in paths]
            # `from pkg import name`: the submodule when `name` is one, else pkg's own body.
            if len(found) < len(submodules) and base in paths:
                found.append(base)
            targets.update(found)
        targets.discard(name)
        graph[name] = frozenset(targets)
    return graph


@functools.cache
def package_graph() -> Graph:
    """The graph of ``trailblaze`` itself, built once for all the tests here."""
    return import_graph()


@functools.cache
def with_fake_graph() -> Graph:
    """The graph of ``trailblaze`` and the fake device together."""
    return import_graph(PACKAGE_DIR, FAKE_DIR)


def strongly_connected(graph: Graph) -> list[list[str]]:
    """Tarjan's algorithm (iterative): the components, each sorted, in a stable order."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    components.append(sorted(component))
    return sorted(components)


def shortest_cycle(graph: Graph, members: list[str]) -> list[str]:
    """One shortest cycle inside a component, as ``[a, b, ..., a]``."""
    inside = set(members)
    best: list[str] | None = None
    for start in members:
        parents: dict[str, str] = {}
        frontier = [start]
        found = None
        while frontier and found is None:
            following = []
            for node in frontier:
                for nxt in sorted(graph[node] & inside):
                    if nxt == start:
                        found = node
                        break
                    if nxt not in parents:
                        parents[nxt] = node
                        following.append(nxt)
                if found is not None:
                    break
            frontier = following
        if found is None:
            continue
        path = [found]
        while path[-1] != start:
            path.append(parents[path[-1]])
        cycle = [*reversed(path), start]
        if best is None or len(cycle) < len(best):
            best = cycle
    assert best is not None
    return best


def cycles(graph: Graph) -> list[list[str]]:
    """One shortest cycle per strongly connected component that has one."""
    return [shortest_cycle(graph, c) for c in strongly_connected(graph) if len(c) > 1]


def describe(graph: Graph) -> str:
    lines = []
    for component in strongly_connected(graph):
        if len(component) > 1:
            lines.append(
                f"{len(component)} modules in one cycle: {', '.join(component)}\n"
                f"  for example: {' -> '.join(shortest_cycle(graph, component))}"
            )
    return "\n".join(lines)


#: Imports known to close a cycle, owned elsewhere: the graph without them must have none. Each
#: is removed here when it is gone (the test fails on an entry that no longer closes a cycle).
KNOWN_BACK_EDGES: frozenset[tuple[str, str]] = frozenset(set())


def reachable(graph: Graph, start: str, target: str) -> bool:
    seen, todo = {start}, [start]
    while todo:
        for nxt in graph[todo.pop()]:
            if nxt == target:
                return True
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return False


def test_the_package_has_no_import_cycles() -> None:
    graph = package_graph()
    pruned = {m: deps - {b for a, b in KNOWN_BACK_EDGES if a == m} for m, deps in graph.items()}
    found = cycles(pruned)
    assert not found, f"{len(found)} import cycle(s) in trailblaze:\n{describe(pruned)}"
    stale = sorted(edge for edge in KNOWN_BACK_EDGES if not reachable(graph, edge[1], edge[0]))
    assert not stale, f"no longer closing a cycle, remove from KNOWN_BACK_EDGES: {stale}"


FAKE = "fakeadb"
#: What the fake device may use of the product: the protocol it implements (``ShellDevice``,
#: ``KeyCode``), the bounds type of a screen, and the YAML boundary its spec files go through.
FAKE_MAY_IMPORT = frozenset(
    {
        "trailblaze.replay.device",
        "trailblaze.replay.hierarchy",
        "trailblaze.yaml.node",
        # The root of user errors (a bad spec is one); it imports nothing of the package.
        "trailblaze.errors",
    }
)


def _in_fake(module: str) -> bool:
    return module == FAKE or module.startswith(FAKE + ".")


def test_nothing_in_the_product_imports_the_fake_device() -> None:
    graph = with_fake_graph()
    assert any(map(_in_fake, graph)), "the fake device's modules are in the graph"
    users = {m: sorted(filter(_in_fake, deps)) for m, deps in graph.items() if not _in_fake(m)}
    assert {m: deps for m, deps in users.items() if deps} == {}


def test_the_fake_device_imports_only_what_it_fakes() -> None:
    graph = with_fake_graph()
    outside = {d for m, deps in graph.items() if _in_fake(m) for d in deps if not _in_fake(d)}
    assert outside <= FAKE_MAY_IMPORT, sorted(outside - FAKE_MAY_IMPORT)


def test_the_graph_sees_every_kind_of_import(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    files = {
        "__init__.py": "from pkg.a import A\n",
        "a.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.b import B\nA = 1\n",
        "b.py": "def lazy():\n    from . import c\n",
        "c.py": "import pkg.sub.d\n",
        "sub/__init__.py": "from .d import D\n",
        "sub/d.py": "from .. import e\nD = 1\n",
        "e.py": "from pkg import a\n",
        "f.py": "import os\nfrom pkg import nothing_here\nfrom pkg.sub import D\n",
    }
    for name, text in files.items():
        (pkg / name).write_text(text, encoding="utf-8")
    graph = import_graph(pkg)
    assert graph == {
        "pkg": frozenset({"pkg.a"}),
        "pkg.a": frozenset({"pkg.b"}),  # under TYPE_CHECKING
        "pkg.b": frozenset({"pkg.c"}),  # inside a function, relative
        "pkg.c": frozenset({"pkg.sub.d"}),
        "pkg.sub": frozenset({"pkg.sub.d"}),
        "pkg.sub.d": frozenset({"pkg.e"}),  # `from .. import e` is the module pkg.e
        "pkg.e": frozenset({"pkg.a"}),
        # Names that are no submodules: the package's own __init__ (os is not ours).
        "pkg.f": frozenset({"pkg", "pkg.sub"}),
    }
    assert cycles(graph) == [["pkg.a", "pkg.b", "pkg.c", "pkg.sub.d", "pkg.e", "pkg.a"]]
    assert describe(graph).startswith("5 modules in one cycle: pkg.a, pkg.b, pkg.c, pkg.e, ")


@pytest.mark.parametrize(
    ("graph", "expected"),
    [
        ({"a": frozenset({"b"}), "b": frozenset()}, []),
        ({"a": frozenset({"b"}), "b": frozenset({"a"})}, [["a", "b", "a"]]),
        (
            {
                "a": frozenset({"b"}),
                "b": frozenset({"c"}),
                "c": frozenset({"a", "b"}),
                "x": frozenset({"y"}),
                "y": frozenset({"x"}),
            },
            [["b", "c", "b"], ["x", "y", "x"]],
        ),
    ],
)
def test_cycles_are_found_and_named(graph: Graph, expected: list[list[str]]) -> None:
    assert cycles(graph) == expected
