"""Replay of recorded trails on Android devices (`doit replay`, `trailblaze replay`).

The entry point is ``run.replay`` with a ``request.ReplayRequest`` (``command.run_command``
adds the console, Ctrl-C and exit codes). Before anything is sent to a device, ``trailfiles``
finds the trails, ``plan`` runs the strict parse gate and the shared ``runIf`` validator and
picks each step's recording, and ``preflight`` refuses a trail that would call a tool Android
cannot perform (``tools.REFUSED``). ``devicepool`` spreads the trails over the devices;
``trailrun`` replays one trail step by step with the tools ``trailmaps`` resolves for its
trailmap (``toolsource``). ``engine.Runner`` replays a step recording tool by tool inside its
batch scope (``scope``; ``context`` holds what the tools of a batch share; ``invocation`` the
records of one dispatch; ``conditional`` runs ``runIf``), parsing arguments with
``arguments`` (tokens, then the tool's JSON Schema) and running the Android implementations in
``tools``. ``timing`` splits each tool's time into startup, launch, act, settle and capture.
Outcomes are ``results`` records (JSON, JUnit XML); ``render`` shows them. ``failure`` defines
the three ways a tool fails.

The device layer: ``device`` (the ``Device`` protocol and its errors), ``hierarchy``
(uiautomator dump -> node tree), ``javaregex`` (recorded Java regexes, regex-or-literal text
matching), ``selector`` (recorded selectors, validated and compiled), ``matches`` (which nodes
match: selectors, text search, tap picking), ``adb`` (the adbutils implementation, the only
module that imports adbutils). The fake device that tests replay against (a declarative device
model, the socket-free ``ModelDevice`` and a fake adb server over a real socket) is the
subpackage ``fake``; nothing outside tests imports it.

This package deliberately imports nothing at import time, so ``doit check`` and every
non-replay code path work without adbutils installed; ``run`` imports ``adb`` only when a
device must be connected.
"""

from __future__ import annotations
