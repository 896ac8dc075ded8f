"""Every finding code, as data: its id, the kinds of finding that carry it, what it means.

A finding's `code` is the word users grep for and golden files pin (`unknown-key`, `TS2322`):
it never changes once released. Each code is registered here once, by `_code`, which returns
the id: producers pass the constant (`code=codes.UNKNOWN_KEY`), never a string of their own,
and `tests/test_codes.py` fails on a code made anywhere else or one without an entry. The
SARIF rules (`report/formats.py`) and `docs/codes.md` are rendered from these entries.

A code may be carried by several kinds: `unknown-key` is a parse finding in a trail, a manifest
finding in a trailmap.yaml and a warning in lenient mode. The entry lists every kind; the
meaning is the same, only the file differs. The TypeScript compiler's diagnostics are one
family (`TS` and digits), not one entry each: their message is tsc's own.

`no_case` says why no case of `tests/data/cases/` can produce a code (it needs a broken
machine, a replay, a second mode); every other code has a case there that shows it.

Every floor imports this module, the CLI's no-op path too: it imports nothing of the package
at run time and only `typing` of the standard library.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final, NamedTuple

if TYPE_CHECKING:
    from collections.abc import Mapping

    from trailblaze.finding import Kind


class Code(NamedTuple):
    """One finding code: `id` as reports carry it, the `kinds` of finding that carry it, a
    one-line `description` and a short paragraph of `help` (what it means, how to fix it).

    A named tuple, not a dataclass: this module is imported on the CLI's no-op path, and a
    dataclass costs half a millisecond to create."""

    id: str
    kinds: tuple[Kind, ...]
    description: str
    help: str
    no_case: str = ""
    """Why no case file of tests/data/cases/ produces this code; empty when one does."""


_REGISTRY: dict[str, Code] = {}


def _code(
    id_: str, kinds: tuple[Kind, ...], description: str, help_: str, *, no_case: str = ""
) -> str:
    assert id_ not in _REGISTRY, id_
    _REGISTRY[id_] = Code(id=id_, kinds=kinds, description=description, help=help_, no_case=no_case)
    return id_


KINDS: Final[dict[str, str]] = {
    "parse": "A trail file does not pass the strict parse gate.",
    "manifest": "A trailmap.yaml or a tool file does not load.",
    "type": "A recorded tool call does not match the tool's declared input type.",
    "tool": "A scripted tool's own TypeScript source does not compile.",
    "runif": "A runIf block is malformed.",
    "test": "A unit test of a trailmap's scripted tools failed or did not run to its end.",
    "infra": "The type check could not run.",
    "warning": "Something worth a look that does not fail the check.",
}
"""Each kind of finding in one line, in the order a report lists them."""

# -- the files as YAML ----------------------------------------------------------------------------

YAML: Final = _code(
    "yaml",
    ("parse", "manifest"),
    "The file cannot be read as YAML.",
    "The file is not valid YAML, or it cannot be read: a syntax error, a duplicate key, a tab "
    "in the indentation, more than one document, an unsupported tag, a file that is not UTF-8 "
    "text or is too big. The message says what and where. Fix the file; nothing else of it is "
    "checked until it reads.",
)
EMPTY: Final = _code(
    "empty",
    ("parse", "manifest"),
    "A file, or a value that must hold something, is empty.",
    "An empty trail file, trailmap.yaml or tool file, or an empty `trail:` list, step text or "
    "list a manifest requires to have items. Write what belongs there, or delete the file.",
)
IO: Final = _code(
    "io",
    ("parse", "manifest"),
    "A directory or a tool module could not be read.",
    "The machine refused to list a directory of trails, or a scripted tool's module could "
    "not be read (permissions, a broken link, a file that is not UTF-8 text). Nothing in it was "
    "checked. Make it readable (a module: save it as UTF-8), or exclude it from the "
    "workspace.",
)

# -- keys and values: the trail grammar and the manifests' JSON Schema ----------------------------

UNKNOWN_KEY: Final = _code(
    "unknown-key",
    ("parse", "manifest", "warning"),
    "A key that this mapping does not take.",
    "The key is not part of the format at this place: usually a typo (the message suggests "
    "the closest known key) or a key indented under the wrong parent. Trailblaze replays a "
    "recording only as written, so a key it does not know is a recording that will not do "
    "what it says. In lenient mode (`--lenient`) a key the reference runtime ignores is "
    "dropped with this code as a warning instead.",
)
MISSING_KEY: Final = _code(
    "missing-key",
    ("parse", "manifest"),
    "A required key is missing.",
    "The mapping needs a key it does not have: a step needs `step:` or `verify:` text, a "
    "unified trail needs `trail:`, a trailmap target needs `display_name`, a composed tool "
    "needs `description`. Add the key the message names.",
)
WRONG_TYPE: Final = _code(
    "wrong-type",
    ("parse", "manifest", "warning"),
    "A value has the wrong shape: a list where a mapping belongs, text where a number does.",
    "The value at this place is of another YAML type than the format takes: for example a "
    "step that is text instead of a mapping, a bare tool name instead of `name: {}`, or "
    "arguments that are a list. The message says what was expected and what was found. In a "
    "waypoint file, a scalar the reference's lenient decoder reads as the type it wants (a "
    "quoted `'2'` for a count) is a warning.",
)
INVALID_VALUE: Final = _code(
    "invalid-value",
    ("parse", "manifest", "warning"),
    "A value of the right type that is not allowed here.",
    "The value is not one the format accepts: a name that is not a valid id, a value outside "
    "its list of choices, an argument type that does not exist, `step:` and `verify:` both "
    "set, `recordable: false` with a recording, `- config:` that is not the first item. The "
    "message says what is allowed; in lenient mode `step:` with `verify:` is a warning.",
)
REMOVED_KEY: Final = _code(
    "removed-key",
    ("manifest",),
    "A trailmap.yaml key the format no longer has.",
    "The manifest uses a key that Trailblaze removed (`use`, `extend`, `replace`, "
    "`mcp_servers`, an inline `system_prompt`). The message says what replaces it, usually "
    "`dependencies` or `system_prompt_file`.",
)
ID_MISMATCH: Final = _code(
    "id-mismatch",
    ("warning",),
    "A trailmap's id differs from its directory's name.",
    "Trails target a trailmap by its directory's name, so an `id:` that says something else "
    "misleads whoever reads the manifest. Rename the directory or the id so they agree.",
)
NOT_A_TRAILMAP: Final = _code(
    "not-a-trailmap",
    ("warning",),
    "A trailmap directory whose manifest is named trailmap.yml.",
    "A trailmap's manifest must be named `trailmap.yaml`; a directory with only a "
    "`trailmap.yml` is not read as a trailmap, and trails that target it find no surface. "
    "Rename the file.",
)
OUTSIDE_WORKSPACE: Final = _code(
    "outside-workspace",
    ("warning",),
    "A trail file is a symbolic link to a file outside the workspace.",
    "The check reads only files inside the workspace: a link that leads out of it is skipped "
    "and its trail is not checked. Move the trail into the workspace or check the workspace "
    "it belongs to.",
    no_case="needs a symbolic link that leads out of the workspace; the case corpus is copied "
    "into one workspace as plain files (tests/test_workspace.py makes one)",
)

# -- tools: definitions, tool sets, dependencies --------------------------------------------------

DUPLICATE_TOOL: Final = _code(
    "duplicate-tool",
    ("manifest",),
    "Two tool files of one trailmap define the same tool name.",
    "A tool id must be unique in its trailmap; the second definition is ignored. Rename one "
    "of them or delete the copy.",
)
DUPLICATE_KEY: Final = _code(
    "duplicate-key",
    ("manifest",),
    "A composed tool declares the same parameter twice.",
    "Each entry of a composed tool's `parameters:` needs its own `name`. Remove or rename the "
    "second one.",
)
UNKNOWN_CLASS: Final = _code(
    "unknown-class",
    ("manifest",),
    "A tool file names a framework class that does not exist.",
    "A `*.tool.yaml` with `class:` must name one of the framework's tool classes (the "
    "Kotlin class of a catalog tool). Check the spelling against the catalog, or define the "
    "tool with `tools:` instead.",
)
UNKNOWN_TOOL: Final = _code(
    "unknown-tool",
    ("manifest",),
    "A tool set names a tool that does not exist.",
    "Every name under a tool set file's `tools:` must be a framework tool or a tool of the "
    "trailmap. Fix the name or remove it from the set.",
)
UNKNOWN_TOOLSET: Final = _code(
    "unknown-toolset",
    ("manifest",),
    "A trailmap uses a tool set that does not exist.",
    "A platform's `tool_sets:` names neither a framework tool set nor one of the workspace's "
    "tool set files. The message suggests the closest known one.",
)
UNKNOWN_DEPENDENCY: Final = _code(
    "unknown-dependency",
    ("manifest",),
    "A trailmap depends on a trailmap that does not exist.",
    "An entry of `dependencies:` names no trailmap of the workspace and none bundled with "
    "Trailblaze. Fix the name (the message suggests the closest one) or add the trailmap.",
)
DEPENDENCY_CYCLE: Final = _code(
    "dependency-cycle",
    ("manifest",),
    "Trailmaps depend on each other in a loop.",
    "Following `dependencies:` leads back to where it started; the message shows the loop. "
    "Remove one of its edges: a trailmap that two others need belongs below both.",
)
UNKNOWN_EXPORT: Final = _code(
    "unknown-export",
    ("manifest",),
    "A trailmap exports a tool it does not define.",
    "Every name under `exports:` must be a scripted or YAML tool of that trailmap. Define "
    "the tool, or remove it from the exports.",
)
EXPORT_CONFLICT: Final = _code(
    "export-conflict",
    ("manifest",),
    "Two dependencies of a trailmap export the same tool.",
    "A trailmap cannot depend on two trailmaps that both export a tool of one name: a call "
    "of it would be ambiguous. Rename one of the tools, or drop one of the dependencies.",
)
TOOL_SOURCE_MISSING: Final = _code(
    "tool-source-missing",
    ("warning",),
    "A declared scripted tool has no module that exports it.",
    "The manifest lists a scripted tool (under `target.tools` or a platform's `tools`) but "
    "no module in the trailmap's tools/ exports it and no descriptor names it: its calls are "
    "accepted with any arguments. Add the module, or fix the name.",
)
SHADOWED_TOOL: Final = _code(
    "shadowed-tool",
    ("warning",),
    "A scripted tool has the name of a framework tool.",
    "The framework tool wins: recordings of that name are checked against the framework's "
    "input type, never the scripted one. Give the scripted tool a name of its own.",
)

# -- navigation: shortcuts, trailheads, waypoints -------------------------------------------------

SHORTCUT_AND_TRAILHEAD: Final = _code(
    "shortcut-and-trailhead",
    ("manifest",),
    "A tool file declares both a shortcut block and a trailhead block.",
    "A shortcut is a transition, offered only when the current waypoint is its `from`; a "
    "trailhead is a bootstrap, always available. A tool cannot be both: keep one block, or "
    "split the file in two tools.",
)
NAVIGATION_SUFFIX: Final = _code(
    "navigation-suffix",
    ("manifest",),
    "A shortcut or trailhead block in a file not named for it.",
    "The reference loads a `shortcut:` block only from a `*.shortcut.yaml` (under the "
    "trailmap's `shortcuts/`) and a `trailhead:` block only from a `*.trailhead.yaml` (under "
    "`trailheads/`). Rename the file, or move the block.",
)
WAYPOINT_ID: Final = _code(
    "waypoint-id",
    ("manifest", "warning"),
    "A shortcut or trailhead names a waypoint by a malformed id.",
    "Waypoint ids are slash-separated, with at least two non-blank segments "
    "(`clock/android/alarm_tab`): the first is the trailmap, the rest the place in the app. "
    "A blank id, one segment, a leading, trailing or doubled slash can never match a waypoint. "
    "Write the id as the waypoint file's `id:` says it. In a scripted tool's own `trailhead` "
    "it is a warning: the reference drops that trailhead and keeps the tool.",
)
TRAILHEAD_DESTINATION: Final = _code(
    "trailhead-destination",
    ("manifest", "warning"),
    "A trailhead names no destination, or names one and says it has none.",
    "A trailhead lands on a known waypoint (`to:`, or per platform `toByPlatform:`), or says "
    "`dynamic: true` when its destination varies by input (a deep-link launcher). `{}` says "
    "neither; `dynamic: true` with a `to:` says both. Keep exactly one. In a scripted tool's "
    "own `trailhead` it is a warning: the reference drops that trailhead and keeps the tool.",
)
WAYPOINT_LEGACY_KEY: Final = _code(
    "waypoint-legacy-key",
    ("manifest",),
    "A waypoint file still has the legacy top-level `required`, `forbidden` or `platforms`.",
    "Waypoint files are keyed by device classifier: the conditions of each platform go under "
    "its block (`android:`, `ios:`, `web:`, ...), and `platforms:` is gone. The reference "
    "refuses a file with the old top-level keys; move `required:`/`forbidden:` under a "
    "classifier block.",
)
WAYPOINTS_LIST: Final = _code(
    "waypoints-list",
    ("manifest",),
    "A library trailmap lists waypoints under `waypoints:`.",
    "Waypoints are found by walking the trailmap's `waypoints/` for `*.waypoint.yaml`; the "
    "manifest's `waypoints:` list is deprecated and ignored on a target, and a library "
    "trailmap (no `target:`) must leave it empty, as the reference requires. Delete the list: "
    "the files are found without it.",
)

# -- generated files ------------------------------------------------------------------------------

SURFACE_UNWRITABLE: Final = _code(
    "surface-unwritable",
    ("manifest",),
    "A trailmap's generated files could not be written.",
    "Something stands where a generated file of the trailmap's tools/ goes (a directory "
    "named like it, a `tools` that is a file), or the write failed. None of the trailmap's "
    "generated files are written and the run is not remembered as done. Remove what is in "
    "the way, or make the directory writable.",
)
TSCONFIG_KEPT: Final = _code(
    "tsconfig-kept",
    ("warning",),
    "A hand-written tools/tsconfig.json is kept where the generated one goes.",
    "The trailmap's tools/tsconfig.json was not written by Trailblaze, so it is left as it "
    "is; editors then check the scripted tools with its settings, not the generated ones. "
    "Delete it to get the generated file, or keep it deliberately.",
)
GENERATED_LEFT_ALONE: Final = _code(
    "generated-left-alone",
    ("warning",),
    "A trailmap's generated tools/ files belong to another generator, so they are left alone.",
    "A tools/trailblaze-client.d.ts (or tsconfig.json, sidecar, trail.schema.json) without "
    "trailblaze-doit's banner is someone else's: Trailblaze's own (its banner; upstream "
    "commits it as an API contract) or a hand-written one. It is never rewritten nor deleted: "
    "none of the trailmap's files are written, and the check uses its own surface in the "
    "scratch directory, with the same verdicts. `trailblaze check --overwrite-generated` "
    "replaces the files Trailblaze generated; a hand-written one is never replaced.",
)
GITIGNORE_UNREADABLE: Final = _code(
    "gitignore-unreadable",
    ("warning",),
    "A trailmap's .gitignore could not be read, so it was not updated.",
    "The generated tools/ files are added to the trailmap's .gitignore, but this one is not "
    "UTF-8 text or cannot be read; it is left unchanged rather than lose what it says. Fix "
    "its encoding or permissions.",
)

# -- trails: argument tokens, runIf ---------------------------------------------------------------

MALFORMED_ARG_TOKEN: Final = _code(
    "malformed-arg-token",
    ("parse",),
    "An argument token is not of the form `{{args.<name>}}`.",
    "A `{{args...}}` or `${args...}` token must name a declared argument as a dotted path "
    "(`{{args.email}}`, `{{args.user.name}}`). Fix the token; `{{x}}` without `args.` is the "
    "runtime's memory and is left alone.",
)
UNDECLARED_ARG: Final = _code(
    "undeclared-arg",
    ("parse",),
    "An argument token names an argument config.args does not declare.",
    "`{{args.x}}` and `${args.x}` are replaced by the trail's arguments at replay; `x` must "
    "be declared under `config.args`. Declare it (with a type, and a default if it may be "
    "left out), or fix the name.",
)
RUNIF_MISSING: Final = _code(
    "runif-missing",
    ("runif",),
    "A runIf without its condition or its then branch.",
    "`runIf` takes a `condition` (a selector or one tool call) and a `then` list of calls; "
    "`else` is optional. Add what the message names.",
)
RUNIF_UNKNOWN_KEY: Final = _code(
    "runif-unknown-key",
    ("runif",),
    "A runIf key other than condition, then and else.",
    "runIf takes `condition`, `then` and `else`, nothing else: a key like `otherwise` would "
    "be ignored at replay. Rename it (the message suggests the closest key).",
)
RUNIF_CONDITION: Final = _code(
    "runif-condition",
    ("runif",),
    "A runIf condition that is not one selector or one tool call.",
    "A condition is a mapping with either `selector:` (a non-empty node selector that must "
    "match) or `tool:` (one tool, not a runIf, that must succeed), never both. The tool is a "
    "name, with its arguments in `args:` (`{tool: NAME, args: {...}}`, the shape upstream's "
    "schema shows), or one call `{tool: {NAME: {...}}}`; arguments are given one way, not both.",
)
RUNIF_IGNORED_KEY: Final = _code(
    "runif-ignored-key",
    ("warning",),
    "A key beside a runIf condition's selector or tool that runIf does not read.",
    "A condition reads `selector`, or `tool` (a name, with its arguments in `args`, or one "
    "call `{<tool>: {args}}`). Upstream's schema does not forbid other keys beside them, so "
    "one is not an error, but replay ignores it: remove it, or rename it if it is a "
    "misspelling (the message suggests the closest key).",
)
RUNIF_BRANCH: Final = _code(
    "runif-branch",
    ("runif",),
    "A runIf branch that is not a list of tool calls.",
    "`then` and `else` are lists of tool calls (`- tool: {args}`); `then` must not be empty. "
    "Each item has one key, the tool's name, with a mapping of arguments or nothing.",
)
RUNIF_DEPTH: Final = _code(
    "runif-depth",
    ("runif",),
    "runIf nested more than two levels deep.",
    "A runIf inside a branch of a runIf inside a branch of a runIf is one level too many. "
    "Record the inner part as a composed or scripted tool and call that.",
)
RUNIF_REPEATED: Final = _code(
    "runif-repeated",
    ("warning",),
    "The same runIf tree is recorded in several trails.",
    "Several trails record the same conditional (a popup to dismiss, a sign-in to pass). A "
    "named tool (a composed `*.tool.yaml`) would say it once and keep the trails in step.",
)

# -- the type gate --------------------------------------------------------------------------------

QUOTED_NUMBER: Final = _code(
    "quoted-number",
    ("warning",),
    "A number argument written as quoted text.",
    "Replay converts the text to a number, and the type gate checks it as one, but the "
    "recording says something else than it means. Write the number without quotes.",
)
NO_SURFACE: Final = _code(
    "no-surface",
    ("type",),
    "Trails target a trailmap whose manifest did not load.",
    "The trailmap has a trailmap.yaml, but it has findings of its own, so there is no typed "
    "surface to check its trails against: they are not type-checked. Fix the manifest (its "
    "findings are in the same report), or set `trail_validation.exempt: <reason>`.",
)
UNRESOLVED_INPUT: Final = _code(
    "unresolved-input",
    ("infra",),
    "A call of a tool whose input type does not resolve.",
    "The tool's input type refers to something the compiler cannot find (an import that "
    "does not resolve, a missing declaration), so checking the call would accept anything: "
    "the trail is not type-checked. Fix the tool's source; its own diagnostics are in the "
    "same report.",
)
TYPEGATE: Final = _code(
    "typegate",
    ("infra",),
    "The type check of a trail could not run.",
    "The compiler failed, timed out, or gave output that does not prove it checked the trail, "
    "or a scripted tool module it would compile was not read (too big, binary, not UTF-8) "
    "(see the message), so the trail was not type-checked and nothing of it was cached. This "
    "fails the check (exit 3) in CI, with --require-typecheck or "
    "TRAILBLAZE_REQUIRE_TYPECHECK=1.",
)
NESTED_NOT_INSTALLED: Final = _code(
    "nested-not-installed",
    ("infra",),
    "A nested tool project's dependencies are not installed.",
    "A directory below a trailmap's tools/ with its own tsconfig.json is compiled as a project "
    "of its own, with its own dependencies. Its package.json lists packages that do not "
    "resolve from it (no node_modules), so it was not compiled: run `npm install` in that "
    "directory. Its tools' calls are not type-checked meanwhile. This fails the check "
    "(exit 3) in CI, with --require-typecheck or TRAILBLAZE_REQUIRE_TYPECHECK=1.",
    no_case="its finding is at a package.json, which holds no comment to expect it with "
    "(tests/check/typegate/test_projects.py pins it)",
)
NESTED_NOT_CHECKED: Final = _code(
    "nested-not-checked",
    ("infra",),
    "A nested tool project's tsconfig.json cannot be compiled by the pinned compiler.",
    "A directory below a trailmap's tools/ with its own tsconfig.json is compiled as a project "
    "of its own with the pinned TypeScript, which refuses an option of that tsconfig (one "
    "TypeScript 7 removed, such as `moduleResolution: node`): the project was not checked, "
    "and no diagnostic of it is reported. Update the option to check it. This fails the "
    "check (exit 3) in CI, with --require-typecheck or TRAILBLAZE_REQUIRE_TYPECHECK=1.",
)
TESTS_NOT_RUN: Final = _code(
    "tests-not-run",
    ("infra",),
    "A trailmap's unit tests (tools/*.test.ts) could not run.",
    "The trailmap has unit tests, and bun, the runtime they are written for, could not be "
    "found or installed (no network, no npm, a failed probe; the message says which). The "
    "tests are not run, which is never a pass: this fails the check (exit 3) in CI, with "
    "--require-typecheck or TRAILBLAZE_REQUIRE_TYPECHECK=1. Let a check install bun once "
    "(`doit toolchain`), or set TRAILBLAZE_BUN to a bun executable; `--no-tests` skips them.",
    no_case="it needs a machine where bun cannot be had (tests/check/test_unittests.py pins it)",
)
TEST_FAILED: Final = _code(
    "test-failed",
    ("test",),
    "A unit test of a trailmap's tools failed.",
    "A test of a `*.test.ts` in the trailmap's tools/ failed when run with bun (in tools/, as "
    "the reference runs it). The finding is where the test failed (the first frame of its "
    "stack in the test file, else the test's line), with the test's name and bun's message. "
    "Fix the tool or the test; a failed file is run again by every check until it passes.",
    no_case="a case file is a trail, not a test file (tests/check/test_unittests.py pins it)",
)
TEST_ERROR: Final = _code(
    "test-error",
    ("test",),
    "A unit test file did not load, or bun failed outside any test.",
    "bun could not run the test file to its end: a syntax error, an import that does not "
    "resolve, an error thrown between tests, a crash. The message is bun's. Nothing of the "
    "file is cached: the next check runs it again.",
    no_case="a case file is a trail, not a test file (tests/check/test_unittests.py pins it)",
)
TEST_TIMEOUT: Final = _code(
    "test-timeout",
    ("test",),
    "A unit test run did not finish in time.",
    "bun test did not finish within TRAILBLAZE_TEST_TIMEOUT_MS (default 300000, at least "
    "60000) and was stopped; every file of that run is reported, and none is cached. Look "
    "for a test that never settles, or raise the timeout for a slow suite.",
    no_case="it needs a minute-long test (tests/check/test_unittests.py pins the message)",
)
TOOLCHAIN: Final = _code(
    "toolchain",
    ("infra",),
    "The pinned TypeScript compiler could not be found or installed.",
    "No trail was type-checked: the compiler is missing and could not be installed (no "
    "network, no npm, a failed probe; the message says which). Let a check install it once "
    "with network access, point TRAILBLAZE_TSC at a compiler, or set "
    "TRAILBLAZE_TOOLCHAIN_DIR to a cache that has it.",
    no_case="needs a machine without the pinned compiler; the cases need it to type-check",
)

# -- recordings are data --------------------------------------------------------------------------

HOST_PROGRAM: Final = _code(
    "host-program",
    ("parse",),
    "A recording runs a program on the machine that replays it.",
    "A recorded call reaches a framework tool that runs a host program: `exec` (its program is "
    "`argv[0]`), `runCommand` (a shell command line) or `script` (JavaScript from the "
    "recording). It may be called directly, in a `runIf` condition or branch, or inside a "
    "composed `*.tool.yaml` tool (at any depth) or a `class:` tool that registers one of them "
    "under another name; the message names the path. A recording is data: replaying one from "
    "an untrusted change must not run commands on a CI machine. To let `exec` run a program, "
    "name it in `[tool.trailblaze] allow-host-programs` of the workspace's pyproject.toml "
    '(`["adb", "scripts/seed.sh"]`: a name as `argv[0]` gives it, or a file relative to the '
    "workspace); `runCommand` and `script` are never allowed. A scripted tool (`.ts`) may call "
    "`exec` itself: that is the workspace's code, not the recording (docs/checks.md).",
)
HOST_FILE: Final = _code(
    "host-file",
    ("parse",),
    "A recording reads a file of the host outside the workspace.",
    "A `runTrail` call (directly, in a `runIf`, or in a composed tool) names a file that is "
    "not a trail file (`*.trail.yaml`, `trail.yaml`, `blaze.yaml`) inside the workspace: an "
    "absolute path, a `~` path or `..` leading out, or a path given by a token, known only "
    "at replay. A recording may replay the workspace's own trails, not read the machine's "
    "files. Move the trail into the workspace and name it relative to the calling trail.",
)

# -- replay ---------------------------------------------------------------------------------------

UNSUPPORTED_ON_ANDROID: Final = _code(
    "unsupported-on-android",
    ("parse",),
    "A call that replay cannot make on an Android device.",
    "Replay refuses the trail before it starts: a framework tool that cannot work on "
    "Android, a composed tool that reaches one, an unknown `mobile_maestro` command, a "
    "recorded selector with a field a uiautomator dump does not carry, or a `runTrail` whose "
    "trail is missing, broken or the caller itself. The message says which.",
    no_case="made by `trailblaze replay`, not by a check (tests/replay/ pins it)",
)

UNKNOWN_WAYPOINT: Final = _code(
    "unknown-waypoint",
    ("parse",),
    "An `assertWaypoint` call names a waypoint no trailmap of the workspace defines.",
    "Replay refuses the trail before it starts: the recorded `waypoint:` id is not the `id:` "
    "of any `waypoints/**/*.waypoint.yaml` of the workspace's trailmaps. The message lists the "
    "known ids (with the closest one). Fix the id in the recording, or add the waypoint file.",
    no_case="made by `trailblaze replay`, not by a check (tests/replay/ pins it)",
)

# -- the TypeScript compiler ----------------------------------------------------------------------

TYPESCRIPT_FAMILY = "TS<digits>"
TYPESCRIPT = Code(
    id=TYPESCRIPT_FAMILY,
    kinds=("type", "tool"),
    description="A diagnostic of the TypeScript compiler; the message is tsc's.",
    help="Each recorded call is compiled by tsc against its trailmap's typed surface "
    "(tools/trailblaze-client.d.ts), and the diagnostic is mapped back to the YAML argument "
    "at fault: a type finding. TS2322 is a value of the wrong type, TS2353 an argument the "
    "tool does not take, TS2741 a required argument left out, TS2339 a tool the trailmap "
    "does not have (TS2551 when a known one is close). A tool finding is a diagnostic in "
    "a scripted tool's own source. Fix the argument (or the tool's declaration); "
    "`trail_validation.exempt: <reason>` in trailmap.yaml makes a target's type findings "
    "non-fatal.",
)
"""The family of tsc's codes: one entry for every `TS` and digits."""

REGISTRY: Final[Mapping[str, Code]] = _REGISTRY
"""Every code of our own, by id, in the order of this module."""


def is_typescript(code: str) -> bool:
    """Whether `code` is a diagnostic code of the TypeScript compiler (`TS2322`)."""
    digits = code[2:]
    return code[:2] == "TS" and digits.isascii() and digits.isdigit()


def lookup(code: str) -> Code | None:
    """The entry of a code (the TypeScript family for `TS` and digits); None if unregistered."""
    found = _REGISTRY.get(code)
    if found is None and is_typescript(code):
        return TYPESCRIPT
    return found
