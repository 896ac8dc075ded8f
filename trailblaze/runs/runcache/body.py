"""A run entry's bodies: the report and generated files of a proven run, encoded and checked.

`encode_body` writes them; `decode_body`, `inflate` and `report_of` take every byte back
checked (`BadBody` / ValueError when it is not what `encode_body` wrote); `proven` says
whether a report may be stored at all.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import msgspec

from trailblaze.finding import Owned
from trailblaze.options import CheckOptions
from trailblaze.report.record import REASON_INFRA, Report, TrailStatus, UnitTest
from trailblaze.runs.runcache.keys import RUN_FORMAT, RunInputs
from trailblaze.state.keys import content_digest
from trailblaze.state.results import decode_findings
from trailblaze.state.transport import inflate_within
from trailblaze.workspace import Workspace


def encode_body(
    inputs: RunInputs, report: Report, reads: Mapping[str, str] | None = None
) -> tuple[bytes, bytes, bytes]:
    """The CAS bodies of a proven run: its report (naming the files it generated, their lengths
    and the digest of their body, and the files its compilers read beyond the inputs with their
    tokens, `state.reads.shown_read` -> token) and those files, one after the other, compressed
    (the shards of a build generate the same ones: one body serves them all); and the files
    entry (`ac/<inputs.generated>`) naming the files and their body without the report."""
    data = report.to_json()
    data["workspace"] = ""
    data.pop("path_base", None)
    data["sdks"] = dict(report.sdks)
    index: list[list[Any]] = []
    blob: list[bytes] = []
    ignores: dict[str, list[str | None]] = {}
    loaded = set(report.trailmaps)
    for rel, path in sorted(inputs.outputs.items()):
        if inputs.owner.get(rel) not in loaded:
            continue  # its manifest did not load: nothing of it was generated this run
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            continue
        if rel in inputs.ignores:
            try:
                ignores[rel] = [inputs.ignores[rel], raw.decode("utf-8")]  # before, after
            except UnicodeDecodeError:
                continue
        elif not rel.endswith("/.gitignore"):
            index.append([rel, len(raw)])
            blob.append(raw)
    body = {
        "format": RUN_FORMAT,
        "key": inputs.entry_key,
        "report": data,
        "files": index,
        "gitignores": ignores,
        "reads": dict(sorted((reads or {}).items())),
    }
    files = zlib.compress(b"".join(blob), 6)
    body["files_sha256"] = content_digest(files)  # its CAS address
    text = json.dumps(body, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    entry = {key: body[key] for key in ("format", "files", "gitignores", "files_sha256")}
    entry["key"] = inputs.generated
    named = json.dumps(entry, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return zlib.compress(text.encode("utf-8"), 6), files, named.encode("utf-8")


class BadBody(ValueError):
    """A run entry's body that is not what `encode_body` writes."""


Outputs = tuple[dict[str, bytes], dict[str, tuple[str | None, str]]]
"""The files a run wrote: generated files (path -> bytes), and each `.gitignore` (path -> its
text before the run and after it)."""


@dataclass(frozen=True, slots=True)
class Body:
    """A run entry's body, checked for shape."""

    report: dict[str, Any]
    files: list[tuple[str, int]]
    """Each generated file and its length, in the order of the files' body."""
    files_sha256: str
    """The digest of the files' body (zlib of the files, one after the other)."""
    ignores: dict[str, tuple[str | None, str]]
    reads: dict[str, str] = field(default_factory=dict)
    """The files the run's compilers read beyond the inputs (as `state.reads.shown_read`
    names them) -> their tokens: a workspace whose files differ is not the one checked."""

    def outputs(self, blob: bytes) -> Outputs:
        """The files, cut out of the files' body (decompressed)."""
        if sum(length for _, length in self.files) != len(blob):
            raise BadBody("the files' body does not hold the files the entry names")
        out: dict[str, bytes] = {}
        at = 0
        for rel, length in self.files:
            out[rel] = blob[at : at + length]
            at += length
        return out, dict(self.ignores)


BODY_LIMIT = 256 * 1024 * 1024
"""The most a body may inflate to unless the caller says otherwise (the default of
`TRAILBLAZE_REMOTE_CACHE_MAX_MB`, `RemoteConfig.max_bytes`): a report of a million trails is
far less."""
_MAX_MB_ENV = "TRAILBLAZE_REMOTE_CACHE_MAX_MB"


def inflate(data: bytes, size: int, limit: int = BODY_LIMIT) -> bytes:
    """zlib `data`, which must inflate to exactly `size` bytes, at most `limit` (never more: a
    bomb is refused as it grows, and a size past the limit before anything is inflated)."""
    if size > limit:
        raise BadBody(f"names {size} bytes of files, {_past(limit)}")
    try:
        out = inflate_within(data, size)
    except zlib.error:
        raise BadBody("not zlib data") from None
    if out.past or not out.ended or len(out.data) != size:
        raise BadBody(f"inflates to other than the {size} bytes named")
    return out.data


def _past(limit: int) -> str:
    return f"more than the {limit / 1048576:g} MiB a body may inflate to ({_MAX_MB_ENV})"


