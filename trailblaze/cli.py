"""`trailblaze` command line: `check`, `surfaces`, `replay`.

Parses arguments, resolves the workspace, calls the library, renders, and returns the exit
code: 0 clean, 1 findings, 2 usage or configuration error, 3 a required type check that could
not run. User mistakes end with a message, never a traceback.
"""

from __future__ import annotations

import argparse
import dataclasses
import io
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import partial
from pathlib import Path

from trailblaze import __version__
from trailblaze.console import (
    RichProgress,
    render_report,
    report_console,
    source_lines,
    toolchain_progress,
)
from trailblaze.errors import TrailblazeError, UsageError
from trailblaze.formats import FORMATS, render
from trailblaze.fsutil import write_atomic
from trailblaze.options import CheckOptions
from trailblaze.pathbase import default_base, rebaser
from trailblaze.report import EXIT_USAGE, Report
from trailblaze.scope import check_scope, resolve_scopes
from trailblaze.toolchain import TSC_ENV
from trailblaze.workspace import (
    WorkspaceError,
    find_workspace,
    is_workspace,
    scan,
    trailmap_files,
)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="trailblaze",
        description="Validate and replay Trailblaze trails.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    check = sub.add_parser(
        "check",
        help="parse, type-check and lint the trails of a workspace, a trailmap or some files",
        description=(
            "Check trails: the whole workspace (default; from inside a trailmap's directory, "
            "that trailmap), one trailmap (TRAILMAP_ID), or trail files (FILE..., '-' reads "
            "standard input). A directory argument is the workspace, as before. "
            "Exit codes: 0 clean, 1 findings, 2 usage or configuration error, "
            "3 a required type check that could not run."
        ),
    )
    check.add_argument(
        "targets",
        nargs="*",
        metavar="TRAILMAP_ID | FILE | -",
        help="a trailmap id, trail files ('-': standard input), or a workspace directory",
    )
    check.add_argument(
        "--all",
        action="store_true",
        help="every trailmap, wherever the command runs from; at a monorepo root (not itself a "
        "workspace): every workspace under it, in one report",
    )
    check.add_argument(
        "--workspace",
        type=Path,
        metavar="DIR",
        help="workspace root (default: found from the current directory, or from the files)",
    )
    check.add_argument(
        "--no-typecheck",
        action="store_true",
        help="do not report diagnostics in the authored .ts tool sources (the trails' type gate "
        "still runs; TRAILBLAZE_DISABLE_TRAIL_RECORDING_VALIDATION=1 turns that off)",
    )
    check.add_argument(
        "--show-typed-tools",
        action="store_true",
        help="list each checked trailmap's typed tools and their arguments (never fatal)",
    )
    check.add_argument(
        "--format",
        choices=FORMATS,
        default="text",
        help="text (default), json (the stable report), sarif (2.1.0), junit (XML), github (annotations)",
    )
    check.add_argument("--output", type=Path, help="write the report here instead of stdout")
    check.add_argument(
        "--path-base",
        type=Path,
        metavar="DIR",
        help="show paths relative to DIR (default: the current directory; for github and "
        "sarif the git root)",
    )
    check.add_argument(
        "--stdin-filename",
        metavar="NAME",
        help="the name to show for the trail read from standard input ('-')",
    )
    check.add_argument(
        "--lenient",
        action="store_true",
        help="accept what the reference's runtime accepts; unknown keys become warnings",
    )
    check.add_argument(
        "--require-typecheck",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="exit 3 when the type check could not run (default: on when CI is set; also "
        "TRAILBLAZE_REQUIRE_TYPECHECK=1/0)",
    )
    check.add_argument("--color", action=argparse.BooleanOptionalAction, default=None)
    check.add_argument(
        "--remote-cache",
        metavar="URL",
        help="share type-gate results through a Bazel HTTP remote cache (also TRAILBLAZE_REMOTE_CACHE)",
    )
    check.add_argument(
        "--remote-cache-read-only",
        action="store_true",
        help="read the remote cache, never write it (pull-request builds)",
    )
    check.add_argument(
        "--shard",
        metavar="K/N",
        help="check only the K-th of N balanced shards of the trails; join with `report merge`",
    )

    report = sub.add_parser("report", help="work with JSON reports of `trailblaze check`")
    report_sub = report.add_subparsers(dest="report_command", required=True, metavar="ACTION")
    merge = report_sub.add_parser(
        "merge", help="join the JSON reports of every shard of a run into one report"
    )
    merge.add_argument("reports", nargs="+", type=Path, metavar="REPORT")
    merge.add_argument("--format", choices=FORMATS, default="json")
    merge.add_argument("--output", type=Path, help="write the report here instead of stdout")

    surfaces = sub.add_parser(
        "surfaces",
        help="generate each trailmap's typed surface, tsconfig, sidecar and trail JSON Schema",
    )
    surfaces.add_argument(
        "workspace",
        nargs="?",
        type=Path,
        help="workspace root (default: found from the current directory)",
    )

    schema = sub.add_parser(
        "schema",
        help="print the trail JSON Schema of a trailmap (what editors validate trails with)",
    )
    schema.add_argument(
        "trailmap", nargs="?", metavar="TRAILMAP", help="trailmap id (default: the only target)"
    )
    schema.add_argument(
        "--workspace", type=Path, help="workspace root (default: found from the current directory)"
    )

    replay = sub.add_parser(
        "replay",
        help="replay recorded trails on an Android device (needs the replay extra: adbutils)",
    )
    replay.add_argument(
        "trails",
        nargs="*",
        type=Path,
        metavar="TRAIL",
        help="trail files or directories (default: every trail of the current workspace)",
    )
    replay.add_argument(
        "--device",
        action="append",
        default=[],
        metavar="SERIAL",
        help="adb serial; repeatable, trails spread over the devices "
        "(default: ANDROID_SERIAL, else the only one)",
    )
    replay.add_argument(
        "--all-devices", action="store_true", help="replay on every ready device, in parallel"
    )
    replay.add_argument(
        "--arg",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="value of a trail argument ({{args.NAME}}); repeatable",
    )
    replay.add_argument("--json", type=Path, metavar="FILE", help="write the results as JSON")
    replay.add_argument("--junit", type=Path, metavar="FILE", help="write the results as JUnit XML")
    replay.add_argument(
        "--classifier",
        metavar="C",
        help="the device classifier whose recordings replay (default: android-phone, then android)",
    )
    replay.add_argument("--color", action=argparse.BooleanOptionalAction, default=None)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    commands = {
        "check": _check,
        "surfaces": _surfaces,
        "replay": _replay,
        "report": _report,
        "schema": _schema,
    }
    try:
        return commands[args.command](args)
    except TrailblazeError as exc:
        # The one place a user error ends a command: its message, its exit code, no traceback.
        command = args.command if args.command != "report" else f"report {args.report_command}"
        print(f"trailblaze {command}: {exc}", file=sys.stderr)
        return exc.exit_code


