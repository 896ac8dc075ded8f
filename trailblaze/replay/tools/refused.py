"""Android-recordable framework tools that Android replay cannot perform, and why.

Each needs what a recording does not carry and adb cannot give: a language model (the AI
tools), the model itself (its answer formats), Revyl's cloud service, or a Trailblaze-host
algorithm the reference does not define (``assertVisible``'s element refs). Guessing it would
fail good recordings or pass unchecked ones.

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
            "its 'ref' (such as 'y778') is a content hash that Trailblaze's compact element "
            "listing computes over its own accessibility node tree, by rules the reference "
            "this replay follows does not give (its TrailblazeNode only says 'see the Kotlin "
            "doc for the hashing rules'), so no node of a uiautomator dump can be matched to "
            "it; checking 'expectedText' on whichever element carries it would pass a trail "
            "without checking the element it recorded"
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
