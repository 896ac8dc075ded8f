"""Android-recordable framework tools that Android replay cannot perform, and why.

A trail whose chosen recording calls one of these is refused before anything is sent to the
device (``run`` checks every planned call, ``runIf`` branches included), with the reason below;
the engine refuses them the same way if one is reached another way (a composed tool's body).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

_AI = (
    "it asks a language model to read the screen, which only the AI runner has; "
    "a recording cannot replay it without one"
)
_ANSWER = (
    "it is an internal answer format of the model, not a device action (upstream registers no "
    "tool for it, so Trailblaze itself reads a recorded call as an unknown tool)"
)
_REVYL = (
    "it drives a Revyl cloud device through Revyl's service, which finds the element described "
    "in words with its own AI grounding; adb has no such device or service"
)

REFUSED: Mapping[str, str] = MappingProxyType(
    {
        "assertWithAi": _AI,
        "rememberText": _AI,
        "rememberNumber": _AI,
        "rememberWithAi": _AI,
        "booleanAssertion": _ANSWER,
        "stringEvaluation": _ANSWER,
        "elementRetriever": _ANSWER,
        "assertVisible": (
            "its 'ref' names an element of the AI agent's compact screen listing from the "
            "recording session; replay has no such listing and cannot rebuild its numbering "
            "from a uiautomator dump"
        ),
        "assertWaypoint": (
            "it evaluates a waypoint definition (waypoints/**/*.waypoint.yaml) on the "
            "Trailblaze host (requiresHost), whose format the reference this replay follows "
            "does not define"
        ),
        **dict.fromkeys(
            (
                "revyl_assert",
                "revyl_back",
                "revyl_doubleTap",
                "revyl_navigate",
                "revyl_pressKey",
                "revyl_swipe",
                "revyl_tap",
                "revyl_type",
            ),
            _REVYL,
        ),
    }
)