def _check(args: argparse.Namespace) -> int:
    cwd = Path.cwd()
    start = args.workspace if args.workspace is not None else cwd
    if (
        args.all
        and not args.targets
        and _in_no_workspace(start, explicit=args.workspace is not None)
    ):
        return _check_monorepo(start, _options(args), args)
    scopes = resolve_scopes(
        list(args.targets), all_trailmaps=args.all, workspace=args.workspace, cwd=cwd
    )
    if args.path_base is not None and not args.path_base.is_dir():
        raise UsageError(f"--path-base {args.path_base}: not a directory")
    options = _options(args)
    ws = scopes[0].workspace
    base = (args.path_base or default_base(args.format, ws.root, cwd)).absolute()
    files_scope = any(s.files or s.stdin for s in scopes)
    # Trail files (an editor's buffer on stdin, say) and the tool listing are not replayed.
    variant = None if files_scope or args.show_typed_tools else _variant(args)
    found = stats = None
    if not files_scope:
        from trailblaze.noop import Outputs, inputs_key  # noqa: PLC0415

        found = scan(ws)
        files = list(found.trail_paths)
        for trailmap in found.trailmaps:
            files.extend(str(p) for p in trailmap_files(trailmap))
        settings = {
            "strict": options.strict,
            "typecheck": options.typecheck,
            "require_typecheck": options.require_typecheck,
            "shard": options.shard,
            "cwd": os.getcwd(),
            "tsc": os.environ.get(TSC_ENV, ""),
            "trailmap": scopes[0].trailmap,
            "path_base": str(base),
            "tool_diagnostics": not args.no_typecheck,
        }
        key, stats = inputs_key(files, settings)
        outputs = Outputs(ws.scratch)
        recorded = outputs.lookup(key, variant) if variant is not None else None
        if recorded is not None:
            # Nothing changed since a complete check: its output again, without the pipeline.
            output, code = recorded
            if args.output:
                _write(args.output, output)
            else:
                sys.stdout.buffer.write(output)
                sys.stdout.flush()
            return code
    run_check: Callable[..., Report]
    if found is not None and options.remote_cache:
        # A fresh clone may find this whole run in the remote cache (`runcache.py`).
        from trailblaze.runcache import cached_run as run_check  # noqa: PLC0415
    else:
        from trailblaze.check import run_check  # noqa: PLC0415 - the no-op above never loads it

    stdin_text = sys.stdin.read() if any(s.stdin for s in scopes) else None
    started = time.monotonic()
    parts: list[tuple[Report, Path, dict[str, str]]] = []
    with toolchain_progress(sys.stderr):
        for scope in scopes:
            scoped = check_scope(
                scope,
                options,
                run=partial(run_check, progress=RichProgress.for_terminal(), stats=stats),
                found=found,
                stdin_text=stdin_text if scope.stdin else None,
                stdin_name=args.stdin_filename,
                tool_diagnostics=not args.no_typecheck,
            )
            parts.append((scoped.report, scope.workspace.root, scoped.renamed))
            if args.show_typed_tools:
                from trailblaze.typedtools import typed_tools_listing  # noqa: PLC0415

                listing = typed_tools_listing(scope.workspace, scoped.report.trailmaps)
                quiet = args.format != "text" or args.output is not None
                (sys.stderr if quiet else sys.stdout).write(listing)
    report, frames = _shown(parts, base, args.format)
    report = dataclasses.replace(report, duration=time.monotonic() - started)
    if variant is None:
        _emit(report, frames, args)
        return report.exit_code
    text = _rendered(report, frames, args.format)
    if args.output:
        _write(args.output, text)
    else:
        sys.stdout.write(text)
    if report.infra_findings:
        outputs.forget()  # not a complete check: the next run checks again
    else:
        outputs.remember(key, variant, text.encode("utf-8"), report.exit_code)
    return report.exit_code


