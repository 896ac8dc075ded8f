"""What the fake device shows: its windows as ``View`` trees and as uiautomator dump XML.

``Renderer`` reads a ``DeviceState`` (foreground app, back stack, flags, field values, scroll
offsets, keyboard) and never changes it; ``deepest_interactive`` finds the view a touch lands
on.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from string import Template
from xml.sax.saxutils import escape

from fakeadb.spec import (
    BROWSER_PACKAGE,
    KEYBOARD_PACKAGE,
    LAUNCHER_PACKAGE,
    Action,
    ElementSpec,
    ScreenSpec,
)
from fakeadb.state import DeviceState
from trailblaze.replay.hierarchy import Bounds


@dataclass(frozen=True)
class View:
    """A rendered node: what the dump shows and what a tap hits."""

    class_name: str
    package: str
    bounds: Bounds
    text: str = ""
    resource_id: str = ""
    content_desc: str = ""
    hint: str = ""
    checkable: bool = False
    checked: bool = False
    clickable: bool = False
    enabled: bool = True
    focusable: bool = False
    focused: bool = False
    scrollable: bool = False
    long_clickable: bool = False
    password: bool = False
    selected: bool = False
    element: ElementSpec | None = None
    children: tuple[View, ...] = ()

    def walk(self) -> Iterator[View]:
        yield self
        for child in self.children:
            yield from child.walk()


def _attr(value: str) -> str:
    return escape(value, {'"': "&quot;", "\n": "&#10;", "\r": "&#13;", "\t": "&#9;"})


def flag(value: bool) -> str:
    return "true" if value else "false"


def label(view: View) -> str:
    """How the event log names a view: its own text, else its content's, else its id."""
    for node in view.walk():
        if node.text or node.content_desc:
            return node.text or node.content_desc
    return view.resource_id or view.class_name


def _clip(bounds: Bounds, clip: Bounds) -> Bounds:
    left, top = max(bounds.left, clip.left), max(bounds.top, clip.top)
    return Bounds(
        left,
        top,
        max(left, min(bounds.right, clip.right)),
        max(top, min(bounds.bottom, clip.bottom)),
    )


def deepest_interactive(view: View, x: int, y: int) -> View | None:
    """The view that handles a touch: the last-drawn, deepest interactive view under it."""
    for child in reversed(view.children):
        if child.bounds.contains_point(x, y):
            hit = deepest_interactive(child, x, y)
            if hit is not None:
                return hit
    element = view.element
    if element is not None and (
        element.clickable or element.editable or element.checkable or element.long_clickable
    ):
        return view
    return None


