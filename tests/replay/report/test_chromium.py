"""The report of a failed run as a person sees it: opened in a real headless browser (Debian's
chromium), photographed, and read back from the rendered DOM.

The page must show the failing call marked (its ``failed`` status, its ``file:line:col``, its
message), and make no network request: the browser's net log must hold no request made for the
page (chromium's own background requests are not the page's). The screenshot is kept at
``<tmp>/replay-report.png`` (pytest prints it on failure) and, with TRAILBLAZE_UPDATE_GOLDEN=1,
copied to ``docs/images/replay-report.png``, the picture docs/replay.md shows.
"""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import zlib
from html.parser import HTMLParser
from pathlib import Path

import pytest

from fakeadb import FakeAdbServer, FakeDevice
from tests.golden import UPDATE
from trailblaze.replay.report.html import CSP
from trailblaze.replay.run import ReplayRequest, replay

from ..support import FAST, ROOT
from .test_output import write_failing_trail

GOLDEN = ROOT / "docs" / "images" / "replay-report.png"
WINDOW = (1200, 1500)
#: Headless chromium on a machine with no display, no network and no account.
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    # Belt and braces: whatever is asked for resolves nowhere, so nothing leaves the machine.
    "--host-resolver-rules=MAP * ~NOTFOUND",
)
#: Read at import: the autouse `_clean_env` fixture removes CI before each test runs.
IN_CI = bool(os.environ.get("CI"))
#: The colour of the failure marks (badge, outline) in the page's style.
FAILURE_RED = (0xCF, 0x22, 0x2E)


def chromium() -> str:
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    if IN_CI:
        pytest.fail("chromium is missing in CI: .ci/run installs Debian's chromium package")
    pytest.skip("chromium is not installed (apt-get install chromium); .ci/run installs it in CI")


