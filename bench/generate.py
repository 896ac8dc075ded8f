"""Synthetic workspaces for the benchmark, deterministic from a seed.

`generate(root, Spec(trails=1000))` writes a compact-layout workspace::

    <root>/dodo.py                                  from trailblaze.doit_tasks import DOIT_CONFIG, task_check
    <root>/trailmaps/lib/trailmap.yaml              a library trailmap exporting one composed tool
    <root>/trailmaps/lib/tools/lib_dismissKeyboard.tool.yaml
    <root>/trailmaps/appNN/trailmap.yaml            T target trailmaps (android, ios, web)
    <root>/trailmaps/appNN/tools/appNN_signIn.tool.yaml, appNN_openSection.tool.yaml  (composed)
    <root>/trailmaps/appNN/tools/appNN_openItem.ts  one scripted tool: trailblaze.tool<I, string>(...)
    <root>/trailmaps/appNN/trails/<area>/...        the trails, N in all

and, next to the workspace, `<root>.manifest.json`: what was generated, which trails the type
gate must check (`eligible`), the planted type errors (exactly one per erroneous trail, with the
YAML line the finding must point at and the TypeScript code), and the two edit points the
benchmark uses (a text argument in one trail, the description of one composed tool).

The trails mix the catalog's recordable tools with arguments drawn from their JSON Schemas:
node selectors nested up to three levels (`childOf`, `containsChild`, `below`, ...), enums,
booleans, integers, string lists, free-form objects, strings with odd characters in every YAML
quoting style; both trail formats (unified and legacy list), several classifiers (`android`,
`android-phone`, `ios-iphone`, `web`), trailheads, natural-language-only steps, runIf trees,
calls to the composed, exported and scripted tools, and `config.args` with `{{args.x}}` tokens.

`python -m bench.generate OUT --trails N [--trailmaps T] [--seed S]` writes one by hand.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import random
import re
import shutil
import sys
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar

from trailblaze.toolmodel.catalog import Catalog, Tool, load_catalog

GENERATOR_VERSION = "3"
DODO = "from trailblaze.doit_tasks import DOIT_CONFIG, task_check  # noqa: F401\n"
EDIT_TEXT = "Bench edit target"
LIB = "lib"
LIB_TOOL = "lib_dismissKeyboard"

# The planted errors and the codes TypeScript 7 reports for them (the first is the usual one):
ERROR_KINDS: dict[str, tuple[str, ...]] = {
    # a number for a boolean, a boolean for an integer
    "wrong_primitive": ("TS2322",),
    # "0500" for an integer argument (a quoted canonical number, "500", is converted at replay
    # as the reference's runtime does: a non-fatal `quoted-number` warning, not an error)
    "quoted_number": ("TS2322",),
    # an argument the tool does not declare (TS2561 "did you mean" when tsc finds a close name,
    # TS2322 "not assignable to never" for a tool that takes no arguments at all)
    "unknown_argument": ("TS2353", "TS2561", "TS2322"),
    # a value outside the enum, in any case (enums are case-insensitive, as at replay)
    "bad_enum": ("TS2322", "TS2820"),
    # a misspelled field of a driver match, maybe in a nested selector
    "unknown_selector_field": ("TS2353", "TS2561"),
    # a tool name one letter off (TS2551 "did you mean", TS2339 when tsc has no suggestion)
    "misspelled_tool": ("TS2551", "TS2339"),
    # a required argument left out
    "missing_required": ("TS2741",),
}

CLASSIFIER_SETS: tuple[tuple[str, ...], ...] = (
    ("android",),
    ("android",),
    ("android-phone", "ios-iphone"),
    ("android-phone", "ios-iphone"),
    ("ios-iphone",),
    ("web",),
    ("android", "web"),
)
DEVICES = {
    "android": "ANDROID_ONDEVICE_ACCESSIBILITY",
    "android-phone": "ANDROID_ONDEVICE_INSTRUMENTATION",
    "ios-iphone": "IOS_HOST",
    "web": "PLAYWRIGHT_NATIVE",
}
PLATFORM = {"android": "android", "android-phone": "android", "ios-iphone": "ios", "web": "web"}
SELECTOR_DRIVERS = {
    "android": (("androidAccessibility", 4), ("androidMaestro", 1)),
    "ios": (("iosMaestro", 3), ("iosAxe", 2)),
    "web": (("web", 1),),
}
DRIVER_DEFS = {
    "androidAccessibility": "DriverNodeMatchAndroidAccessibility",
    "androidMaestro": "DriverNodeMatchAndroidMaestro",
    "iosMaestro": "DriverNodeMatchIosMaestro",
    "iosAxe": "DriverNodeMatchIosAxe",
    "web": "DriverNodeMatchWeb",
}
RELATIONS = ("childOf", "containsChild", "below", "above", "leftOf", "rightOf")
AREAS = (
    "onboarding",
    "login",
    "search",
    "checkout",
    "settings",
    "profile",
    "catalogue",
    "cart",
    "notifications",
    "support",
)
WORDS = (
    "Buy",
    "Continue",
    "Save",
    "Cancel",
    "Next",
    "Done",
    "Open settings",
    "Add to cart",
    "Sign in",
    "Checkout",
    "Search results",
    "Espresso machine",
    "Order history",
    "Privacy policy",
    "Dark mode",
    "Notifications",
    "Help centre",
    "Weekly plan",
    "Packing list",
    "Delete account",
)
# Strings that need quoting, escaping or care: every one must survive YAML and TypeScript.
ODD = (
    "Price: $4.99",
    "50% off!",
    '"Quoted" title',
    "C:\\Users\\demo\\file.txt",
    "#hashtag",
    "emoji 🎉 ok",
    "Ünïcödé façade – ñ",
    "a & b < c > d",
    "tab\tseparated",
    "line one\nline two",
    "back`tick ${not a token",
    "it's here",
    "*starred",
    "- leading dash",
    "[in brackets]",
    "{in braces}",
    "@mention",
    "  leading spaces",
    "trailing space ",
    "null",
    "true",
    "007",
    "1e3",
    "0x1F",
    "12:30",
    "~",
    "yes",
    "日本語のテキスト",
    "</script><b>",
    "semi; colon, comma",
)
STEP_VERBS = ("Open", "Tap", "Check", "Scroll to", "Type into", "Dismiss", "Verify", "Go back from")


class Lines:
    """A YAML document under construction, one line at a time (lines are 1-based)."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def add(self, text: str) -> int:
        self.lines.append(text)
        return len(self.lines)

    @property
    def next(self) -> int:
        return len(self.lines) + 1

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


