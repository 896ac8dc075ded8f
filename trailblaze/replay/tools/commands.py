"""The author tools that run a command for a scripted tool: ``exec`` on the host,
``android_adbShell`` on the device (not recordable; the SDK declares both).

- ``exec`` starts ``argv`` on the machine replay runs on, without a shell (``proc``: list
  arguments, the process group killed on timeout), in ``workingDir`` (default: replay's working
  directory). Its stdout and stderr, interleaved as printed, are the result when the exit code is
  ``expectedExitCode`` (0), kept to the lines ``outputFilterRegex`` (a Java regex) finds a match
  in; another exit code fails the tool with the output's tail. ``timeoutSeconds`` stops it; where
  the reference waits for ever without one, replay waits ``ReplayOptions.exec_timeout``. A
  cancelled run (Ctrl-C) stops it at once.
- ``android_adbShell`` runs ``command`` on the device, each element quoted (what adbutils' list
  form sends, so nothing in it is read as shell syntax), under ``run-as <runAs>`` when given. Its
  stdout is the result on exit code 0; another exit code fails the tool with its stderr. A
  command still running after ``ReplayOptions.command_timeout`` is abandoned: a tool error while
  the device still answers, the device lost when it does not.

Output is decoded as UTF-8; a byte that is not UTF-8 becomes U+FFFD, so the result is always
text a script can hold. Messages show an excerpt with control characters escaped.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

from trailblaze.replay.context import ExecutionContext
from trailblaze.replay.device import CommandTimeout, UnsupportedInputError
from trailblaze.replay.failure import Cancelled, ToolError
from trailblaze.replay.javaregex import compile_regex, translate_java_regex
from trailblaze.replay.tools.base import ToolImpl
from trailblaze.report.escaping import printable
from trailblaze.toolchain import proc

_EXCERPT = 400


def excerpt(text: str, limit: int = _EXCERPT) -> str:
    """The end of ``text`` (where a failing command says why) on one line, its lines joined by
    `` | ``, control characters escaped."""
    text = " | ".join(line.strip() for line in text.splitlines() if line.strip())
    if not text:
        return "no output"
    if len(text) > limit:
        text = "…" + text[-limit:]
    return printable(text)


def _argv(args: dict[str, Any], name: str, tool: str) -> list[str]:
    argv = [str(a) for a in args[name]]
    if not argv or not argv[0]:
        raise ToolError(f"{tool}: '{name}' is empty: its first element names the program to run")
    return argv


def _filter(pattern: str) -> re.Pattern[str]:
    try:
        translated = translate_java_regex(pattern)
        return compile_regex(translated.pattern, translated.flags_on & ~translated.flags_off)
    except re.error as exc:
        raise ToolError(f"exec: outputFilterRegex {pattern!r} is not a regex: {exc}") from None


def exec_command(context: ExecutionContext, args: dict[str, Any]) -> str:
    argv = _argv(args, "argv", "exec")
    shown = shlex.join(argv)
    keep = _filter(args["outputFilterRegex"]) if args.get("outputFilterRegex") else None
    expected = int(args.get("expectedExitCode", 0))
    seconds = args.get("timeoutSeconds")
    if seconds is not None and seconds <= 0:
        raise ToolError(f"exec: timeoutSeconds must be at least 1, got {seconds}")
    limit = float(seconds) if seconds is not None else context.options.exec_timeout
    cwd: Path | None = None
    if args.get("workingDir"):
        cwd = Path(args["workingDir"])
        if not cwd.is_dir():
            raise ToolError(f"exec: workingDir {str(cwd)!r} is not a directory")
    context.check_cancelled()
    try:
        result = proc.run(argv, cwd=cwd, timeout=limit, merge_stderr=True, cancel=context.cancel)
    except proc.ProcCancelled:
        raise Cancelled from None
    except proc.ProcTimeout as exc:
        bound = "" if seconds is not None else " (replay's bound for exec without timeoutSeconds)"
        raise ToolError(
            f"exec: `{shown}` did not finish within {limit:g} s{bound} and was stopped; "
            f"its last output: {excerpt(exc.stdout)}"
        ) from None
    except proc.ProcError as exc:
        raise ToolError(f"exec: `{shown}` could not start: {exc}") from None
    if result.returncode != expected:
        raise ToolError(
            f"exec: `{shown}` exited with {result.returncode} (expected {expected}): "
            f"{excerpt(result.stdout)}"
        )
    if keep is None:
        return result.stdout
    return "".join(line for line in result.stdout.splitlines(keepends=True) if keep.search(line))


def adb_shell(context: ExecutionContext, args: dict[str, Any]) -> str:
    command = _argv(args, "command", "android_adbShell")
    run_as = args.get("runAs") or None
    try:
        result = context.device.run_command(
            command, timeout=context.options.command_timeout, run_as=run_as
        )
    except (CommandTimeout, UnsupportedInputError) as exc:
        raise ToolError(f"android_adbShell: {exc}") from None
    if result.returncode != 0:
        shown = shlex.join(["run-as", run_as, *command] if run_as else command)
        why = result.stderr if result.stderr.strip() else result.output
        raise ToolError(
            f"android_adbShell: `{shown}` exited with {result.returncode} on "
            f"{context.device.serial}: {excerpt(why)}"
        )
    return result.stdout


# Both may change what the screen shows (`adb` host commands, `am start`): the snapshot goes.
TOOLS = (
    ToolImpl("exec", exec_command),
    ToolImpl("android_adbShell", adb_shell),
)
