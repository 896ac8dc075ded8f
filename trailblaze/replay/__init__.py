"""Replay of recorded trails on Android devices.

The device layer lives here: ``device`` (the ``Device`` protocol and its errors), ``hierarchy``
(uiautomator dump -> node tree), ``selector`` (selector and text matching), ``adb`` (the
adbutils implementation, the only module that imports adbutils), and the fakes ``fakescreen``
(a declarative Android screen model plus the in-memory ``ModelDevice``) and ``fakeadb`` (a fake
adb server serving that model over a real socket).

This package deliberately imports nothing at import time, so ``doit check`` and every
non-replay code path work without adbutils installed.
"""

from __future__ import annotations