# -- YAML scalars ---------------------------------------------------------------------------

_PLAIN = re.compile(r"[A-Za-z][A-Za-z0-9 _.,/()'!?-]*[A-Za-z0-9).!?]|[A-Za-z]")
_RESERVED = frozenset({"true", "false", "null", "yes", "no", "on", "off", "y", "n", "nan", "inf"})


class Quoted(str):
    """A string that must be written quoted (double quotes)."""

    __slots__ = ()


def scalar(value: Any, *, flow: bool = False) -> str:
    """One YAML scalar, plain when that reads back as the same string, else quoted."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return f"{value:.2f}"
    if value is None:
        return "null"
    text = str(value)
    if (
        not isinstance(value, Quoted)
        and not flow
        and _PLAIN.fullmatch(text)
        and text.lower() not in _RESERVED
    ):
        return text
    # Single quotes for some (deterministically), double quotes (JSON escapes) for the rest.
    if (
        not isinstance(value, Quoted)
        and _simple(text)
        and hashlib.md5(text.encode()).digest()[0] < 80
    ):
        return "'" + text.replace("'", "''") + "'"
    return json.dumps(text, ensure_ascii=False)


def _simple(text: str) -> bool:
    return all(ch >= " " and ch != "\x7f" for ch in text)


def emit_kv(out: Lines, indent: int, key: str, value: Any) -> int:
    """`key: value` at `indent`, block style; returns the key's line."""
    pad = " " * indent
    if isinstance(value, dict):
        if not value:
            return out.add(f"{pad}{key}: {{}}")
        line = out.add(f"{pad}{key}:")
        for k, v in value.items():
            emit_kv(out, indent + 2, k, v)
        return line
    if isinstance(value, list):
        if not value:
            return out.add(f"{pad}{key}: []")
        if all(not isinstance(v, dict | list) for v in value) and len(value) <= 4:
            return out.add(f"{pad}{key}: [{', '.join(scalar(v, flow=True) for v in value)}]")
        line = out.add(f"{pad}{key}:")
        for item in value:
            emit_item(out, indent + 2, item)
        return line
    return out.add(f"{pad}{key}: {scalar(value)}")


def _line_of(doc: Lines, line: int, keys: tuple[str, ...]) -> int:
    """The line of the argument `keys` lead to in the block-style call emitted at `line`."""
    for key in keys:
        line = next(
            n
            for n in range(line + 1, len(doc.lines) + 1)
            if doc.lines[n - 1].strip().removeprefix("- ").startswith(f"{key}:")
        )
    return line


def emit_item(out: Lines, indent: int, item: Any) -> int:
    """`- item` at `indent`; a mapping's first key shares the dash line. Returns that line."""
    pad = " " * indent
    if isinstance(item, dict) and item:
        first_line = 0
        for i, (k, v) in enumerate(item.items()):
            if i == 0:
                sub = Lines()
                emit_kv(sub, indent + 2, k, v)
                sub.lines[0] = f"{pad}- {sub.lines[0][indent + 2 :]}"
                first_line = out.next
                out.lines.extend(sub.lines)
            else:
                emit_kv(out, indent + 2, k, v)
        return first_line
    if isinstance(item, dict):
        return out.add(f"{pad}- {{}}")
    return out.add(f"{pad}- {scalar(item)}")


# -- what to generate -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Spec:
    trails: int
    trailmaps: int = 0
    """Target trailmaps; 0 picks about sqrt(trails)/4 (2 at 100, 8 at 1,000, 25 at 10,000)."""
    seed: int = 7
    error_rate: float = 0.05
    mean_calls: int = 20

    @property
    def targets(self) -> int:
        if self.trailmaps > 0:
            return self.trailmaps
        return max(2, round(math.sqrt(self.trails) / 4))


@dataclass(frozen=True, slots=True)
class PlantedError:
    trail: str
    kind: str
    tool: str
    line: int
    code: str


