"""The remote cache's part in a type gate run: verdicts fetched before a batch is compiled,
proven ones stored in the background after.

A trail's verdict is addressed by the digest of its result key (`Job.key`), the same key as in
the local result cache (`results.ResultKey`).
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from trailblaze.check.typegate.jobs import GateResult, Job
from trailblaze.finding import Finding
from trailblaze.options import CheckOptions
from trailblaze.state.signing import SigningError

if TYPE_CHECKING:
    from trailblaze.state.remote import RemoteResults

# `state.remote` (an HTTP client, TLS) is imported only where a remote cache is named: a check
# without one, a one-trail edit above all, does not pay for its import.


class RemoteVerdicts:
    """One run's use of a remote result cache."""

    def __init__(self, remote: RemoteResults) -> None:
        self.remote = remote
        self._storing = ThreadPoolExecutor(1, thread_name_prefix="remote-store")
        self._stores: list[Future[None]] = []

    @classmethod
    def open(cls, options: CheckOptions, public_keys: Sequence[str] = ()) -> RemoteVerdicts | None:
        """The remote cache the options name, with the workspace's `remote-cache-public-keys`,
        or None (none named, or a setting that cannot work: the CLI and the doit task refuse
        those before the check starts)."""
        if not options.remote_cache:
            return None
        from trailblaze.state.remote import (  # noqa: PLC0415 - see the imports
            RemoteConfig,
            RemoteConfigError,
            RemoteResults,
        )

        try:
            config = RemoteConfig.resolve(
                options.remote_cache, read_only=options.remote_read_only, public_keys=public_keys
            )
        except (RemoteConfigError, SigningError):
            return None
        return None if config is None else cls(RemoteResults(config))

    def fetch(self, batch: list[Job]) -> dict[str, list[Finding]]:
        """The verdicts the remote cache holds for jobs of the batch, by trail path."""
        found = self.remote.fetch([(job.key, job.path) for job in batch])
        hits: dict[str, list[Finding]] = {}
        for job in batch:
            entry = found.get(job.key)
            if entry is not None:
                hits[job.path] = [Finding.from_json(f) for f in entry]
        return hits

    def store(self, batch: list[Job], result: GateResult) -> None:
        """Store, in the background, the verdicts the compiler really produced for the batch:
        a trail whose check could not complete has none in `result.findings`."""
        proven = [
            (job.key, [f.to_json() for f in result.findings[job.path]])
            for job in batch
            if job.path in result.findings and job.path not in result.failed
        ]
        self._stores.append(self._storing.submit(self.remote.store, proven))

    def close(self) -> dict[str, Any]:
        """Wait for every store, close the connection; the remote cache's stats."""
        self._storing.shutdown(wait=True)
        for future in self._stores:
            future.result()
        self.remote.close()
        return self.remote.stats()