def decode_body(data: bytes, key: str, limit: int = BODY_LIMIT) -> Body:
    """A run entry's body from its CAS bytes (inflating to at most `limit`), or `BadBody`."""
    try:
        inflated = inflate_within(data, limit)
    except zlib.error:
        raise BadBody("the body is not a compressed run entry") from None
    if inflated.past:
        raise BadBody(f"the body inflates to {_past(limit)}")
    if not inflated.ended:
        raise BadBody("the body is cut short")
    text = inflated.data
    try:
        body = json.loads(text)
    except (ValueError, RecursionError):  # nested past the parser: not one of ours
        raise BadBody("the body is not a compressed run entry") from None
    if not isinstance(body, dict) or body.get("format") != RUN_FORMAT or body.get("key") != key:
        raise BadBody("the body belongs to another key or format")
    report = body.get("report")
    if not isinstance(report, dict):
        raise BadBody("the body has no report")
    return Body(report, *_named_files(body, "the body"), reads=_reads(body.get("reads")))


READS_LIMIT = 100_000
"""The most files a run entry may say its compilers read beyond the inputs."""


def _reads(raw: Any) -> dict[str, str]:
    if (
        not isinstance(raw, dict)
        or len(raw) > READS_LIMIT
        or not all(isinstance(k, str) and isinstance(v, str) for k, v in raw.items())
    ):
        raise BadBody("the body has a malformed record of the files the compiler read")
    return raw


def files_entry(entry: dict[str, Any]) -> Body:
    """A files entry (`ac/<RunInputs.generated>`, `encode_body`'s third part, as
    `remote.decoded_entry` read it) as a `Body` without a report, or `BadBody`."""
    return Body({}, *_named_files(entry, "it"))


def _named_files(
    body: dict[str, Any], what: str
) -> tuple[list[tuple[str, int]], str, dict[str, tuple[str | None, str]]]:
    """The files a body or files entry names, their body's digest and the `.gitignore`s."""
    files, digest_ = body.get("files"), body.get("files_sha256")
    if not isinstance(files, list):
        raise BadBody(f"{what} names no files")
    if not isinstance(digest_, str) or len(digest_) != 64:
        raise BadBody(f"{what} does not name its files")
    if not all(
        isinstance(f, list)
        and len(f) == 2
        and isinstance(f[0], str)
        and isinstance(f[1], int)
        and not isinstance(f[1], bool)
        and f[1] >= 0
        for f in files
    ):
        raise BadBody(f"{what} has a malformed file list")
    raw = body.get("gitignores")
    if not isinstance(raw, dict):
        raise BadBody(f"{what} has no .gitignore record")
    ignores: dict[str, tuple[str | None, str]] = {}
    for path, pair in raw.items():
        if (
            not isinstance(pair, list)
            or len(pair) != 2
            or not (pair[0] is None or isinstance(pair[0], str))
            or not isinstance(pair[1], str)
        ):
            raise BadBody(f"{what} has a malformed .gitignore record")
        ignores[path] = (pair[0], pair[1])
    return [(f[0], f[1]) for f in files], digest_, ignores


def report_of(
    data: Mapping[str, Any], ws: Workspace, options: CheckOptions, stats: dict[str, Any]
) -> Report:
    """A `Report` from its stored JSON, checked field by field (ValueError when it is not)."""
    try:
        trails = tuple(TrailStatus.checked(t) for t in data["trails"])
        findings = tuple(decode_findings(data["findings"]))
        trailmaps = tuple(data["trailmaps"])
        sdks = data.get("sdks") or {}
        shard = data.get("shard")
        # A run answered by the cache ran none of its tests here.
        tests = tuple(
            msgspec.structs.replace(UnitTest.checked(u), cached=True)
            for u in data.get("tests") or ()
        )
    except (KeyError, TypeError) as exc:
        raise ValueError(f"malformed report: {exc}") from None
    if not all(isinstance(t, str) for t in trailmaps):
        raise ValueError("malformed report: trailmaps")
    if not isinstance(sdks, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in sdks.items()
    ):
        raise ValueError("malformed report: sdks")
    if shard is not None and not isinstance(shard, dict):
        raise ValueError("malformed report: shard")
    return Report(
        workspace=str(ws.root),
        trailmaps=trailmaps,
        trails=trails,
        findings=findings,
        require_typecheck=options.require_typecheck,
        stats=stats,
        shard=shard,
        sdks=dict(sdks),
        tests=tests,
    )


def proven(report: Report, owned: Owned | None = None) -> bool:
    """Whether a report may be shared as a whole: every trail checked or not checked for a
    reason that holds wherever the same inputs are checked, nothing left undone, and (with
    `owned`) every finding about a file of the workspace, as a reader requires (`refused`)."""
    if not report.complete or report.stats.get("remote_fault"):
        return False
    if owned is not None and refused(report, owned) is not None:
        return False
    if report.stats.get("reads_covered") is False:
        return False  # a file the compiler read may have changed under it
    if any(t.reason == REASON_INFRA for t in report.trails):
        return False
    from trailblaze.generate.sdk import OURS_LABEL  # noqa: PLC0415 - loaded by the check already

    return all(label == OURS_LABEL for label in report.sdks.values())


def refused(report: Report, owned: Owned) -> str | None:
    """Why a stored report cannot be this workspace's: a finding about a file that is not one
    of its trails or tool files, or at a line or column out of range (None: none is)."""
    for finding in report.findings:
        problem = owned.refuses(finding)
        if problem is not None:
            return problem
    return None
