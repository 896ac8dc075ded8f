"""`trailblaze check`: the command's scopes, its no-op, the pipeline, the report shown.

The scopes come from `scope.py` (a workspace, a trailmap, trail files or standard input;
`--all` at a monorepo's root: every workspace, `monorepo.py`). A run whose inputs did not
change since a complete check repeats that check's output (`noop.py`) without loading the
pipeline. Otherwise each scope is checked, the reports become one with paths as the reader
wants them, and it is shown (`output.py`). User errors raise; `cli.main` shows them.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from trailblaze.cli.scope import check_scope, resolve_scopes
from trailblaze.errors import UsageError
from trailblaze.generate.owners import outputs_state
from trailblaze.options import CheckOptions, unit_test_env
from trailblaze.report.console import RichProgress, toolchain_progress
from trailblaze.report.output import as_shown, deliver, emit, rendered
from trailblaze.report.pathbase import default_base
from trailblaze.report.record import Report
from trailblaze.state.gcpause import gc_paused, one_command
from trailblaze.toolchain.bun import BUN_ENV
from trailblaze.toolchain.compilers import TSC_ENV
from trailblaze.toolmodel.sources import check_inputs
from trailblaze.workspace import (
    SettingsError,
    WorkspaceError,
    find_workspace,
    is_workspace,
    scan,
)

if TYPE_CHECKING:
    from trailblaze.check.typegate.primed import PrimedCompiler


def check_command(args: argparse.Namespace) -> int:
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
    _check_remote(options, ws.remote_keys)
    base = (args.path_base or default_base(args.format, ws.root, cwd)).absolute()
    files_scope = any(s.files or s.stdin for s in scopes)
    # Trail files (an editor's buffer on stdin, say) and the tool listing are not replayed.
    variant = None if files_scope or args.show_typed_tools else _variant(args)
    found = None
    stats: dict[str, os.stat_result | None] | None = None
    reads: list[str] = []
    if not files_scope:
        from trailblaze.cli.noop import Outputs  # noqa: PLC0415

        found = scan(ws)
        files = check_inputs(found, ws.targets_dir)
        settings = {
            "strict": options.strict,
            "typecheck": options.typecheck,
            "require_typecheck": options.require_typecheck,
            "shard": options.shard,
            # Where the surfaces go: a run that wrote none into tools/ is not the one that does.
            "write": options.write,
            "overwrite_generated": options.overwrite_generated,
            "cwd": os.getcwd(),
            "tsc": os.environ.get(TSC_ENV, ""),
            "tests": options.tests,
            "bun": os.environ.get(BUN_ENV, ""),
            "test_env": unit_test_env(),
            "rerun_tests": options.rerun_tests,
            "trailmap": scopes[0].trailmap,
            "path_base": str(base),
            "tool_diagnostics": not args.no_typecheck,
            "outputs": outputs_state(found),
            # What the scan said of files that are no inputs (`trailblaze.yaml`'s `trailmaps:`
            # entries, a `packs/` layout): a warning that appears there is no stale output.
            "scan": [f.to_json() for f in found.findings],
            # A pass the remote served under some keys (or none) is not repeated under others
            # (`signing.trust_scope`).
            "remote_keys": list(ws.remote_keys),
            "workspace": ws.settings,
        }
        outputs = Outputs(ws.scratch)
        if options.remote_cache and not outputs.any_recorded():
            # A fresh clone: nothing to repeat. Its inputs are looked at once, for the run
            # entry's key (`cached_run` adds their stats), and the no-op key is made of those.
            key = None
            stats = {}
        else:
            key, stats, reads, recorded = outputs.recall(files, settings, variant)
            if recorded is not None and not options.rerun_tests:
                # Nothing changed since a complete check: its output again, without the pipeline.
                output, code = recorded
                deliver(output, args.output)
                return code
    run_check: Callable[..., Report]
    primed: PrimedCompiler | None = None
    if found is not None and options.remote_cache and not options.rerun_tests:
        # A fresh clone may find this whole run in the remote cache (`trailblaze/runs/runcache/`),
        # and the run after such a hit its trail rows (`runs/rows.py`): `doit check`'s way, so
        # an entry a CI `trailblaze check` stored gives a developer's `doit check` its rows.
        from trailblaze.runs.monorepo import SharedRemote, check_remote  # noqa: PLC0415

        run_check = partial(check_remote, shared=SharedRemote())
    else:
        # While the pipeline loads, a compiler loads its program on the other core.
        if found is not None:
            from trailblaze.check.typegate.primed import prime  # noqa: PLC0415 - after a miss

            primed = prime(ws.scratch, options)
        # Loading the pipeline makes its modules, classes and functions, none garbage: the
        # collector's passes over them would free nothing (nor after, when set aside).
        with gc_paused(set_aside=one_command()):
            from trailblaze.check.run import run_check as local  # noqa: PLC0415 - not on the no-op

        # The inputs as the no-op key listed them: the narrow check's key lists them no more.
        run_check = partial(local, listed=files, primed=primed) if found is not None else local

    identity = None
    if options.shard is not None and found is not None:
        from trailblaze.runs.runcache.keys import run_identity, with_run_key  # noqa: PLC0415

        # Every input by content, before the check: the key `report merge` joins shards by.
        identity = run_identity(ws, found, options, stats)
    stdin_text = sys.stdin.read() if any(s.stdin for s in scopes) else None
    started = time.monotonic()
    parts: list[tuple[Report, Path, dict[str, str]]] = []
    # The check pauses the collector itself; the command keeps what it made until it exits.
    with toolchain_progress(sys.stderr), _closing(primed), gc_paused(set_aside=one_command()):
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
            shown = scoped.report
            if identity is not None and shown.shard is not None:
                shown = with_run_key(shown, identity, scope.trailmap)
            parts.append((shown, scope.workspace.root, scoped.renamed))
            if args.show_typed_tools:
                from trailblaze.cli.typedtools import typed_tools_listing  # noqa: PLC0415

                listing = typed_tools_listing(scope.workspace, scoped.report.trailmaps)
                quiet = args.format != "text" or args.output is not None
                (sys.stderr if quiet else sys.stdout).write(listing)
    report, frames = as_shown(parts, base, args.format)
    report = dataclasses.replace(report, duration=time.monotonic() - started)
    if variant is None:
        emit(report, frames, fmt=args.format, output=args.output, color=args.color)
        return report.exit_code
    with gc_paused(set_aside=one_command()):  # rendering makes many objects and no cycle
        text = rendered(report, frames, args.format)
    deliver(text, args.output)
    after = outputs_state(found) if found is not None else []
    read_now = outputs.reads()
    if key is None or after != settings["outputs"] or read_now != reads:
        from trailblaze.cli.noop import known_key  # noqa: PLC0415

        # Recorded with the generated files as the run left them (a fresh clone's, written),
        # the files its compilers read as it recorded them, and the inputs as they were before
        # it. None when the run did not look at every one before checking (a file read for the
        # first time): not recorded, and the next run checks again.
        key = known_key([*files, *read_now], {**settings, "outputs": after}, stats or {})
    if not report.complete:
        outputs.forget()  # not a complete check: the next run checks again
    elif key is not None:
        outputs.remember(key, variant, text.encode("utf-8"), report.exit_code)
    return report.exit_code


def _closing(primed: PrimedCompiler | None) -> contextlib.AbstractContextManager[object]:
    """`primed` stopped when the block ends, however it ends."""
    return contextlib.closing(primed) if primed is not None else contextlib.nullcontext()


def _in_no_workspace(start: Path, *, explicit: bool) -> bool:
    """`--all` outside any workspace (a monorepo's root): every workspace under it. Inside a
    workspace, however deep, `--all` is the reference's: every trailmap of that workspace."""
    if explicit:
        return not is_workspace(start.resolve())
    try:
        find_workspace(start)
    except SettingsError:
        raise  # a workspace whose settings are bad is not a monorepo's root
    except WorkspaceError:
        return True
    return False


def _options(args: argparse.Namespace) -> CheckOptions:
    from_env = CheckOptions.from_env(
        strict=not args.lenient,
        require_typecheck=args.require_typecheck,
        remote_cache=args.remote_cache,
        remote_read_only=args.remote_cache_read_only,
        write=not args.no_write,
        overwrite_generated=args.overwrite_generated,
    )
    options = replace(
        from_env,
        shard=_shard(args.shard),
        tests=not args.no_tests and from_env.tests,
        rerun_tests=args.rerun_tests or from_env.rerun_tests,
    )
    _check_remote(options)
    return options


def _check_monorepo(root: Path, options: CheckOptions, args: argparse.Namespace) -> int:
    """Every workspace of the monorepo at `root`, one report (`monorepo.py`)."""
    from trailblaze.runs.monorepo import check_all, find_monorepo  # noqa: PLC0415

    if args.path_base is not None and not args.path_base.is_dir():
        raise UsageError(f"--path-base {args.path_base}: not a directory")
    mono = find_monorepo(root)
    for ws in mono.workspaces:
        _check_remote(options, ws.remote_keys)
    with toolchain_progress(sys.stderr):
        report = check_all(mono, options, progress=RichProgress.for_terminal())
    base = (args.path_base or default_base(args.format, mono.root, Path.cwd())).absolute()
    shown, frames = as_shown([(report, mono.root, None)], base, args.format)
    emit(shown, frames, fmt=args.format, output=args.output, color=args.color)
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


def _shard(text: str | None) -> tuple[int, int] | None:
    if text is None:
        return None
    from trailblaze.check.shard import Shard  # noqa: PLC0415

    shard = Shard.parse(text)
    return (shard.index, shard.count)


def _check_remote(options: CheckOptions, public_keys: Sequence[str] = ()) -> None:
    """A remote-cache setting that cannot work (a URL, a header, a signing key, the
    workspace's public keys) is a usage error, before any work."""
    if options.remote_cache:
        from trailblaze.state.remote import RemoteConfig  # noqa: PLC0415

        RemoteConfig.resolve(
            options.remote_cache, read_only=options.remote_read_only, public_keys=public_keys
        )
