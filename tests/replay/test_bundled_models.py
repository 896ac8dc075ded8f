"""The bundled workspace's device model: every recorded Android step of `trailmaps/` replays green.

Fast, on ``ModelDevice``; ``test_e2e`` runs the same through `doit replay` and real adbutils.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fakeadb import FakeDevice, ModelDevice
from tests.conftest import REPO_WORKSPACE
from trailblaze.replay.run import ReplayRequest, replay
from trailblaze.workspace import find_workspace, scan

from .support import BUNDLED_MODEL, FAST, ROOT

pytestmark = REPO_WORKSPACE

ARGS = ("title=Weekend plans", "email=ada@example.com")
WORKSPACE = find_workspace(ROOT, explicit=True)
TRAILS = [WORKSPACE.rel(p) for p in scan(WORKSPACE).trails]
NEEDS_ARGS = {
    "trailmaps/notes/trails/create-note.trail.yaml": "title",
    "trailmaps/shop/trails/login/trail.yaml": "email",
}
SKIPPED = {
    "trailmaps/notes/trails/drafts/blaze.yaml",
    "trailmaps/shop/trails/wishlist.trail.yaml",
}


def fresh() -> ModelDevice:
    return ModelDevice(FakeDevice.load(BUNDLED_MODEL), timeout=5)


def test_the_model_is_neither_a_trail_nor_a_trailmap() -> None:
    found = scan(WORKSPACE)
    assert [t.dir_name for t in found.trailmaps] == ["common", "notes", "shop"]
    assert not [p for p in found.trails if "devices" in p.parts]
    assert not found.findings


def test_the_whole_workspace_replays_green_in_order() -> None:
    run = replay(ReplayRequest(workspace=ROOT, args=ARGS), device=fresh(), options=FAST)

    assert run.exit_code == 0
    assert {t.path: t.status for t in run.trails if t.status != "passed"} == {
        "trailmaps/notes/trails/drafts/blaze.yaml": "skipped",
        "trailmaps/shop/trails/wishlist.trail.yaml": "skipped",
    }
    assert {t.path for t in run.trails if t.status == "skipped"} == SKIPPED
    assert run.counts()["steps_failed"] == 0


@pytest.mark.parametrize("trail", TRAILS)
def test_each_trail_replays_green_alone_on_a_fresh_device(trail: str) -> None:
    # `--arg` names must be declared by a replayed trail: pass each trail only its own.
    args = tuple(a for a in ARGS if a.split("=")[0] == NEEDS_ARGS.get(trail))
    run = replay(
        ReplayRequest(trails=(ROOT / trail,), workspace=ROOT, args=args),
        device=fresh(),
        options=FAST,
    )

    assert run.trails[0].status in ("passed", "skipped"), run.to_json()
    assert run.trails[0].status == ("skipped" if trail in SKIPPED else "passed"), run.to_json()


DECLARED_AT = {
    "trailmaps/notes/trails/create-note.trail.yaml": "10:5",
    "trailmaps/shop/trails/login/trail.yaml": "11:5",
}


@pytest.mark.parametrize(("trail", "arg"), sorted(NEEDS_ARGS.items()))
def test_a_required_argument_without_a_value_refuses_the_trail_before_the_device(
    trail: str, arg: str
) -> None:
    model = FakeDevice.load(BUNDLED_MODEL)
    run = replay(
        ReplayRequest(trails=(ROOT / trail,), workspace=ROOT),
        device=ModelDevice(model, timeout=5),
        options=FAST,
    )

    assert run.trails[0].status == "refused"
    assert run.trails[0].findings == (
        f"{trail}:{DECLARED_AT[trail]}: config.args.{arg}: missing required argument {arg}: "
        f"pass --arg {arg}=VALUE (or put it in an --args-file), or declare a default: to make "
        "it optional",
    )
    assert run.exit_code == 1
    assert model.commands == []  # bound before any device work, as Trailblaze binds them


def test_the_promo_runif_takes_then_on_the_first_start_and_skips_after(tmp_path: Path) -> None:
    shop = [
        ROOT / "trailmaps/shop/trails/add-to-cart.trail.yaml",
        ROOT / "trailmaps/shop/trails/checkout.trail.yaml",
    ]

    run = replay(ReplayRequest(trails=tuple(shop), workspace=ROOT), device=fresh(), options=FAST)

    runifs = [t.steps[1].tools[0] for t in run.trails]
    assert [r.children[0].status for r in runifs] == ["passed", "skipped"]