class Renderer:
    """Renders one device's current state."""

    def __init__(self, state: DeviceState) -> None:
        self.state = state

    def render(self) -> tuple[View, ...]:
        """The windows on screen, top-level first (the app or launcher, then the keyboard)."""
        with self.state.lock:
            width, height = self.state.spec.width, self.state.spec.height
            screen_bounds = Bounds(0, 0, width, height)
            windows = [self._render_foreground(screen_bounds)]
            if self.state.keyboard_shown:
                windows.append(self._render_keyboard())
            return tuple(windows)

    def _render_foreground(self, full: Bounds) -> View:
        package = self.state.foreground
        if package is None:
            icons = []
            for i, app in enumerate(self.state.spec.apps.values()):
                left = 40 + (i % 4) * 260
                top = 300 + (i // 4) * 300
                icons.append(
                    View(
                        class_name="android.widget.TextView",
                        package=LAUNCHER_PACKAGE,
                        bounds=Bounds(left, top, left + 220, top + 260),
                        text=app.label,
                        content_desc=app.label,
                        clickable=True,
                        focusable=True,
                        element=ElementSpec(
                            key=f"launcher:{app.package}",
                            bounds=None,
                            on_tap=Action(launch=app.package),
                        ),
                    )
                )
            return View(
                class_name="android.widget.FrameLayout",
                package=LAUNCHER_PACKAGE,
                bounds=full,
                children=tuple(icons),
            )
        if package == BROWSER_PACKAGE and package not in self.state.apps:
            bar = View(
                class_name="android.widget.EditText",
                package=package,
                bounds=Bounds(0, 80, full.right, 200),
                text=self.state.browser_url,
                resource_id=f"{package}:id/url_bar",
                clickable=True,
                focusable=True,
            )
            return View(
                class_name="android.widget.FrameLayout",
                package=package,
                bounds=full,
                children=(bar,),
            )
        screen = self.state.screen()
        children: list[View] = []
        if screen is not None:
            children = [v for e in screen.elements if (v := self._render_element(package, e, None))]
            if screen.scroll_list is not None:
                children.append(self._render_list(package, screen))
        return View(
            class_name="android.widget.FrameLayout",
            package=package,
            bounds=full,
            children=tuple(children),
        )

    def _render_element(
        self,
        package: str,
        element: ElementSpec,
        parent: Bounds | None,
        origin: tuple[int, int] | None = None,
        clip: Bounds | None = None,
    ) -> View | None:
        if not self.state.is_shown(package, element):
            return None
        bounds = element.bounds or parent or Bounds(0, 0, 0, 0)
        if origin is not None and element.bounds is not None:
            dx, dy = origin
            bounds = Bounds(
                bounds.left + dx, bounds.top + dy, bounds.right + dx, bounds.bottom + dy
            )
        if clip is not None:
            bounds = _clip(bounds, clip)
        app = self.state.apps[package]
        text = element.text
        if "$" in text:
            defaults = self.state.spec.apps[package].variables
            text = Template(text).safe_substitute({**defaults, **app.values, **app.variables})
        hint = element.hint
        focused = False
        if element.editable:
            value = self.state.value(package, element.key)
            text = "•" * len(value) if element.password else value
            focused = self.state.focused == element.key
            if not text and self.state.spec.hint_as_text:
                text = hint
        children = tuple(
            v
            for c in element.children
            if (v := self._render_element(package, c, bounds, origin, clip)) is not None
        )
        return View(
            class_name=element.class_name,
            package=package,
            bounds=bounds,
            text=text,
            resource_id=element.resource_id,
            content_desc=element.content_desc,
            hint=hint,
            checkable=element.checkable,
            checked=self.state.checked(package, element) if element.checkable else False,
            clickable=element.clickable,
            enabled=element.enabled,
            focusable=element.clickable or element.editable,
            focused=focused,
            long_clickable=element.long_clickable,
            password=element.password,
            selected=element.selected,
            element=element,
            children=children,
        )

    def _render_list(self, package: str, screen: ScreenSpec) -> View:
        spec = screen.scroll_list
        assert spec is not None  # callers check; keeps mypy honest about the Optional
        offset = self.state.apps[package].scroll.get(screen.name, 0)
        items: list[View] = []
        visible_items = [item for item in spec.items if self.state.is_shown(package, item)]
        for i, item in enumerate(visible_items):
            top = spec.bounds.top + i * spec.item_height - offset
            full = Bounds(spec.bounds.left, top, spec.bounds.right, top + spec.item_height)
            # RecyclerView only has views for rows that intersect the viewport, clipped to it.
            if not full.intersects(spec.bounds):
                continue
            view = self._render_element(
                package,
                replace(item, bounds=None),
                full,
                origin=(full.left, full.top),
                clip=spec.bounds,
            )
            if view is not None:
                items.append(view)
        return View(
            class_name="androidx.recyclerview.widget.RecyclerView",
            package=package,
            bounds=spec.bounds,
            resource_id=spec.resource_id,
            scrollable=True,
            focusable=True,
            children=tuple(items),
        )

    def _keyboard_bounds(self) -> Bounds:
        top = self.state.spec.height * 62 // 100
        return Bounds(0, top, self.state.spec.width, self.state.spec.height)

    def _render_keyboard(self) -> View:
        area = self._keyboard_bounds()
        keys = []
        key_width = area.width // 10
        for i, letter in enumerate("qwertyuiop"):
            left = area.left + i * key_width
            keys.append(
                View(
                    class_name="android.widget.FrameLayout",
                    package=KEYBOARD_PACKAGE,
                    bounds=Bounds(left, area.top + 20, left + key_width, area.top + 160),
                    content_desc=letter,
                    resource_id=f"{KEYBOARD_PACKAGE}:id/key_pos_0_{i}",
                    clickable=True,
                )
            )
        return View(
            class_name="android.widget.FrameLayout",
            package=KEYBOARD_PACKAGE,
            bounds=area,
            children=tuple(keys),
        )

    def dump_xml(self) -> str:
        """The uiautomator dump of the current screen, in the platform's attribute order."""
        with self.state.lock:
            windows = self.render()
        parts = [
            "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>",
            '<hierarchy rotation="0">',
        ]
        for i, window in enumerate(windows):
            self._xml(window, i, parts)
        parts.append("</hierarchy>")
        return "".join(parts)

    def _xml(self, view: View, index: int, out: list[str]) -> None:
        b = view.bounds
        attrs = [
            ("index", str(index)),
            ("text", view.text),
            ("resource-id", view.resource_id),
            ("class", view.class_name),
            ("package", view.package),
            ("content-desc", view.content_desc),
            ("checkable", flag(view.checkable)),
            ("checked", flag(view.checked)),
            ("clickable", flag(view.clickable)),
            ("enabled", flag(view.enabled)),
            ("focusable", flag(view.focusable)),
            ("focused", flag(view.focused)),
            ("scrollable", flag(view.scrollable)),
            ("long-clickable", flag(view.long_clickable)),
            ("password", flag(view.password)),
            ("selected", flag(view.selected)),
            ("bounds", f"[{b.left},{b.top}][{b.right},{b.bottom}]"),
        ]
        if self.state.spec.hint_attribute:
            attrs.insert(6, ("hint", view.hint))
        out.append("<node " + " ".join(f'{k}="{_attr(v)}"' for k, v in attrs))
        if not view.children:
            out.append(" />")
            return
        out.append(">")
        for i, child in enumerate(view.children):
            self._xml(child, i, out)
        out.append("</node>")