def _in_no_workspace(start: Path, *, explicit: bool) -> bool:
    """`--all` outside any workspace (a monorepo's root): every workspace under it. Inside a
    workspace, however deep, `--all` is the reference's: every trailmap of that workspace."""
    if explicit:
        return not is_workspace(start.resolve())
    try:
        find_workspace(start)
    except WorkspaceError:
        return True
    return False


def _options(args: argparse.Namespace) -> CheckOptions:
    options = replace(
        CheckOptions.from_env(
            strict=not args.lenient,
            require_typecheck=args.require_typecheck,
            remote_cache=args.remote_cache,
            remote_read_only=args.remote_cache_read_only,
        ),
        shard=_shard(args.shard),
    )
    _check_remote(options)
    return options


def _check_monorepo(root: Path, options: CheckOptions, args: argparse.Namespace) -> int:
    """Every workspace of the monorepo at `root`, one report (`monorepo.py`)."""
    from trailblaze.monorepo import check_all, find_monorepo  # noqa: PLC0415

    if args.path_base is not None and not args.path_base.is_dir():
        raise UsageError(f"--path-base {args.path_base}: not a directory")
    mono = find_monorepo(root)
    with toolchain_progress(sys.stderr):
        report = check_all(mono, options, progress=RichProgress.for_terminal())
    base = (args.path_base or default_base(args.format, mono.root, Path.cwd())).absolute()
    shown, frames = _shown([(report, mono.root, None)], base, args.format)
    _emit(shown, frames, args)
    return report.exit_code


def _variant(args: argparse.Namespace) -> str | None:
    """What the output depends on besides the report, or None when it cannot be replayed
    (text for a terminal: colours and width are the terminal's)."""
    if args.format != "text":
        return str(args.format)
    if args.output is not None or (
        args.color is not True and not sys.stdout.isatty() and not os.environ.get("FORCE_COLOR")
    ):
        return "text"
    return None


def _shown(
    parts: Sequence[tuple[Report, Path, dict[str, str] | None]], base: Path, fmt: str
) -> tuple[Report, dict[str, str]]:
    """One report with every path relative to `base`, and the code frames of its findings.

    Each part is a report with paths relative to its directory (a workspace), and the paths
    to show instead of some (`Scoped.renamed`); several parts (trail files of several
    workspaces) make one report. The frames are read before the paths change.
    """
    reports: list[Report] = []
    frames: dict[str, str] = {}
    for report, root, renamed in parts:
        rebase = rebaser(root, base, renamed)
        if fmt == "text":
            frames.update(
                report.view(source_lines(root, report.findings)).with_paths(rebase).frames
            )
        reports.append(report.with_paths(rebase, str(base)))
    first = reports[0]
    if len(reports) == 1:
        return first, frames
    merged = dataclasses.replace(
        first,
        trailmaps=tuple(sorted({t for r in reports for t in r.trailmaps})),
        trails=tuple(t for r in reports for t in r.trails),
        sdks={k: v for r in reports for k, v in r.sdks.items()},
        findings=tuple(
            sorted(
                (f for r in reports for f in r.findings),
                key=lambda f: (f.path, f.line, f.column, f.kind, f.message),
            )
        ),
    )
    return merged, frames


