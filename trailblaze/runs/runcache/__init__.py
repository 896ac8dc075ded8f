"""A whole check in the remote cache: one action-cache entry for a workspace's complete run.

Bazel answers a build whose inputs are all unchanged with one hit on its top-level action; this
does the same for `trailblaze check` on a fresh clone. Per-trail verdicts (`remote.py`) still
need every trail parsed, every surface generated and the scripted tools' declarations emitted
before a single key is known; the run entry needs nothing but the inputs' bytes.

The key (`RunInputs.key`) is a digest of everything the report depends on, by content, never by
path outside the workspace or by mtime: every trail file and every trailmap file (manifest,
tool files) as workspace-relative path and content digest, whether each trailmap's `.gitignore`
can be read (the check warns when not; its lines are the run's output, not an input), the
baked targets of the workspace and of installed packages, the discovery findings, the
workspace's layout, the check options and scope, the compiler's version and binary size (its
`--version` asked once per binary, `toolchain.compilers.compiler_key`), the content of our own package
(code, catalog, SDK declarations) and the entry format. A workspace whose check reaches outside
those (a hand-written `tools/tsconfig.json`, which may map the SDK anywhere, or an SDK bundle
in the scratch directory that is not ours) has no key: its runs go the per-trail way.

The value is two CAS bodies named by `ac/<key>` (which holds the body's digest and the key it
was stored for): zlib-compressed JSON with the report as the check made it (paths relative to
the workspace), each `.gitignore` before and after the run, and the list of the files the run
generated in the trailmaps' `tools/` (the typed surfaces an editor reads) with the digest of a
second body holding those files' bytes, one after the other (every shard of a build generates
the same files: one body, fetched once). A hit writes those files when they differ (a
`.gitignore` that was not as the writer's gets the lines a check adds) and returns the report:
no parse, no surface, no compiler. Every byte is checked: the entry against its key, the body
against its digest, the report field by field, each trail against the scan and each file name
against the outputs the run may write. A file that cannot be written gives the hit up: the
check runs.

The generated files depend on the trailmaps, not on the trails, so each run entry is stored
with a third, small entry, `ac/<RunInputs.generated>` (a digest of the settings and the
trailmap files, no trail), that names the same list and body. A fresh clone asks for it before
it reads a single trail, and a thread inflates, checks and writes the files while the trails
are read for the run's key: creating a hundred files was a quarter of a warm clone's time at
10,000 trails. The run entry found afterwards must name the very same files (else a fault); on
a miss the check generates the same files itself.

A run entry is written only when the whole run was proven: no infrastructure finding, no trail
"could not run", every trailmap compiled against our SDK, no remote fault on the way, and no
input changed while the check ran; never in read-only mode. What was not type-checked is stored
as not type-checked, with its reason. A shard stores its own entry (its key names the shard),
and an index `ac/<digest of the whole key>` naming the shard count, so that an unsharded run
after a sharded CI build puts the whole report together from the shards' entries
(`shard.merge`: the merged report equals an unsharded run's).

Faults are the remote cache's usual ones (`remote.RemoteFault`): one warning, then the run
works locally without the remote.

Its modules: `keys` (`RunInputs`, `run_inputs`, `index_key`), `body` (the entry's bodies,
encoded and checked), `entries` (`RunCache`, `cached_run`). Their module-level imports are
only `cache`, `fsutil`, `options`, `report`, `scratch`, `store` and `workspace` (and each
other): the heavy ones stay lazy inside functions, so a hit never loads the check pipeline.
"""

from __future__ import annotations

from trailblaze.report.record import STATUSES
from trailblaze.runs.runcache.body import (
    BODY_LIMIT,
    BadBody,
    Body,
    Outputs,
    decode_body,
    encode_body,
    inflate,
    proven,
    report_of,
)
from trailblaze.runs.runcache.entries import RunCache, Warn, cached_run
from trailblaze.runs.runcache.keys import (
    ENTRY_POINT_GROUP,
    OUR_BANNER,
    RUN_FORMAT,
    TSCONFIG,
    RunInputs,
    index_key,
    run_inputs,
)

__all__ = [
    "BODY_LIMIT",
    "ENTRY_POINT_GROUP",
    "OUR_BANNER",
    "RUN_FORMAT",
    "STATUSES",
    "TSCONFIG",
    "BadBody",
    "Body",
    "Outputs",
    "RunCache",
    "RunInputs",
    "Warn",
    "cached_run",
    "decode_body",
    "encode_body",
    "index_key",
    "inflate",
    "proven",
    "report_of",
    "run_inputs",
]
