"""Which Android driver a trail replays with: ``--driver``, else the trail's pin, else the default.

Trailblaze's drivers have an enum name (``ANDROID_ONDEVICE_INSTRUMENTATION``) and a YAML key
(``android-ondevice-instrumentation``); a trail pins one per classifier in ``config.devices``
(or, in the legacy format, one in ``config.driver``), and scripted tools see the key as
``ctx.device.driverType``. Both names are accepted, in any case.

Replay drives the two on-device Android flavours, accessibility and instrumentation, both over
adb: the choice is the ``driverType`` scripted tools see (and the driver a result names), not
the transport. A pin the plan resolves:

- the most specific classifier of the chain that ``config.devices`` names, else the legacy
  ``config.driver``; a trail without either takes ``DEFAULT_DRIVER`` (accessibility);
- an adb flavour (or the legacy ``ANDROID_HOST``, also adb) is the trail's driver;
- ``REVYL_ANDROID`` (a Revyl cloud device) skips the trail: replay cannot drive it;
- a name Trailblaze does not have refuses the trail, with the names it has;
- a pin to a platform other than Android is not decided here (the non-Android skips are).

``--driver`` overrides every pin; it names one of the two adb flavours or is a usage error.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from trailblaze import codes
from trailblaze.finding import Finding, did_you_mean
from trailblaze.replay.plan import DEFAULT_DRIVER, TrailPlan
from trailblaze.replay.request import ReplayUsageError

#: Trailblaze's drivers: enum name -> YAML key (``TrailblazeDriverType``).
DRIVERS = {
    "ANDROID_ONDEVICE_ACCESSIBILITY": "android-ondevice-accessibility",
    "ANDROID_ONDEVICE_INSTRUMENTATION": "android-ondevice-instrumentation",
    "IOS_HOST": "ios-host",
    "IOS_AXE": "ios-axe",
    "PLAYWRIGHT_NATIVE": "playwright-native",
    "PLAYWRIGHT_ELECTRON": "playwright-electron",
    "REVYL_ANDROID": "revyl-android",
    "REVYL_IOS": "revyl-ios",
    "COMPOSE": "compose",
    # Earlier releases' host-side Android driver (adb from the host), in legacy recordings.
    "ANDROID_HOST": "android-host",
}
#: What ``--driver`` may name: the flavours replay drives over adb.
ADB_DRIVERS = ("android-ondevice-accessibility", "android-ondevice-instrumentation")
_ADB_PINS = (*ADB_DRIVERS, "android-host")
_NOT_DRIVEN = {"revyl-android": "a Revyl cloud device"}


def driver_key(name: str) -> str | None:
    """The YAML key of a driver given by enum name or key, in any case; None when unknown."""
    wanted = name.strip().upper().replace("-", "_")
    return DRIVERS.get(wanted)


def parse_driver(name: str | None) -> str | None:
    """``--driver NAME``: one of the adb flavours, else a usage error listing them."""
    if name is None:
        return None
    key = driver_key(name)
    if key not in ADB_DRIVERS:
        known = ", ".join(ADB_DRIVERS)
        what = "is not a driver replay has" if key is None else "is not driven over adb here"
        raise ReplayUsageError(
            f"--driver '{name}' {what}{did_you_mean(name.lower(), ADB_DRIVERS)} "
            f"(replay drives: {known}; the enum names ANDROID_ONDEVICE_... work too)"
        )
    return key


def with_driver(plan: TrailPlan, override: str | None, chain: Sequence[str]) -> TrailPlan:
    """``plan`` with its driver set, or skipped or refused for a pin replay cannot follow."""
    trail = plan.trail
    if trail is None or not plan.runnable:
        return plan
    if override is not None:
        return replace(plan, driver=override)
    pins = dict(trail.config.devices)
    pin = next(((f"config.devices.{c}", pins[c]) for c in chain if c in pins), None)
    if pin is None and trail.config.driver:
        pin = ("config.driver", trail.config.driver)
    if pin is None:
        return replace(plan, driver=DEFAULT_DRIVER)
    where, value = pin
    key = driver_key(value)
    if key is None:
        known = ", ".join(DRIVERS)
        message = (
            f"unknown driver '{value}'{did_you_mean(value.upper(), tuple(DRIVERS))} "
            f"(Trailblaze's drivers: {known})"
        )
        finding = Finding(
            kind="parse",
            path=plan.path,
            line=trail.config.line,
            column=trail.config.column,
            message=message,
            key_path=where,
            code=codes.INVALID_VALUE,
        )
        return replace(plan, trail=None, findings=(finding,))
    if key in _NOT_DRIVEN:
        return replace(
            plan,
            skip_reason=f"{where} pins {key} ({_NOT_DRIVEN[key]}), which replay does not drive "
            f"(it drives {', '.join(ADB_DRIVERS)} over adb; --driver picks one)",
        )
    if key in _ADB_PINS:
        return replace(plan, driver=key)
    return replace(plan, driver=DEFAULT_DRIVER)
