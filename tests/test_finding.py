"""The one `Location` type: what a finding points at and what replay's results carry."""

from __future__ import annotations

from trailblaze.finding import Finding, Location
from trailblaze.replay.results import Failure


def test_a_finding_and_a_replay_failure_name_a_place_the_same_way() -> None:
    finding = Finding(
        kind="parse",
        path="trailmaps/shop/a.trail.yaml",
        line=12,
        column=9,
        message="unknown key 'tapp'",
        key_path="trail[2].recording",
    )
    failure = Failure(
        successful=(),
        failed_tool="tapOnPoint",
        location=finding.location,
        error="no element matches",
        kind="expected",
    )

    assert finding.location == Location("trailmaps/shop/a.trail.yaml", 12, 9, "trail[2].recording")
    assert finding.text.startswith(failure.location.text + ": trail[2].recording: ")
    assert failure.to_json()["location"] == {
        "path": "trailmaps/shop/a.trail.yaml",
        "line": 12,
        "column": 9,
        "key_path": "trail[2].recording",
    }