def browse(page: Path, work: Path, *extra: str) -> tuple[str, list[dict[str, object]]]:
    """Open ``page`` in a fresh profile; its stdout and the net log's events."""
    profile = work / f"profile{len(list(work.glob('profile*')))}"
    netlog = profile.with_suffix(".netlog.json")
    done = subprocess.run(
        [
            chromium(),
            *FLAGS,
            f"--user-data-dir={profile}",
            f"--log-net-log={netlog}",
            *extra,
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "HOME": str(work)},
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    log = json.loads(netlog.read_text("utf-8"))
    return done.stdout, log["events"]


def page_requests(events: list[dict[str, object]]) -> list[dict[str, object]]:
    """The network requests made on behalf of a file:// page (its isolation key names it)."""
    found: list[dict[str, object]] = []
    for event in events:
        params = event.get("params")
        if isinstance(params, dict) and "file://" in str(params.get("network_isolation_key", "")):
            found.append(params)
    return found


class Elements(HTMLParser):
    """Each element's tag, attributes and text (its own and its children's)."""

    VOID = frozenset({"meta", "img", "br", "hr", "link", "input", "source"})

    def __init__(self) -> None:
        super().__init__()
        self.all: list[tuple[str, dict[str, str], list[str]]] = []
        self._open: list[tuple[str, dict[str, str], list[str]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        element = (tag, {k: v or "" for k, v in attrs}, list[str]())
        self.all.append(element)
        if tag not in self.VOID:
            self._open.append(element)

    def handle_endtag(self, tag: str) -> None:
        while self._open:
            if self._open.pop()[0] == tag:
                break

    def handle_data(self, data: str) -> None:
        for _, _, text in self._open:
            text.append(data)

    def find(self, tag: str, *classes: str) -> list[tuple[dict[str, str], str]]:
        return [
            (attrs, " ".join("".join(text).split()))
            for name, attrs, text in self.all
            if name == tag and set(classes) <= set(attrs.get("class", "").split())
        ]


def pixels(png: bytes) -> tuple[int, int, list[bytes]]:
    """Decode an 8-bit RGB/RGBA PNG (what chromium writes) into rows of RGB(A) bytes."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    at, idat, header = 8, b"", b""
    while at < len(png):
        (length,) = struct.unpack(">I", png[at : at + 4])
        kind, body = png[at + 4 : at + 8], png[at + 8 : at + 8 + length]
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            idat += body
        at += 12 + length
    width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", header)
    assert (depth, interlace) == (8, 0)
    size = {2: 3, 6: 4}[colour]
    raw = zlib.decompress(idat)
    stride = width * size
    rows: list[bytes] = []
    prior = bytearray(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - size] if i >= size else 0
            b = prior[i]
            c = prior[i - size] if i >= size else 0
            if kind == 1:
                line[i] = (line[i] + a) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + b) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 0xFF
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else b if pb <= pc else c
                line[i] = (line[i] + pred) & 0xFF
        rows.append(bytes(line))
        prior = line
    return width, height, [row if size == 3 else _rgb(row) for row in rows]


def _rgb(row: bytes) -> bytes:
    return b"".join(row[i : i + 3] for i in range(0, len(row), 4))


def test_the_report_of_a_failed_run_in_headless_chromium(
    server: FakeAdbServer,
    model: FakeDevice,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    chromium()  # skip (locally) or fail (in CI) before any work when there is none
    monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", str(server.port))
    out = tmp_path / "report"
    # A workspace (compact layout), so that the page names the trail as its authors do.
    trails = tmp_path / "app" / "trailmaps" / "forms"
    trails.mkdir(parents=True)
    trail = write_failing_trail(trails)
    request = ReplayRequest(trails=(trail,), report_dir=out, logcat=True)
    assert replay(request, options=FAST).exit_code == 1
    page = out / "index.html"

    shot = tmp_path / "replay-report.png"
    _, events = browse(
        page, tmp_path, f"--screenshot={shot}", f"--window-size={WINDOW[0]},{WINDOW[1]}"
    )
    assert page_requests(events) == []
    width, height, rows = pixels(shot.read_bytes())
    assert (width, height) == WINDOW
    red = bytes(FAILURE_RED)
    marked = sum(row.count(red) for row in rows)
    # The failure's badge and outlines are drawn: thousands of pixels of the failure red.
    assert marked > 2000, f"{shot}: only {marked} pixels of the failure colour"
    if UPDATE:
        GOLDEN.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(shot, GOLDEN)

    dom, events = browse(page, tmp_path, "--dump-dom")
    assert page_requests(events) == []
    elements = Elements()
    elements.feed(dom)
    metas = [a for a, _ in elements.find("meta") if a.get("http-equiv")]
    assert metas == [{"http-equiv": "Content-Security-Policy", "content": CSP}]
    for tag, attrs, _ in elements.all:
        for name in ("src", "href"):
            target = attrs.get(name, "")
            assert not target or target.startswith(("data:image/png;base64,", "#", "trails/")), (
                tag,
                name,
                target[:80],
            )
    assert [t for t, _, _ in elements.all if t in ("script", "iframe", "object", "embed")] == []

    path = "trailmaps/forms/forms.trail.yaml"
    (failed_tool,) = elements.find("li", "tool", "failed")
    attrs, text = failed_tool
    assert attrs["aria-label"] == "tapOnElementBySelector: failed"
    assert text.startswith(f"failed tapOnElementBySelector {path}:16:11 ")
    assert "no element matches" in text
    (failed_step,) = elements.find("li", "step", "failed")
    assert failed_step[0]["aria-label"] == "step 2: failed"
    assert "<script>alert('step')</script>" in failed_step[1]  # the step's name, as text
    (section,) = elements.find("section", "trail", "failed")
    assert section[1].startswith(f"failed {path} on emulator-5554 ")
    (alert,) = elements.find("div", "failure")
    assert f"tapOnElementBySelector failed at {path}:16:11" in alert[1]
    assert "textRegex: Nowhere to be seen" in alert[1]
    shots = elements.find("img")
    assert [a["alt"] for a, _ in shots] == ["screenshot after step 1", "screenshot at the failure"]
    (logcat,) = elements.find("pre", "logcat")
    assert "I fakeadb: launch xyz.block.trailblaze.examples.sampleapp" in logcat[1]
