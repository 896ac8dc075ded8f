"""`trailblaze` command line: `check`, `report merge`, `surfaces`, `schema`, `replay`.

Parses arguments, calls the command (`check` is `cli/check.py`; the others are small and
live here), and returns the exit code: 0 clean, 1 findings, 2 usage or configuration error,
3 a required type check that could not run. `main` is the one place a user error
(`errors.TrailblazeError`) ends a command: one line on stderr, its exit code, no traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from trailblaze import __version__
from trailblaze.cli.check import check_command
from trailblaze.errors import TrailblazeError, UsageError, machine_error
from trailblaze.report.formats import FORMATS
from trailblaze.report.output import as_shown, emit
from trailblaze.report.pathbase import default_base
from trailblaze.report.record import EXIT_USAGE
from trailblaze.state.gcpause import for_one_command, set_aside_for_exit
from trailblaze.workspace import Workspace, find_workspace, is_workspace, owned_by, scan

EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, what a shell reports for a filter cut off by its reader


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
        "--no-tests",
        action="store_true",
        help="do not run the trailmaps' unit tests (tools/*.test.ts, run with bun)",
    )
    check.add_argument(
        "--rerun-tests",
        action="store_true",
        help="run every unit test again, whatever the cache holds (tests that are not hermetic)",
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
        help="accept what upstream Trailblaze's runtime accepts; unknown keys become warnings",
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
        "--no-write",
        action="store_true",
        help="write nothing outside the scratch directory: each trailmap's surface is "
        "generated there, none into its tools/ (the pre-commit hooks use it)",
    )
    check.add_argument(
        "--overwrite-generated",
        action="store_true",
        help="replace the tools/ files Trailblaze itself generated (by default they are left "
        "alone and the check uses its own surface from the scratch directory)",
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
    merge.add_argument(
        "--workspace",
        type=Path,
        metavar="DIR",
        help="the workspace the shards checked, whose files the findings must name and code "
        "frames are read from (default: where the shards' paths put it from here)",
    )

    signing = sub.add_parser(
        "signing-key",
        help="make a key that signs remote-cache entries (or show the public key of one)",
        description=(
            "Write a new Ed25519 private key to FILE (never over an existing file) and print "
            "its public key as the pyproject.toml line readers need. Given a key file that "
            "exists, print its public key. Give FILE to trusted builds as "
            "TRAILBLAZE_REMOTE_CACHE_SIGNING_KEY_FILE; keep it out of the repository."
        ),
    )
    signing.add_argument("file", type=Path, metavar="FILE")

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

    sub.add_parser(
        "lsp",
        help="a language server over stdio: the check's verdict of each open trail as you type "
        "(needs the lsp extra: pygls)",
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
        metavar="SERIAL[,SERIAL...]",
        help="adb serial; repeatable or comma-separated: every trail runs on each device "
        "(default: ANDROID_SERIAL, else the only one)",
    )
    replay.add_argument(
        "--all-devices",
        action="store_true",
        help="replay on every ready device, in parallel (every trail on each)",
    )
    replay.add_argument(
        "--spread",
        action="store_true",
        help="with several devices, run each trail once on the next free device "
        "instead of on every device",
    )
    replay.add_argument(
        "--arg",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="value of a trail argument ({{args.NAME}}); repeatable; wins over --args-file",
    )
    replay.add_argument(
        "--args-file",
        type=Path,
        metavar="FILE",
        help="YAML file of trail argument values (NAME: VALUE per line)",
    )
    replay.add_argument("--json", type=Path, metavar="FILE", help="write the results as JSON")
    replay.add_argument("--junit", type=Path, metavar="FILE", help="write the results as JUnit XML")
    replay.add_argument(
        "--report",
        type=Path,
        metavar="DIR",
        help="write DIR/index.html (one self-contained page, a screenshot after each step) "
        "and DIR/summary.md",
    )
    replay.add_argument(
        "--logcat", action="store_true", help="with --report: each trail's logcat slice"
    )
    replay.add_argument(
        "--record-video",
        action="store_true",
        help="with --report: each trail's screen recording (screenrecord)",
    )
    replay.add_argument(
        "--classifier",
        metavar="C",
        help="the device classifier whose recordings replay (default: android-phone, then android)",
    )
    _replay_flags(replay)
    replay.add_argument("--color", action=argparse.BooleanOptionalAction, default=None)
    return parser


def _replay_flags(replay: argparse.ArgumentParser) -> None:
    """The reference's run flags: which trails, their memory and secrets, the driver."""
    replay.add_argument(
        "--tags",
        action="append",
        default=[],
        metavar="TAG[,TAG]",
        help="replay only the trails whose config.tags hold any of these; repeatable",
    )
    replay.add_argument(
        "--memory",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="seed the trails' memory ({{memory.NAME}}); repeatable; wins over config.memory",
    )
    replay.add_argument(
        "--secret",
        action="append",
        default=[],
        metavar="NAME[=VALUE]",
        help="a secret memory value, hidden in every output; NAME alone reads the environment "
        "variable NAME; repeatable",
    )
    replay.add_argument(
        "--driver",
        metavar="DRIVER",
        help="android-ondevice-accessibility or android-ondevice-instrumentation "
        "(overrides config.devices pins)",
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    commands = {
        "check": check_command,
        "surfaces": _surfaces,
        "replay": _replay,
        "report": _report,
        "schema": _schema,
        "signing-key": _signing_key,
        "lsp": _lsp,
    }
    try:
        return commands[args.command](args)
    except BrokenPipeError:
        # The reader went away (`trailblaze schema | head`): stop quietly, as a filter does, and
        # point stdout at /dev/null so the interpreter's last flush cannot raise again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
    except (TrailblazeError, OSError) as exc:
        # A full disk or a read-only directory is told as a user error is (any other OSError
        # is a bug and keeps its traceback).
        error = exc if isinstance(exc, TrailblazeError) else machine_error(exc)
        if error is None:
            raise
        # The one place a user error ends a command: its message, its exit code, no traceback.
        command = args.command if args.command != "report" else f"report {args.report_command}"
        print(f"trailblaze {command}: {error}", file=sys.stderr)
        return error.exit_code


def program() -> int:
    """The `trailblaze` command as a process (`python -m trailblaze`, the installed script):
    `main` on the process's arguments, then everything it built set aside for the exit.

    The interpreter's last collection at exit walks every object still tracked: after a
    one-edit check of 10,000 trails (their statuses, the record read, the report) that took
    about 25 ms, a tenth of the run, to free memory the exit gives back anyway. Frozen objects
    are left out of it (`gcpause.set_aside_for_exit`); files, the store and the compilers are
    closed by then. Called in a test or an editor's process, `main` freezes nothing."""
    for_one_command()  # the pauses of its check set aside what they made (`gcpause`)
    code = main()
    set_aside_for_exit()
    return code


def _report(args: argparse.Namespace) -> int:
    from trailblaze.check.shard import load_report, merge  # noqa: PLC0415

    loaded = [(path, load_report(path)) for path in args.reports]
    # A shard's paths are relative to where its check ran; its `root` says where the workspace
    # is from there. Run from the same place (or told `--workspace`), this is that workspace:
    # the findings must name its files, and code frames are read from it alone. Nothing a
    # report says (its `workspace`, its `path_base`) decides what is read on this machine.
    here = Path.cwd()
    root = str(loaded[0][1]["shard"].get("root", "."))
    if args.workspace is not None:
        ws: Workspace | None = find_workspace(args.workspace, explicit=True)
    else:
        # A root that leads out of here (absolute, or climbing with '..') is not taken from a
        # report: it could name another workspace on this machine, whose files would be read.
        candidate = (here / root).resolve()
        inside = candidate == here.resolve() or here.resolve() in candidate.parents
        ws = (
            find_workspace(candidate, explicit=True) if inside and is_workspace(candidate) else None
        )
    owned = owned_by(ws, scan(ws)) if ws is not None else None
    report = merge(loaded, owned)  # paths relative to the workspace
    if ws is None:
        # No workspace here to read frames from: the paths as the shards showed them.
        prefix = "" if root == "." else f"{root}/"
        shown = report.with_paths(lambda p: p if p.startswith("/") else prefix + p, str(here))
        frames: dict[str, str] = {}
    else:
        base = default_base(args.format, ws.root, here)
        shown, frames = as_shown([(report, ws.root, None)], base, args.format)
    emit(shown, frames, fmt=args.format, output=args.output, color=getattr(args, "color", None))
    return report.exit_code


def _signing_key(args: argparse.Namespace) -> int:
    """A new signing key in a file of its own (mode 0600), or the public key of one."""
    from trailblaze.state.signing import (  # noqa: PLC0415 - only this command signs
        PUBLIC_KEYS_SETTING,
        new_private_key,
        parse_private_key,
        public_key_text,
    )

    path: Path = args.file
    if os.path.lexists(path):
        try:
            with path.open("rb") as handle:
                seed = parse_private_key(handle.read(64 * 1024), str(path))
        except OSError as exc:
            raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from None
    else:
        pem, seed = new_private_key()
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        try:
            fd = os.open(path, flags, 0o600)
            with os.fdopen(fd, "wb") as handle:
                handle.write(pem)
        except OSError as exc:
            raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None
        print(
            f"trailblaze: wrote a new signing key to {path}: keep it secret, give it to trusted "
            "builds as TRAILBLAZE_REMOTE_CACHE_SIGNING_KEY_FILE, and add its public key to "
            "[tool.trailblaze] in pyproject.toml:",
            file=sys.stderr,
        )
    print(f'{PUBLIC_KEYS_SETTING} = ["{public_key_text(seed)}"]')
    return 0


def _surfaces(args: argparse.Namespace) -> int:
    ws = find_workspace(args.workspace, explicit=args.workspace is not None)
    # The same incremental doit tasks as `doit surfaces`, for a workspace without a dodo.py.
    from trailblaze.doit_tasks.tasks import run_tasks  # noqa: PLC0415 - only this command needs doit

    code = run_tasks(ws.root, ["surfaces"])
    return EXIT_USAGE if code >= 2 else code


def _schema(args: argparse.Namespace) -> int:
    """The trail JSON Schema of one trailmap on stdout, as `doit surfaces` writes it."""
    from trailblaze.check.discover import load_manifests  # noqa: PLC0415
    from trailblaze.generate.trailschema import trail_schema  # noqa: PLC0415
    from trailblaze.generate.tsrender import json_text  # noqa: PLC0415
    from trailblaze.toolmodel.bundled import discover  # noqa: PLC0415 - only this command needs them
    from trailblaze.toolmodel.catalog import load_catalog  # noqa: PLC0415
    from trailblaze.toolmodel.resolution import Resolver  # noqa: PLC0415

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


def _lsp(args: argparse.Namespace) -> int:
    try:
        # pygls is the lsp extra's dependency: imported only for this command.
        from trailblaze.lsp.server import serve  # noqa: PLC0415
    except ImportError as exc:
        raise UsageError(
            f"lsp needs pygls ({exc}); install it with: pip install 'trailblaze-doit[lsp]'"
        ) from None
    return serve()


def _replay(args: argparse.Namespace) -> int:
    # Imported here: the device code (and adbutils behind it) loads only for `replay`.
    from trailblaze.replay.command import run_command  # noqa: PLC0415
    from trailblaze.replay.request import ReplayUsageError, device_serials  # noqa: PLC0415
    from trailblaze.replay.run import ReplayRequest  # noqa: PLC0415

    try:
        serials = device_serials(args.device)
    except ReplayUsageError as exc:
        print(f"trailblaze replay: {exc}", file=sys.stderr)
        return 2
    request = ReplayRequest(
        trails=tuple(args.trails),
        serials=serials,
        all_devices=args.all_devices,
        spread=args.spread,
        args=tuple(args.arg),
        args_file=args.args_file,
        classifier=args.classifier,
        json_path=args.json,
        junit_path=args.junit,
        tags=tuple(args.tags),
        memory=tuple(args.memory),
        secrets=tuple(args.secret),
        driver=args.driver,
        report_dir=args.report,
        logcat=args.logcat,
        record_video=args.record_video,
    )
    return run_command(request, color=args.color)