@dataclass
class Manifest:
    generator: str
    spec: dict[str, Any]
    trailmaps: list[str]
    trails: list[str] = field(default_factory=list)
    eligible: list[str] = field(default_factory=list)
    """Trails the type gate checks: a target, at least one recorded call."""
    by_trailmap: dict[str, list[str]] = field(default_factory=dict)
    """Eligible trails per target trailmap."""
    calls: int = 0
    """Recorded calls of the eligible trails (runIf trees and their branches included)."""
    formats: dict[str, int] = field(default_factory=dict)
    errors: list[PlantedError] = field(default_factory=list)
    edit: dict[str, Any] = field(default_factory=dict)
    """One trail's text argument: {trail, line, text} (the whole line)."""
    tool_edit: dict[str, Any] = field(default_factory=dict)
    """One composed tool's description: {file, trailmap, line, text}."""

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["errors"] = [asdict(e) for e in self.errors]
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Manifest:
        fields = dict(data)
        fields["errors"] = [PlantedError(**e) for e in data["errors"]]
        return cls(**fields)

    @classmethod
    def load(cls, path: Path) -> Manifest:
        return cls.from_json(json.loads(path.read_text("utf-8")))


def manifest_path(root: Path) -> Path:
    """The manifest of a generated workspace: next to it, `<root>.manifest.json`."""
    return root.parent / f"{root.name}.manifest.json"


# -- tools ----------------------------------------------------------------------------------


TOOL_WEIGHTS = {
    "tapOnElementBySelector": 8,
    "assertVisibleBySelector": 6,
    "tapOnElementWithText": 5,
    "inputText": 5,
    "assertVisibleWithText": 5,
    "scrollUntilTextIsVisible": 3,
    "web_click": 6,
    "web_type": 4,
    "web_verifyTextVisible": 4,
    "web_verifyElementVisible": 3,
    "swipe": 2,
    "pressKey": 2,
    "wait": 2,
    "hideKeyboard": 2,
    "tapOn": 2,
}
"""Relative frequency of the common tools; every other recordable tool has weight 1."""


class ToolPool:
    """The catalog's recordable tools per platform, weighted toward the common ones."""

    SKIP: ClassVar[frozenset[str]] = frozenset({"runIf"})

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self.by_platform: dict[str, tuple[list[Tool], list[int]]] = {}
        tools = [
            t
            for t in catalog.recordable_tools()
            if t.surface and t.name not in self.SKIP and not t.deprecated
        ]
        for platform in ("android", "ios", "web"):
            chosen = [
                t
                for t in tools
                if (platform in t.platforms)
                or (not t.platforms and (platform != "web" or "nodeSelector" in _props(t)))
            ]
            weights = [TOOL_WEIGHTS.get(t.name, 1) for t in chosen]
            self.by_platform[platform] = (chosen, weights)

    def pick(self, rng: random.Random, platform: str) -> Tool:
        tools, weights = self.by_platform[platform]
        return rng.choices(tools, weights)[0]


def _props(tool: Tool) -> dict[str, Any]:
    return dict(tool.input_schema.get("properties", {}))


class Values:
    """Argument values drawn from JSON Schemas."""

    def __init__(self, catalog: Catalog, rng: random.Random, args: Sequence[str]) -> None:
        self.defs = catalog.defs
        self.rng = rng
        self.args = list(args)
        self.memory = False

    def text(self) -> str:
        rng = self.rng
        roll = rng.random()
        if roll < 0.12:
            return rng.choice(ODD)
        if roll < 0.2 and self.args:
            name = rng.choice(self.args)
            return rng.choice(
                (f"{{{{args.{name}}}}}", f"${{args.{name}}}", f"Hi {{{{args.{name}}}}}!")
            )
        if roll < 0.23 and self.memory:
            return "{{memory.greeting}}"
        word = rng.choice(WORDS)
        return word if rng.random() < 0.7 else f"{word} {rng.randint(1, 99)}"

    def resolve(self, schema: Mapping[str, Any]) -> tuple[Mapping[str, Any], str | None]:
        ref = schema.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            name = ref.removeprefix("#/$defs/")
            return self.defs[name], name
        for key in ("anyOf", "oneOf"):
            if key in schema:
                options = [o for o in schema[key] if o.get("type") != "null"]
                return self.resolve(options[0])
        return schema, None

    def value(self, schema: Mapping[str, Any], platform: str, depth: int = 0) -> Any:
        rng = self.rng
        schema, def_name = self.resolve(schema)
        if def_name == "TrailblazeNodeSelector":
            return self.selector(platform, 0)
        if "enum" in schema:
            return rng.choice(list(schema["enum"]))
        kind = schema.get("type")
        if isinstance(kind, list):
            kind = next(k for k in kind if k != "null")
        if kind == "string":
            return self.text()
        if kind == "integer":
            return rng.choice((0, 1, 2, 3, 5, 10, 250, 500, 1000, 3000))
        if kind == "number":
            return round(rng.uniform(0, 100), 2)
        if kind == "boolean":
            return rng.random() < 0.5
        if kind == "array":
            items = schema.get("items", {"type": "string"})
            return [self.value(items, platform, depth + 1) for _ in range(rng.randint(1, 3))]
        if kind == "object" or "properties" in schema:
            props = schema.get("properties")
            if not props:
                return {rng.choice(("tapOn", "assertVisible", "inputText")): rng.choice(WORDS)}
            if depth > 3:
                return {}
            return self.args_for(schema, platform, depth + 1)
        return self.text()

    def args_for(self, schema: Mapping[str, Any], platform: str, depth: int = 0) -> dict[str, Any]:
        props = dict(schema.get("properties", {}))
        required = set(schema.get("required", ()))
        out: dict[str, Any] = {}
        for name, sub in props.items():
            keep = name in required
            if not keep:
                odds = 0.9 if name in ("nodeSelector", "selector") else 0.3
                keep = self.rng.random() < odds
            if keep:
                out[name] = self.value(sub, platform, depth)
        return out

    def selector(self, platform: str, depth: int) -> dict[str, Any]:
        rng = self.rng
        names, weights = zip(*SELECTOR_DRIVERS[platform], strict=True)
        driver = rng.choices(names, weights)[0]
        fields = dict(self.defs[DRIVER_DEFS[driver]]["properties"])
        chosen = rng.sample(sorted(fields), k=min(len(fields), rng.choice((1, 1, 2, 2, 3))))
        match = {name: self.value(fields[name], platform, 9) for name in chosen}
        sel: dict[str, Any] = {driver: match}
        if depth < 3 and rng.random() < (0.45 if depth == 0 else 0.3):
            sel[rng.choice(RELATIONS)] = self.selector(platform, depth + 1)
        if depth == 0 and rng.random() < 0.05:
            sel["containsDescendants"] = [
                self.selector(platform, depth + 2) for _ in range(rng.randint(1, 2))
            ]
        if rng.random() < 0.1:
            sel["index"] = rng.randint(0, 3)
        return sel