def _rendered(report: Report, frames: dict[str, str], fmt: str) -> str:
    """A report whose paths are as shown (`_shown`), in `fmt`, as plain text."""
    if fmt != "text":
        return render(report, fmt)
    buffer = io.StringIO()
    render_report(report_console(buffer, color=False), report.view(frames), Path.cwd())
    return buffer.getvalue()


def _emit(report: Report, frames: dict[str, str], args: argparse.Namespace) -> None:
    """The report in the format asked for, to `--output` or stdout (a terminal: in colour)."""
    if args.format != "text" or args.output:
        text = _rendered(report, frames, args.format)
        if args.output:
            _write(args.output, text)
        else:
            sys.stdout.write(text)
        return
    render_report(
        report_console(color=getattr(args, "color", None)), report.view(frames), Path.cwd()
    )


def _shard(text: str | None) -> tuple[int, int] | None:
    if text is None:
        return None
    from trailblaze.shard import Shard  # noqa: PLC0415

    shard = Shard.parse(text)
    return (shard.index, shard.count)


def _report(args: argparse.Namespace) -> int:
    from trailblaze.shard import load_report, merge  # noqa: PLC0415

    loaded = [(path, load_report(path)) for path in args.reports]
    report = merge(loaded)
    # A shard's paths are relative to where its check ran (its `path_base`), already as the
    # reader wants them: they are read and shown from there.
    first = Path(str(loaded[0][1].get("path_base") or report.workspace))
    here = first if first.is_dir() else Path.cwd()
    shown, frames = _shown([(report, here, None)], here, args.format)
    _emit(shown, frames, args)
    return report.exit_code


def _check_remote(options: CheckOptions) -> None:
    """A remote-cache setting that cannot work is a usage error, before any work."""
    if options.remote_cache:
        from trailblaze.remote import RemoteConfig  # noqa: PLC0415

        RemoteConfig.resolve(options.remote_cache, read_only=options.remote_read_only)


def _surfaces(args: argparse.Namespace) -> int:
    ws = find_workspace(args.workspace, explicit=args.workspace is not None)
    # The same incremental doit tasks as `doit surfaces`, for a workspace without a dodo.py.
    from trailblaze.doit_tasks import run_tasks  # noqa: PLC0415 - only this command needs doit

    code = run_tasks(ws.root, ["surfaces"])
    return EXIT_USAGE if code >= 2 else code


def _schema(args: argparse.Namespace) -> int:
    """The trail JSON Schema of one trailmap on stdout, as `doit surfaces` writes it."""
    from trailblaze.bundled import discover  # noqa: PLC0415 - only this command needs them
    from trailblaze.catalog import load_catalog  # noqa: PLC0415
    from trailblaze.discovery import load_manifests  # noqa: PLC0415
    from trailblaze.resolve import Resolver  # noqa: PLC0415
    from trailblaze.trailschema import trail_schema  # noqa: PLC0415
    from trailblaze.tsrender import json_text  # noqa: PLC0415

    ws = find_workspace(args.workspace, explicit=args.workspace is not None)
    catalog = load_catalog()
    manifests = load_manifests(ws, scan(ws))
    bundled = discover(catalog, workspace_targets=ws.targets_dir).trailmaps
    known = sorted(
        {name for name, tm in manifests.trailmaps.items() if tm.is_target}
        | {name for name, item in bundled.items() if item.manifest.is_target}
    )
    wanted = args.trailmap
    if wanted is None:
        if len(known) != 1:
            listed = ", ".join(known) or "none"
            raise UsageError(f"name the trailmap whose schema to print (targets: {listed})")
        wanted = known[0]
    if wanted not in known:
        listed = ", ".join(known) or "none"
        raise UsageError(f"no target trailmap '{wanted}' in {ws.root} (targets: {listed})")
    resolver = Resolver(manifests.with_dirs(), ws.root, catalog, bundled)
    sys.stdout.write(json_text(trail_schema(resolver.resolve(wanted), catalog), indent=2) + "\n")
    return 0


def _replay(args: argparse.Namespace) -> int:
    # Imported here: the device code (and adbutils behind it) loads only for `replay`.
    from trailblaze.replay.command import run_command  # noqa: PLC0415
    from trailblaze.replay.run import ReplayRequest  # noqa: PLC0415

    request = ReplayRequest(
        trails=tuple(args.trails),
        serials=tuple(args.device),
        all_devices=args.all_devices,
        args=tuple(args.arg),
        classifier=args.classifier,
        json_path=args.json,
        junit_path=args.junit,
    )
    return run_command(request, color=args.color)


def _write(path: Path, text: str | bytes) -> None:
    try:
        write_atomic(path, text)
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror}") from None


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
