"""Helpers for the replay engine tests: short timeouts, trails written inline, runners."""

from __future__ import annotations

import os
import textwrap
import threading
from collections.abc import Mapping
from pathlib import Path

try:
    import adbutils  # noqa: F401 - checked here so that a broken install fails instead of skipping
except ImportError as exc:  # pragma: no cover - only on a broken test install
    raise ImportError(
        "the replay tests need adbutils, which the [test] extra installs "
        f"(pip install -e '.[test]'): {exc}"
    ) from exc

from trailblaze.replay.arguments import Tokens
from trailblaze.replay.context import ReplayOptions
from trailblaze.replay.device import Device
from trailblaze.replay.engine import Runner
from trailblaze.replay.invocation import Hooks
from trailblaze.replay.toolsource import ToolSource
from trailblaze.toolchain.compilers import TOOLCHAIN_DIR_ENV
from trailblaze.toolmodel.catalog import load_catalog
from trailblaze.trail.model import ToolCall, Trail
from trailblaze.trail.parse import parse_trail

ROOT = Path(__file__).resolve().parent.parent.parent
DATA = ROOT / "tests" / "data" / "replay"
SAMPLE_APP = DATA / "sample_app.yaml"
BUNDLED_MODEL = ROOT / "trailmaps" / "devices" / "pixel.yaml"
PACKAGE = "xyz.block.trailblaze.examples.sampleapp"
TRAIL = "t.trail.yaml"

#: Waits short enough that a failing find costs a fraction of a second.
FAST = ReplayOptions(
    find_timeout=0.3,
    condition_timeout=0.2,
    poll_interval=0.02,
    launch_timeout=1.0,
    settle=0.0,
    device_timeout=5.0,
)


def trail_text(*recordings: str, config: str = "", classifier: str = "android") -> str:
    """A unified trail with one step per recording (each a YAML list of calls)."""
    lines = [textwrap.dedent(config).strip("\n")] if config else []
    lines.append("trail:")
    for i, recording in enumerate(recordings, start=1):
        lines += [f"  - step: step {i}", "    recording:", f"      {classifier}:"]
        lines += ["        " + line for line in textwrap.dedent(recording).strip("\n").splitlines()]
    return "\n".join(lines) + "\n"


def parse(text: str, path: str = TRAIL, *, check: bool = True) -> Trail:
    """A trail through the parse gate; ``check=False`` tolerates non-rejecting findings."""
    outcome = parse_trail(path, text)
    assert outcome.trail is not None, [f.text for f in outcome.findings]
    if check:
        assert not [f for f in outcome.findings if f.fatal], [f.text for f in outcome.findings]
    return outcome.trail


def calls(recording: str, *, config: str = "", check: bool = True) -> tuple[ToolCall, ...]:
    """The calls of a recording given as a YAML list."""
    trail = parse(trail_text(recording, config=config), check=check)
    return trail.steps[0].recordings[0].calls


def runner(
    device: Device,
    *,
    tokens: Tokens | None = None,
    env: Mapping[str, str] | None = None,
    hooks: Hooks | None = None,
    cancel: threading.Event | None = None,
    options: ReplayOptions = FAST,
    tools: ToolSource | None = None,
) -> Runner:
    return Runner(
        device,
        tools or ToolSource(load_catalog()),
        trail=TRAIL,
        tokens=tokens,
        options=options,
        cancel=cancel,
        hooks=hooks,
        env=env or {},
    )


OPEN_FORMS = f"""
- launchApp:
    appId: {PACKAGE}
    launchMode: RESUME
- tapOnElementBySelector:
    nodeSelector:
      containsChild:
        androidAccessibility:
          textRegex: Forms
"""
#: Set the clipboard, focus the Name field, paste: one batch shares the clipboard; with the kill
#: switch every tool has its own context and the paste (line 20, column 11) finds it empty.
CLIPBOARD = (
    OPEN_FORMS
    + """
- mobile_setClipboard:
    text: Jane Doe
- tapOnElementBySelector:
    nodeSelector:
      androidAccessibility:
        hintTextRegex: Name
- mobile_pasteClipboard: {}
"""
)
#: ``CLIPBOARD`` and a check that the pasted text shows.
CLIPBOARD_CHECKED = (
    CLIPBOARD
    + """- assertVisibleWithText:
    text: Jane Doe
"""
)


def child_env(port: int, **extra: str) -> dict[str, str]:
    """The environment of a replay child: the test session's compiler cache, no other settings."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("ANDROID_", "TRAILBLAZE_")) or k == TOOLCHAIN_DIR_ENV
    }
    env.update(
        ANDROID_ADB_SERVER_PORT=str(port), ADBUTILS_ADB_PATH="/bin/false", NO_COLOR="1", **extra
    )
    return env