# -- trails ---------------------------------------------------------------------------------


@dataclass
class Call:
    name: str
    args: dict[str, Any]
    error: PlantedError | None = None
    edit: bool = False
    at: tuple[str, ...] = ()
    """The keys down to the argument at fault, the line its finding points at (the call's when
    empty: a misspelled tool, a missing required argument)."""


@dataclass
class TrailPlan:
    index: int
    trailmap: str
    rel: str
    fmt: str  # "unified", "legacy", "draft"
    classifiers: tuple[str, ...]
    error_kind: str | None
    is_edit: bool


class TrailWriter:
    def __init__(self, catalog: Catalog, pool: ToolPool, spec: Spec) -> None:
        self.catalog = catalog
        self.pool = pool
        self.spec = spec

    # One call of the trail, ordinary or erroneous.
    def call(self, rng: random.Random, values: Values, platform: str, trailmap: str) -> Call:
        roll = rng.random()
        if roll < 0.03 and platform != "web":
            args: dict[str, Any] = {"title": values.text()}
            if rng.random() < 0.5:
                args["quantity"] = rng.randint(1, 5)
            if rng.random() < 0.4:
                args["pin"] = rng.random() < 0.5
            return Call(f"{trailmap}_openItem", args)
        if roll < 0.05:
            args = {
                "email": rng.choice(("ada@example.com", "{{memory.email}}", "bob+test@example.org"))
            }
            if rng.random() < 0.5:
                args["remember"] = rng.random() < 0.5
            return Call(f"{trailmap}_signIn", args)
        if roll < 0.065:
            args = {"section": rng.choice(AREAS)}
            if rng.random() < 0.5:
                args["retries"] = rng.randint(0, 3)
            return Call(f"{trailmap}_openSection", args)
        if roll < 0.08 and platform != "web":
            return Call(
                LIB_TOOL, {"settleSeconds": rng.randint(0, 2)} if rng.random() < 0.5 else {}
            )
        tool = self.pool.pick(rng, platform)
        return Call(tool.name, values.args_for(tool.input_schema, platform))

    def runif(
        self, rng: random.Random, values: Values, platform: str, trailmap: str
    ) -> tuple[Call, int]:
        then = [self.call(rng, values, platform, trailmap) for _ in range(rng.randint(1, 2))]
        args: dict[str, Any] = {
            "condition": {"selector": values.selector(platform, 1)},
            "then": [{c.name: c.args} for c in then],
        }
        count = 1 + len(then)
        if rng.random() < 0.4:
            otherwise = [
                self.call(rng, values, platform, trailmap) for _ in range(rng.randint(1, 2))
            ]
            args["else"] = [{c.name: c.args} for c in otherwise]
            count += len(otherwise)
        return Call("runIf", args), count

    def broken(
        self, rng: random.Random, kind: str, platform: str, values: Values, rel: str
    ) -> Call:
        """A call carrying exactly one type error of `kind`."""
        pool = self.pool.by_platform[platform][0]

        def with_prop(pred: Any) -> tuple[Tool, str]:
            options = [(t, n) for t in pool for n, s in _props(t).items() if pred(s)]
            return rng.choice(options)

        def base(tool: Tool) -> dict[str, Any]:
            return values.args_for(tool.input_schema, platform)

        code = ERROR_KINDS[kind][0]
        at: tuple[str, ...] = ()
        if kind == "wrong_primitive":
            tool, prop = with_prop(lambda s: s.get("type") in ("boolean", "integer"))
            args = base(tool)
            args[prop] = 5 if _props(tool)[prop]["type"] == "boolean" else True
            at = (prop,)
        elif kind == "quoted_number":
            tool, prop = with_prop(lambda s: s.get("type") == "integer")
            args = base(tool)
            args[prop] = Quoted(f"0{rng.choice((3, 250, 500, 1000))}")
            at = (prop,)
        elif kind == "unknown_argument":
            tool = rng.choice(pool)
            args = base(tool)
            extra = rng.choice(("colour", "timeoutSecs", "retry", "textt", "force"))
            while extra in _props(tool):
                extra += "X"
            args[extra] = rng.choice((values.text(), True, 3))
            at = (extra,)
            if not _props(tool):
                code = "TS2322"
        elif kind == "bad_enum":
            tool, prop = with_prop(lambda s: "enum" in s)
            args = base(tool)
            allowed = {str(v) for v in _props(tool)[prop]["enum"]}
            wrong = [v for v in ("SIDEWAYS", "sometimes", "Diagonal") if v.upper() not in allowed]
            args[prop] = rng.choice(wrong)
            at = (prop,)
        elif kind == "unknown_selector_field":
            tool, prop = with_prop(lambda s: "TrailblazeNodeSelector" in json.dumps(s))
            args = base(tool)
            sel = values.selector(platform, 1)
            inner = sel
            relation: tuple[str, ...] = ()
            if rng.random() < 0.5:
                relation = (rng.choice(RELATIONS),)
                inner = sel.setdefault(relation[0], values.selector(platform, 3))
            driver = next(k for k in inner if k in DRIVER_DEFS)
            fields = sorted(self.catalog.defs[DRIVER_DEFS[driver]]["properties"])
            real = rng.choice(fields)
            wrong_field = _misspell(real, set(fields))
            inner[driver] = {wrong_field: values.text()}
            args[prop] = sel
            at = (prop, *relation, driver, wrong_field)
        elif kind == "misspelled_tool":
            tool = rng.choice([t for t in pool if len(t.name) > 6])
            args = base(tool)
            name = _misspell(tool.name, set(self.catalog.tools))
            return Call(name, args, PlantedError(rel, kind, name, 0, code))
        elif kind == "missing_required":
            tool = rng.choice([t for t in pool if tool_required(t)])
            args = base(tool)
            del args[rng.choice(tool_required(tool))]
        else:  # pragma: no cover - ERROR_KINDS is the list
            raise ValueError(kind)
        return Call(tool.name, args, PlantedError(rel, kind, tool.name, 0, code), at=at)

    # The whole trail.
    def write(
        self, plan: TrailPlan, out_path: Path
    ) -> tuple[list[PlantedError], int, dict[str, Any]]:
        rng = random.Random(f"{self.spec.seed}:trail:{plan.index}")
        doc = Lines()
        declared: list[str] = []
        budget = max(
            2, round(rng.triangular(self.spec.mean_calls * 0.4, self.spec.mean_calls * 1.6))
        )
        if plan.fmt == "draft":
            doc.add("# A natural-language draft: nothing recorded yet, so nothing to type-check.")
            doc.add("- config:")
            doc.add(f"    title: {scalar(_title(rng))}")
            doc.add(f"    target: {plan.trailmap}")
            doc.add("- prompts:")
            for _ in range(rng.randint(2, 4)):
                doc.add(f"    - step: {scalar(_title(rng))}")
            doc.add(f"    - verify: {scalar(_title(rng))}")
            _write(out_path, doc.text())
            return [], 0, {}
        if rng.random() < 0.2:
            declared = ["username"] + (["note"] if rng.random() < 0.5 else [])
        values = Values(self.catalog, rng, declared)
        values.memory = rng.random() < 0.1
        if rng.random() < 0.3:
            doc.add("# " + " ".join(_title(rng).split()))
        # Which recorded call gets the planted error or the edit point: chosen once the calls
        # are laid out, so pick an ordinal among the ordinary (top-level, non-trailhead) calls.
        slots: list[tuple[list[Any], int, str]] = []
        steps: list[tuple[str, str, bool, list[tuple[str, list[Any]]]]] = []
        counted = 0
        trailhead: list[tuple[str, Call]] = []
        platforms = [PLATFORM[c] for c in plan.classifiers]
        if rng.random() < 0.3 or plan.is_edit:
            for classifier in plan.classifiers:
                platform = PLATFORM[classifier]
                if platform == "web":
                    head = Call(
                        "web_navigate",
                        {"url": f"https://{plan.trailmap}.example.com/{rng.choice(AREAS)}"},
                    )
                else:
                    suffix = plan.trailmap if platform == "android" else plan.trailmap.capitalize()
                    head_args: dict[str, Any] = {"appId": f"com.example.{suffix}"}
                    if rng.random() < 0.6:
                        head_args["launchMode"] = rng.choice(
                            ("REINSTALL", "RESUME", "FORCE_RESTART")
                        )
                    head = Call("launchApp", head_args)
                trailhead.append((classifier, head))
                counted += 1
        while counted < budget:
            kind = "verify" if rng.random() < 0.25 else "step"
            label = _title(rng)
            roll = rng.random()
            if roll < 0.12 and steps:
                steps.append((kind, label, True, []))
                continue
            if roll < 0.15 and steps:
                steps.append((kind, label, False, []))
                continue
            recs: list[tuple[str, list[Any]]] = []
            for classifier, platform in zip(plan.classifiers, platforms, strict=True):
                items: list[Any] = []
                for _ in range(rng.randint(1, 4)):
                    if rng.random() < 0.012 and platform != "web" and slots:
                        call, n = self.runif(rng, values, platform, plan.trailmap)
                        items.append(call)
                        counted += n
                        continue
                    items.append(self.call(rng, values, platform, plan.trailmap))
                    slots.append((items, len(items) - 1, platform))
                    counted += 1
                recs.append((classifier, items))
            steps.append((kind, label, True, recs))
        errors: list[PlantedError] = []
        if plan.error_kind is not None:
            items, at, platform = slots[rng.randrange(len(slots))]
            items[at] = self.broken(rng, plan.error_kind, platform, values, plan.rel)
        if plan.is_edit:
            items, at, platform = slots[0]
            items[at] = Call("inputText", {"text": EDIT_TEXT}, edit=True)
        edit: dict[str, Any] = {}

        def put_call(indent: int, call: Call) -> None:
            line = emit_item(doc, indent, {call.name: call.args})
            if call.error is not None:
                errors.append(replace(call.error, line=_line_of(doc, line, call.at)))
            if call.edit:
                edit.update(trail=plan.rel, line=line + 1, text=doc.lines[line])

        if plan.fmt == "unified":
            doc.add("config:")
            doc.add(f"  id: {plan.rel.split('/trails/', 1)[-1].removesuffix('.trail.yaml')}")
            doc.add(f"  target: {plan.trailmap}")
            doc.add(f"  title: {scalar(_title(rng))}")
            if rng.random() < 0.3:
                doc.add(f"  description: {scalar(rng.choice(ODD + WORDS))}")
            if rng.random() < 0.3:
                doc.add(
                    f"  tags: [{', '.join(rng.sample(('smoke', 'regression', 'p0', 'nightly', 'flaky'), 2))}]"
                )
            if rng.random() < 0.2:
                doc.add(f"  priority: P{rng.randint(0, 3)}")
            doc.add("  devices:")
            for classifier in plan.classifiers:
                doc.add(f"    {classifier}: {DEVICES[classifier]}")
            _config_extras(doc, "  ", declared, values.memory, rng)
            doc.add("")
            if trailhead:
                doc.add("trailhead:")
                doc.add(f"  step: Launch {plan.trailmap} with a clean state")
                doc.add("  recording:")
                for classifier, head in trailhead:
                    doc.add(f"    {classifier}:")
                    emit_kv(doc, 6, head.name, head.args)
                doc.add("")
            doc.add("trail:")
            for kind, label, recordable, recs in steps:
                doc.add(f"  - {kind}: {scalar(label)}")
                if not recordable:
                    doc.add("    recordable: false")
                if not recs:
                    continue
                if rng.random() < 0.05:
                    doc.add(f"    maxRetries: {rng.randint(1, 3)}")
                doc.add("    recording:")
                for classifier, items in recs:
                    doc.add(f"      {classifier}:")
                    for item in items:
                        put_call(8, item)
                doc.add("")
        else:  # legacy
            doc.add("- config:")
            doc.add(f"    id: {plan.rel.split('/trails/', 1)[-1].removesuffix('.trail.yaml')}")
            doc.add(f"    title: {scalar(_title(rng))}")
            doc.add(f"    target: {plan.trailmap}")
            doc.add(f"    platform: {platforms[0]}")
            if rng.random() < 0.5:
                doc.add(f"    driver: {DEVICES[plan.classifiers[0]]}")
            if rng.random() < 0.3:
                doc.add("    tags: [legacy]")
            _config_extras(doc, "    ", declared, values.memory, rng)
            if trailhead:
                doc.add("- trailhead:")
                doc.add("    step: Start the app")
                doc.add("    tools:")
                for _, head in trailhead:
                    put_call(6, head)
            doc.add("- prompts:")
            for kind, label, recordable, recs in steps:
                doc.add(f"    - {kind}: {scalar(label)}")
                if not recordable:
                    doc.add("      recordable: false")
                if not recs:
                    continue
                doc.add("      recording:")
                doc.add("        tools:")
                for item in recs[0][1]:
                    put_call(10, item)
        _write(out_path, doc.text())
        return errors, counted, edit


