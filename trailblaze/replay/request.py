"""What a replay is asked to do (``ReplayRequest``), and the usage errors of asking.

``ReplayUsageError`` is a request that cannot run as given (no workspace, a missing trail file,
a bad ``--arg``, ``--args-file`` or classifier, no adb, no device or several without ``--device``): exit 2 with
its message, raised before anything is sent to a device.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from trailblaze.errors import TrailblazeError
from trailblaze.finding import did_you_mean
from trailblaze.replay.plan import TrailPlan
from trailblaze.trail.argbind import Given, raw_value
from trailblaze.trail.argtokens import ARG_NAME
from trailblaze.yaml.node import YamlError, YMap, kind_of, load, read_text

ARG_PATTERN_HELP = "NAME=VALUE"


class ReplayUsageError(TrailblazeError):
    """The request cannot run as given: exit 2 with the message."""


@dataclass(frozen=True, slots=True)
class ReplayRequest:
    trails: tuple[Path, ...] = ()
    """Trail files or directories; empty means every trail of the workspace."""
    workspace: Path | None = None
    """Where to look for the workspace when no trails are named (default: the current dir)."""
    serials: tuple[str, ...] = ()
    """The devices (``--device``, repeatable); default ``ANDROID_SERIAL``, else the only one."""
    all_devices: bool = False
    """Replay on every ready device (``--all-devices``), with ``serials`` or without."""
    spread: bool = False
    """Spread the trails over the devices, each trail once (``--spread``); by default every
    trail runs on every device."""
    args: tuple[str, ...] = ()
    """``NAME=VALUE`` trail arguments (``--arg``); each wins over the args file's value."""
    args_file: Path | None = None
    """A YAML file of argument values (``--args-file``)."""
    classifier: str | None = None
    # The flags of `flags` and `drivers`, read and checked there before any device work.
    tags: tuple[str, ...] = ()
    """``--tags`` values (each may hold several, comma-separated)."""
    memory: tuple[str, ...] = ()
    """``NAME=VALUE`` memory values (``--memory``)."""
    secrets: tuple[str, ...] = ()
    """``NAME=VALUE`` or ``NAME`` (from the environment) secrets (``--secret``)."""
    driver: str | None = None
    """``--driver``: overrides every trail's pin."""
    json_path: Path | None = None
    junit_path: Path | None = None
    report_dir: Path | None = None
    """``--report DIR``: ``index.html``, ``summary.md`` and the screenshots of each step."""
    logcat: bool = False
    """``--logcat``: each trail's logcat slice in the report."""
    record_video: bool = False
    """``--record-video``: each trail's ``screenrecord`` in the report."""


def device_serials(values: Sequence[str]) -> tuple[str, ...]:
    """``--device`` values, repeated or comma-separated (``--device a,b``), in order, once each."""
    serials: dict[str, None] = {}
    for value in values:
        for part in value.split(","):
            serial = part.strip()
            if not serial:
                raise ReplayUsageError(f"--device {value!r}: an empty serial")
            serials[serial] = None
    return tuple(serials)


def parse_arg_values(values: Sequence[str]) -> dict[str, Given]:
    """``--arg NAME=VALUE`` values (split at the first ``=``), the last of a name winning."""
    out: dict[str, Given] = {}
    for value in values:
        name, sep, text = value.partition("=")
        name = name.strip()
        if not sep or not name:
            raise ReplayUsageError(f"--arg {value!r}: expected {ARG_PATTERN_HELP}")
        if not ARG_NAME.fullmatch(name):
            raise ReplayUsageError(f"--arg {value!r}: {_not_a_name(name)}")
        out[name] = Given(text, f"--arg {name}")
    return out


def read_args_file(path: Path) -> dict[str, Given]:
    """An ``--args-file``: a YAML mapping of argument names to values, as Trailblaze reads it.

    A quoted scalar is text; a plain one is read by the argument's declared type when the trail
    binds it; a list or a mapping is an array or object value; a null is refused then. Every
    problem with the file itself is a usage error at its ``path:line:col``.
    """
    try:
        node = load(read_text(path))
    except YamlError as exc:
        raise ReplayUsageError(
            f"--args-file {path}:{exc.line}:{exc.column}: {exc.message}"
        ) from None
    if node is None:
        return {}
    if not isinstance(node, YMap):
        raise ReplayUsageError(
            f"--args-file {path}:{node.line}:{node.column}: expected a mapping of argument "
            f"names to values, found {kind_of(node)}"
        )
    out: dict[str, Given] = {}
    for key, value in node:
        where = f"{path}:{key.line}:{key.column}"
        if not ARG_NAME.fullmatch(key.text):
            raise ReplayUsageError(f"--args-file {where}: {_not_a_name(key.text)}")
        out[key.text] = Given(raw_value(value), f"--args-file {path}:{value.line}:{value.column}")
    return out


def _not_a_name(name: str) -> str:
    """What is wrong with a given name that `ARG_NAME` refuses (`--arg` and `--args-file`)."""
    return f"'{name}' is not an argument name (letters, digits and '_', not starting with a digit)"


def given_args(args: Sequence[str], args_file: Path | None) -> dict[str, Given]:
    """The values of a run: the ``--args-file``'s, each overridden by an ``--arg`` of its name."""
    values = read_args_file(args_file) if args_file is not None else {}
    values.update(parse_arg_values(args))
    return values


def check_args(args: Mapping[str, Given], plans: Sequence[TrailPlan]) -> None:
    """Every given argument must be declared by a trail of the run."""
    declared = frozenset().union(*(p.declared_args for p in plans))
    for name, given in args.items():
        if name not in declared:
            known = ", ".join(sorted(declared)) or "none"
            raise ReplayUsageError(
                f"{given.source}: no trail here declares argument '{name}'"
                f"{did_you_mean(name, declared)} (declared: {known})"
            )