def tool_required(tool: Tool) -> list[str]:
    # A tool whose only required argument is a selector loses too much realism when it goes.
    return [r for r in tool.required if r in _props(tool)]


def _misspell(name: str, taken: set[str]) -> str:
    for i in range(len(name) - 2, 1, -1):
        candidate = name[:i] + name[i + 1 :]
        if candidate not in taken and candidate != name:
            return candidate
    return name + "x"


def _title(rng: random.Random) -> str:
    title = f"{rng.choice(STEP_VERBS)} {rng.choice(WORDS).lower()}"
    if rng.random() < 0.1:
        title += f" ({rng.choice(ODD)})"
    return title


def _config_extras(
    doc: Lines, pad: str, declared: list[str], memory: bool, rng: random.Random
) -> None:
    if declared:
        doc.add(f"{pad}args:")
        doc.add(f"{pad}  username: string")
        if "note" in declared:
            doc.add(f"{pad}  note:")
            doc.add(f"{pad}    type: string")
            doc.add(f"{pad}    description: {scalar(rng.choice(ODD))}")
            doc.add(f"{pad}    default: {scalar(rng.choice(WORDS))}")
    if memory:
        doc.add(f"{pad}memory:")
        doc.add(f"{pad}  greeting: Welcome back")


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


# -- trailmaps ------------------------------------------------------------------------------


def _trailmap_files(trailmap: str, index: int) -> dict[str, str]:
    title = f"App {index:02d}"
    cls = "".join(part.capitalize() for part in trailmap.split("_"))
    tool_sets = (
        "      tool_sets:\n        - core_interaction\n        - navigation\n        - verification\n"
        if index % 3 == 0
        else ""
    )
    return {
        "trailmap.yaml": (
            f"# {title}: a synthetic target of the benchmark.\n"
            f"id: {trailmap}\n"
            "dependencies:\n  - trailblaze\n  - lib\n"
            "target:\n"
            f"  display_name: {title}\n"
            "  platforms:\n"
            "    android:\n"
            f"      app_ids:\n        - com.example.{trailmap}\n"
            f"{tool_sets}"
            "    ios:\n"
            f"      app_ids:\n        - com.example.{trailmap.capitalize()}\n"
            f"      tools:\n        - {trailmap}_openItem\n"
            "    web:\n"
            f"      base_url: https://{trailmap}.example.com\n"
        ),
        f"tools/{trailmap}_signIn.tool.yaml": (
            f"id: {trailmap}_signIn\n"
            f"description: Sign in to {title} with an e-mail address.\n"
            "parameters:\n"
            "  - name: email\n    type: string\n    required: true\n"
            "    description: The account's e-mail address.\n"
            "  - name: remember\n    type: boolean\n    required: false\n"
            "    description: Tick 'Remember me' before signing in.\n"
            "tools:\n"
            "  - tapOnElementWithText:\n      text: Sign in\n"
            '  - inputText:\n      text: "{{params.email}}"\n'
            "  - tapOnElementWithText:\n      text: Continue\n"
        ),
        f"tools/{trailmap}_openSection.tool.yaml": (
            f"id: {trailmap}_openSection\n"
            f"description: Open a section of {title} from its main menu.\n"
            "parameters:\n"
            "  - name: section\n    type: string\n    required: true\n"
            "  - name: retries\n    type: integer\n    required: false\n"
            "tools:\n"
            "  - tapOnElementWithAccessibilityText:\n      accessibilityText: Menu\n"
            '  - tapOnElementWithText:\n      text: "{{params.section}}"\n'
        ),
        f"tools/{trailmap}_openItem.ts": (
            f"// The scripted tool of {title}: its input type is declared here, in TypeScript.\n"
            'import { trailblaze } from "@trailblaze/scripting";\n'
            "\n"
            f"export interface {cls}OpenItemInput {{\n"
            "  /** Title of the item, exactly as listed. */\n"
            "  title: string;\n"
            "  /** How many to add. */\n"
            "  quantity?: number;\n"
            "  /** Pin it to the top of the list. */\n"
            "  pin?: boolean;\n"
            "}\n"
            "\n"
            f"/** Open an item of {title} by its title. */\n"
            f"export const {trailmap}_openItem = trailblaze.tool<{cls}OpenItemInput, string>(\n"
            f'  {{ description: "Open an item of {title} by its title." }},\n'
            "  async (input, ctx) => {\n"
            "    await ctx.tools.tapOnElementWithText({ text: input.title });\n"
            "    if (input.pin) {\n"
            "      await ctx.tools.longPressOnElementWithText({ text: input.title });\n"
            "    }\n"
            "    return `opened ${input.title}`;\n"
            "  },\n"
            ");\n"
        ),
    }


LIB_FILES = {
    "trailmap.yaml": (
        "# A library trailmap: tools every app of the workspace can record.\n"
        f"id: {LIB}\n"
        f"exports:\n  - {LIB_TOOL}\n"
    ),
    f"tools/{LIB_TOOL}.tool.yaml": (
        f"id: {LIB_TOOL}\n"
        "description: Hide the on-screen keyboard if it is showing, then wait for the screen to settle.\n"
        "parameters:\n"
        "  - name: settleSeconds\n    type: integer\n    required: false\n"
        "    description: How long to wait after hiding the keyboard.\n"
        "tools:\n"
        "  - hideKeyboard: {}\n"
        '  - wait:\n      timeToWaitInSeconds: "{{params.settleSeconds}}"\n'
    ),
}


# -- the workspace --------------------------------------------------------------------------


def plan_trails(spec: Spec) -> list[TrailPlan]:
    rng = random.Random(f"{spec.seed}:plan:{spec.trails}")
    targets = [f"app{i:02d}" for i in range(spec.targets)]
    plans: list[TrailPlan] = []
    for i in range(spec.trails):
        trailmap = targets[i % len(targets)]
        area = AREAS[rng.randrange(len(AREAS))]
        roll = rng.random()
        fmt = "draft" if roll < 0.01 else ("legacy" if roll < 0.21 else "unified")
        base = f"trailmaps/{trailmap}/trails/{area}"
        slug = f"{rng.choice(STEP_VERBS).lower().replace(' ', '-')}-{i:05d}"
        if fmt == "draft":
            rel = f"{base}/draft-{i:05d}/blaze.yaml"
        elif rng.random() < 0.05:
            rel = f"{base}/{slug}/trail.yaml"
        else:
            rel = f"{base}/{slug}.trail.yaml"
        classifiers = CLASSIFIER_SETS[rng.randrange(len(CLASSIFIER_SETS))]
        if fmt == "legacy":
            classifiers = (rng.choice(("android", "android", "ios-iphone")),)
        plans.append(TrailPlan(i, trailmap, rel, fmt, classifiers, None, False))
    eligible = [p for p in plans if p.fmt != "draft"]
    # The edit point: the first eligible trail of the first trailmap, never an erroneous one.
    edit = next(p for p in eligible if p.trailmap == targets[0])
    edit.is_edit = True
    edit.fmt = "unified"
    edit.classifiers = ("android",)
    candidates = [p for p in eligible if not p.is_edit]
    count = max(1, round(spec.trails * spec.error_rate)) if spec.error_rate > 0 else 0
    chosen = sorted(rng.sample(range(len(candidates)), count))
    kinds = list(ERROR_KINDS)
    rng.shuffle(kinds)
    for n, k in enumerate(chosen):
        candidates[k].error_kind = kinds[n % len(kinds)]
    return plans


def _spec_key(spec: Spec) -> dict[str, Any]:
    """What the manifest records of the spec; `ensure` reuses a workspace whose key matches."""
    return {**asdict(spec), "targets": spec.targets}


def generate(root: Path, spec: Spec, *, catalog: Catalog | None = None) -> Manifest:
    """Write the workspace for `spec` at `root` (replacing it) and its manifest next to it."""
    catalog = catalog or load_catalog()
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    (root / "dodo.py").write_text(DODO, encoding="utf-8")
    targets = [f"app{i:02d}" for i in range(spec.targets)]
    for rel, text in LIB_FILES.items():
        _write(root / "trailmaps" / LIB / rel, text)
    for i, trailmap in enumerate(targets):
        for rel, text in _trailmap_files(trailmap, i).items():
            _write(root / "trailmaps" / trailmap / rel, text)
    manifest = Manifest(
        generator=GENERATOR_VERSION,
        spec=_spec_key(spec),
        trailmaps=[LIB, *targets],
        by_trailmap={t: [] for t in targets},
    )
    writer = TrailWriter(catalog, ToolPool(catalog), spec)
    for plan in plan_trails(spec):
        errors, calls, edit = writer.write(plan, root / plan.rel)
        manifest.trails.append(plan.rel)
        manifest.formats[plan.fmt] = manifest.formats.get(plan.fmt, 0) + 1
        if calls:
            manifest.eligible.append(plan.rel)
            manifest.by_trailmap[plan.trailmap].append(plan.rel)
            manifest.calls += calls
        manifest.errors.extend(errors)
        if edit:
            manifest.edit = edit
    first = targets[0]
    tool_file = f"trailmaps/{first}/tools/{first}_signIn.tool.yaml"
    tool_lines = (root / tool_file).read_text("utf-8").splitlines()
    line = next(i for i, text in enumerate(tool_lines, 1) if text.startswith("description:"))
    manifest.tool_edit = {
        "file": tool_file,
        "trailmap": first,
        "line": line,
        "text": tool_lines[line - 1],
    }
    for values in (manifest.trails, manifest.eligible):
        values.sort()
    for values in manifest.by_trailmap.values():
        values.sort()
    manifest.errors.sort(key=lambda e: e.trail)
    manifest_path(root).write_text(
        json.dumps(manifest.to_json(), indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    return manifest


def ensure(root: Path, spec: Spec, *, regenerate: bool = False) -> Manifest:
    """The workspace for `spec` at `root`: reused when its manifest says it is that one."""
    path = manifest_path(root)
    if not regenerate and path.is_file() and (root / "trailmaps").is_dir():
        try:
            manifest = Manifest.load(path)
        except (OSError, ValueError, KeyError, TypeError):
            manifest = None
        if (
            manifest is not None
            and manifest.generator == GENERATOR_VERSION
            and manifest.spec == _spec_key(spec)
        ):
            return manifest
    return generate(root, spec)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.generate", description=__doc__.split("\n")[0]
    )
    parser.add_argument("root", type=Path, help="workspace directory to (re)create")
    parser.add_argument("--trails", type=int, required=True)
    defaults = Spec(trails=0)
    parser.add_argument(
        "--trailmaps",
        type=int,
        default=defaults.trailmaps,
        help="target trailmaps (default: by size)",
    )
    parser.add_argument("--seed", type=int, default=defaults.seed)
    parser.add_argument("--error-rate", type=float, default=defaults.error_rate)
    args = parser.parse_args(argv)
    spec = Spec(args.trails, args.trailmaps, args.seed, args.error_rate)
    manifest = generate(args.root, spec)
    print(
        f"{args.root}: {len(manifest.trails)} trails ({len(manifest.eligible)} type-checkable, "
        f"{manifest.calls} calls) in {len(manifest.trailmaps)} trailmaps, "
        f"{len(manifest.errors)} planted errors; manifest {manifest_path(args.root)}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
