"""The parse gate: trail text to `Trail` records, strictly, with located findings.

Format detection is by the document's root: a mapping is the unified format, a list is the
legacy format. Strict mode (the default everywhere) rejects every unknown or mis-nested key of
the trail grammar and duplicate keys, with a "did you mean". Tool arguments are not judged
here: which tools exist and what they accept depends on the trail's trailmap, and the type gate
checks them against that trailmap's surface. Lenient mode exists only as an explicit opt-in;
it keeps what the reference's runtime accepts and reports each dropped key as a warning instead
of silently forgetting it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from trailblaze.argtokens import ARG_NAME, check_tokens, offset_position
from trailblaze.finding import Finding, did_you_mean, join_key
from trailblaze.grammar import (
    ARG_DECL,
    ARG_TYPES,
    CONFIG,
    LEGACY_CONFIG,
    LEGACY_ITEM,
    LEGACY_RECORDING,
    LEGACY_STEP,
    LEGACY_TRAILHEAD,
    SOURCE,
    STEP,
    TRAILHEAD,
    UNIFIED,
    Block,
)
from trailblaze.trail import (
    BLANK_TOOL_NAME,
    ArgDecl,
    Recording,
    Step,
    ToolCall,
    Trail,
    TrailConfig,
    is_blank_name,
    scalars,
)
from trailblaze.yamlnode import YamlError, YMap, YNode, YScalar, YSeq, kind_of, load


@dataclass(frozen=True, slots=True)
class ParseOutcome:
    """A trail (None when the parse gate rejected it) and every finding about the file."""

    trail: Trail | None
    findings: tuple[Finding, ...]

    @property
    def rejected(self) -> bool:
        return self.trail is None


def parse_trail(
    path: str,
    text: str,
    *,
    strict: bool = True,
    pure: bool = False,
) -> ParseOutcome:
    """Parse one trail document. `path` is the workspace-relative name used in findings.

    `pure` forces ruamel.yaml's pure-Python composer (the parse benchmark compares the two).
    """
    try:
        root = load(text, pure=pure)
    except YamlError as exc:
        return file_error(path, exc)
    parser = _Parser(path, strict)
    trail = parser.document(root)
    if trail is not None and not parser.rejected and _may_hold_tokens(text):
        parser.tokens(trail, root)
    rejected = parser.rejected or trail is None
    return ParseOutcome(None if rejected else trail, tuple(parser.findings))


def _may_hold_tokens(text: str) -> bool:
    """False when no scalar of the document can contain `{{` or `${`.

    Without a backslash (an escape, or an escaped line break joining two lines) a scalar holds
    those two characters only where the document does; most trails have none, and skipping
    the walk over every scalar saves a tenth of the parse.
    """
    return "{{" in text or "${" in text or "\\" in text


def file_error(path: str, error: YamlError) -> ParseOutcome:
    """The outcome for a file that could not be read (I/O, encoding, size) or is not YAML."""
    return ParseOutcome(
        None, (Finding("parse", path, error.line, error.column, error.message, code="yaml"),)
    )


class _Reject(Exception):
    """Stops parsing the current construct after an error was recorded."""


class _Parser:
    def __init__(self, path: str, strict: bool) -> None:
        self.path = path
        self.strict = strict
        self.findings: list[Finding] = []
        self.rejected = False

    # -- findings -----------------------------------------------------------------------------

    def finding(
        self, line: int, column: int, key_path: str, message: str, code: str, *, fatal: bool = True
    ) -> Finding:
        return Finding(
            "parse" if fatal else "warning",
            self.path,
            line,
            column,
            message,
            key_path=key_path,
            code=code,
            fatal=fatal,
        )

    def error(self, node: YNode | YScalar, key_path: str, message: str, code: str) -> None:
        self.rejected = True
        self.findings.append(self.finding(node.line, node.column, key_path, message, code))

    def warn(self, node: YNode | YScalar, key_path: str, message: str, code: str) -> None:
        self.findings.append(
            self.finding(node.line, node.column, key_path, message, code, fatal=False)
        )

    def unknown_keys(
        self,
        mapping: YMap,
        key_path: str,
        block: Block,
    ) -> None:
        """Report keys `block` does not declare: an error, or a warning when lenient may drop it."""
        allowed = block.names
        for key, _ in mapping:
            name = key.text
            if name in allowed:
                continue
            message = f"unknown key '{name}'{did_you_mean(name, allowed)}"
            if self.strict or not block.lenient:
                self.error(key, key_path, message, "unknown-key")
            else:
                self.warn(key, key_path, message + "; ignored (lenient mode)", "unknown-key")

    def expect_map(self, node: YNode, key_path: str) -> YMap:
        if isinstance(node, YMap):
            return node
        self.error(node, key_path, f"expected a mapping, found {kind_of(node)}", "wrong-type")
        raise _Reject

    def expect_list(self, node: YNode, key_path: str) -> YSeq:
        if isinstance(node, YSeq):
            return node
        self.error(node, key_path, f"expected a list, found {kind_of(node)}", "wrong-type")
        raise _Reject

    def text(self, node: YNode, key_path: str) -> str | None:
        """A string-valued field: any scalar gives its text; null means absent."""
        if isinstance(node, YScalar):
            if node.value is None and not node.quoted:
                return None
            return node.text
        self.error(node, key_path, f"expected text, found {kind_of(node)}", "wrong-type")
        return None

    def boolean(self, node: YNode, key_path: str) -> bool | None:
        if isinstance(node, YScalar) and isinstance(node.value, bool) and not node.quoted:
            return node.value
        self.error(node, key_path, f"expected true or false, found {kind_of(node)}", "wrong-type")
        return None

    def integer(self, node: YNode, key_path: str) -> int | None:
        if isinstance(node, YScalar) and not node.quoted:
            value = node.value
            if isinstance(value, int) and not isinstance(value, bool):
                return value
        self.error(node, key_path, f"expected an integer, found {kind_of(node)}", "wrong-type")
        return None

    def max_retries(self, owner: YMap, key_path: str) -> int | None:
        """`maxRetries` of a step or trailhead; None when absent or invalid."""
        if (node := owner.get("maxRetries")) is None:
            return None
        return self.integer(node, join_key(key_path, "maxRetries"))

    # -- documents ----------------------------------------------------------------------------

    def document(self, root: YNode | None) -> Trail | None:
        if root is None:
            self.findings.append(self.finding(1, 1, "", "empty trail file", "empty"))
            self.rejected = True
            return None
        try:
            if isinstance(root, YMap):
                return self.unified(root)
            if isinstance(root, YSeq):
                return self.legacy(root)
            self.error(
                root,
                "",
                f"a trail is a mapping (config/trailhead/trail) or a legacy list, "
                f"found {kind_of(root)}",
                "wrong-type",
            )
        except _Reject:
            pass
        return None

    # -- unified format -----------------------------------------------------------------------

    def unified(self, root: YMap) -> Trail | None:
        self.unknown_keys(root, "", UNIFIED)
        config = TrailConfig()
        if (node := root.get("config")) is not None:
            config = self.config(node, "config", CONFIG)
        trailhead = None
        if (node := root.get("trailhead")) is not None:
            trailhead = self.unified_trailhead(node)
        steps: list[Step] = []
        trail_node = root.get("trail")
        if trail_node is None:
            if "trail" in root:
                self.error(root.key_node("trail") or root, "trail", "must not be empty", "empty")
            elif "trailhead" in root or "config" not in root:
                self.error(root, "", "missing 'trail' (the list of steps)", "missing-key")
        else:
            try:
                items = self.expect_list(trail_node, "trail")
                # A stepless document (`config:` and `trail: []`) is a trail, as the reference
                # accepts it; without a config, or after a trailhead, an empty list is a mistake.
                if not items.items and ("config" not in root or "trailhead" in root):
                    self.error(items, "trail", "must not be empty", "empty")
                for i, item in enumerate(items.items):
                    step = self.unified_step(item, i + 1, join_key("trail", i))
                    if step is not None:
                        steps.append(step)
            except _Reject:
                pass
        return Trail(self.path, "unified", config, trailhead, tuple(steps))

    def step_options(self, step: YMap, key_path: str) -> tuple[bool, int | None]:
        """A step's `recordable` flag and `maxRetries`, read alike in both formats."""
        recordable = True
        if (flag := step.get("recordable")) is not None:
            # An invalid flag was reported; it does not also count as `false`.
            value = self.boolean(flag, join_key(key_path, "recordable"))
            recordable = True if value is None else value
        return recordable, self.max_retries(step, key_path)

    def recording_slots(
        self, owner: YMap, key_path: str
    ) -> Iterator[tuple[YScalar, str, str, YNode]]:
        """The slots of a unified `recording:` mapping: key, classifier, slot key path, value."""
        rec_path = join_key(key_path, "recording")
        node = owner.get("recording")
        if node is None:
            return
        try:
            rec_map = self.expect_map(node, rec_path)
        except _Reject:
            return
        for cls_key, value in rec_map:
            classifier = self.classifier(cls_key, rec_path)
            yield cls_key, classifier, join_key(rec_path, classifier), value

    def unified_step(self, node: YNode, number: int, key_path: str) -> Step | None:
        try:
            step = self.expect_map(node, key_path)
        except _Reject:
            return None
        self.unknown_keys(step, key_path, STEP)
        kind, text = self.step_text(step, key_path, strict_both=True)
        recordable, max_retries = self.step_options(step, key_path)
        recordings: list[Recording] = []
        for cls_key, classifier, slot_path, value in self.recording_slots(step, key_path):
            try:
                calls = self.expect_list(value, slot_path)
            except _Reject:
                continue
            recordings.append(
                Recording(classifier, self.calls(calls, slot_path), cls_key.line, cls_key.column)
            )
        if not recordable and any(r.calls for r in recordings):
            flag_key = step.key_node("recordable") or step
            self.error(
                flag_key,
                key_path,
                "'recordable: false' with a non-empty recording; remove one of them",
                "invalid-value",
            )
        return Step(
            number,
            kind,
            text,
            recordable,
            tuple(recordings),
            "recording" in step,
            max_retries,
            step.line,
            step.column,
            key_path,
        )

    def unified_trailhead(self, node: YNode) -> Step | None:
        key_path = "trailhead"
        try:
            head = self.expect_map(node, key_path)
        except _Reject:
            return None
        self.unknown_keys(head, key_path, TRAILHEAD)
        text = None
        if (step_node := head.get("step")) is not None:
            text = self.text(step_node, join_key(key_path, "step"))
        max_retries = self.max_retries(head, key_path)
        recordings: list[Recording] = []
        if "recording" in head:
            for cls_key, classifier, slot_path, value in self.recording_slots(head, key_path):
                if isinstance(value, YSeq):
                    self.error(
                        value,
                        slot_path,
                        "a trailhead records one tool call per classifier, not a list",
                        "wrong-type",
                    )
                    continue
                if isinstance(value, YMap) and len(value) == 0:
                    calls: tuple[ToolCall, ...] = ()
                else:
                    call = self.call(value, slot_path)
                    calls = (call,) if call is not None else ()
                recordings.append(Recording(classifier, calls, cls_key.line, cls_key.column))
        elif text is None:
            self.error(head, key_path, "a trailhead needs 'step' or 'recording'", "missing-key")
        return Step(
            0,
            "trailhead",
            text,
            True,
            tuple(recordings),
            "recording" in head,
            max_retries,
            head.line,
            head.column,
            key_path,
        )

    def classifier(self, key: YScalar, rec_path: str) -> str:
        if is_blank_name(key):
            self.error(
                key, rec_path, "a device classifier must be a non-empty name", "invalid-value"
            )
        return key.text

    def step_text(self, step: YMap, key_path: str, *, strict_both: bool) -> tuple[Any, str | None]:
        kind, node = "step", step.get("step")
        if node is None:
            kind, node = "verify", step.get("verify")
        elif "verify" in step:
            if strict_both or self.strict:
                self.error(
                    step.key_node("verify") or step,
                    key_path,
                    "'step' and 'verify' cannot both be set; keep one",
                    "invalid-value",
                )
            else:
                self.warn(
                    step.key_node("verify") or step,
                    key_path,
                    "'step' and 'verify' both set; 'verify' ignored (lenient mode)",
                    "invalid-value",
                )
        if node is None:
            self.error(step, key_path, "a step needs 'step' or 'verify' text", "missing-key")
            return "step", None
        text = self.text(node, join_key(key_path, kind))
        if isinstance(node, YScalar) and not (text or "").strip():
            self.error(node, join_key(key_path, kind), "must not be empty", "empty")
        return kind, text

    # -- tool calls ---------------------------------------------------------------------------

    def calls(self, items: YSeq, key_path: str) -> tuple[ToolCall, ...]:
        out: list[ToolCall] = []
        for i, item in enumerate(items.items):
            call = self.call(item, join_key(key_path, i))
            if call is not None:
                out.append(call)
        return tuple(out)

    def call(self, node: YNode, key_path: str) -> ToolCall | None:
        if isinstance(node, YScalar) and isinstance(node.value, str) and node.value:
            self.error(
                node,
                key_path,
                f"a tool call is a mapping '{node.value}: {{...}}', found the bare name "
                f"'{node.value}'; write '{node.value}: {{}}'",
                "wrong-type",
            )
            return None
        if not isinstance(node, YMap) or len(node) == 0:
            self.error(
                node,
                key_path,
                f"expected a tool call '<tool>: {{...}}', found {kind_of(node)}",
                "wrong-type",
            )
            return None
        (name_key, args), *extra = node.items
        name = name_key.text
        if extra:
            others = ", ".join(f"'{k.text}'" for k, _ in extra)
            self.error(
                extra[0][0],
                key_path,
                f"a tool call has exactly one key, the tool name '{name}'; also found {others} "
                f"(should it be indented under '{name}'?)",
                "unknown-key",
            )
        if is_blank_name(name_key):
            self.error(name_key, key_path, BLANK_TOOL_NAME, "invalid-value")
            return None
        call_path = join_key(key_path, name)
        if isinstance(args, YScalar) and args.value is None and not args.quoted:
            arg_map: YMap | None = None
        elif isinstance(args, YMap):
            arg_map = args
        else:
            self.error(
                args,
                call_path,
                f"arguments of '{name}' must be a mapping, found {kind_of(args)}",
                "wrong-type",
            )
            return None
        return ToolCall(name, arg_map, name_key.line, name_key.column, key_path)

    # -- config -------------------------------------------------------------------------------

    def config(self, node: YNode, key_path: str, block: Block) -> TrailConfig:
        try:
            cfg = self.expect_map(node, key_path)
        except _Reject:
            return TrailConfig()
        self.unknown_keys(cfg, key_path, block)
        allowed = block.names
        fields: dict[str, Any] = {"line": cfg.line, "column": cfg.column}
        for name in (
            "id",
            "target",
            "title",
            "description",
            "priority",
            "context",
            "platform",
            "driver",
        ):
            if name in allowed and (value := cfg.get(name)) is not None:
                fields[name] = self.text(value, join_key(key_path, name))
        fields["devices"] = self.string_map(cfg, "devices", key_path)
        fields["memory"] = self.string_map(cfg, "memory", key_path)
        self.string_map(cfg, "metadata", key_path)
        if (skip := cfg.get("skip")) is not None:
            if "platform" in allowed and isinstance(skip, YScalar):
                if skip.value not in (None, False, ""):
                    fields["skip_all"] = skip.text
            else:
                fields["skip"] = self.string_map(cfg, "skip", key_path)
        if (tags := cfg.get("tags")) is not None:
            tag_path = join_key(key_path, "tags")
            with contextlib.suppress(_Reject):
                items = self.expect_list(tags, tag_path).items
                texts = (self.text(v, join_key(tag_path, i)) for i, v in enumerate(items))
                fields["tags"] = tuple(t for t in texts if t is not None)
        if (source := cfg.get("source")) is not None and "source" in allowed:
            try:
                source_map = self.expect_map(source, join_key(key_path, "source"))
                self.unknown_keys(source_map, join_key(key_path, "source"), SOURCE)
            except _Reject:
                pass
        if (args := cfg.get("args")) is not None:
            fields["has_args_block"] = True
            fields["args"] = self.arg_decls(args, join_key(key_path, "args"))
        return TrailConfig(**fields)

    def string_map(self, cfg: YMap, name: str, key_path: str) -> tuple[tuple[str, str], ...]:
        node = cfg.get(name)
        if node is None:
            return ()
        path = join_key(key_path, name)
        try:
            mapping = self.expect_map(node, path)
        except _Reject:
            return ()
        out: list[tuple[str, str]] = []
        for key, value in mapping:
            text = self.text(value, join_key(path, key.text))
            out.append((key.text, text or ""))
        return tuple(out)

    def arg_decls(self, node: YNode, key_path: str) -> tuple[ArgDecl, ...]:
        try:
            mapping = self.expect_map(node, key_path)
        except _Reject:
            return ()
        decls: list[ArgDecl] = []
        for key, value in mapping:
            name = key.text
            path = join_key(key_path, name)
            if not ARG_NAME.fullmatch(name):
                self.error(
                    key,
                    key_path,
                    f"argument name '{name}' must match [A-Za-z_][A-Za-z0-9_]*",
                    "invalid-value",
                )
                continue
            arg_type, description, default, has_default = "string", None, None, False
            if isinstance(value, YScalar):
                arg_type = self.text(value, path) or "string"
            elif isinstance(value, YMap):
                self.unknown_keys(value, path, ARG_DECL)
                if (t := value.get("type")) is not None:
                    arg_type = self.text(t, join_key(path, "type")) or "string"
                if (d := value.get("description")) is not None:
                    description = self.text(d, join_key(path, "description"))
                if "default" in value:
                    default, has_default = value.get("default"), True
            else:
                self.error(
                    value,
                    path,
                    f"expected a type name or a mapping, found {kind_of(value)}",
                    "wrong-type",
                )
                continue
            if arg_type not in ARG_TYPES:
                where = value.get("type") if isinstance(value, YMap) else value
                self.error(
                    where or value,
                    path,
                    f"unknown argument type '{arg_type}'{did_you_mean(arg_type, ARG_TYPES)}; "
                    f"expected one of {', '.join(ARG_TYPES)}",
                    "invalid-value",
                )
            decls.append(
                ArgDecl(name, arg_type, description, default, has_default, key.line, key.column)
            )
        return tuple(decls)

    # -- legacy format ------------------------------------------------------------------------

    def legacy(self, root: YSeq) -> Trail | None:
        config = TrailConfig()
        trailhead: Step | None = None
        steps: list[Step] = []
        number = 0
        seen_config = seen_body = False
        for i, item in enumerate(root.items):
            item_path = f"[{i}]"
            if not isinstance(item, YMap) or len(item) != 1:
                found = kind_of(item) if not isinstance(item, YMap) else f"{len(item)} keys"
                self.error(
                    item,
                    item_path,
                    f"each item of a legacy trail is one of '- config:', '- prompts:', "
                    f"'- tools:', '- trailhead:'; found {found}",
                    "wrong-type",
                )
                continue
            key, value = item.items[0]
            name = key.text
            if name not in LEGACY_ITEM.names:
                self.error(
                    key,
                    item_path,
                    f"unknown item '{name}'{did_you_mean(name, LEGACY_ITEM.names)}",
                    "unknown-key",
                )
                continue
            path = join_key(item_path, name)
            if name == "config":
                if seen_config or i != 0:
                    self.error(
                        key,
                        item_path,
                        "'- config:' must be the first item and appear once",
                        "invalid-value",
                    )
                seen_config = True
                config = self.config(value, path, LEGACY_CONFIG)
            elif name == "trailhead":
                if trailhead is not None or seen_body:
                    self.error(
                        key,
                        item_path,
                        "'- trailhead:' appears once, before any prompts or tools",
                        "invalid-value",
                    )
                trailhead = self.legacy_trailhead(value, path)
            elif name == "prompts":
                seen_body = True
                try:
                    prompts = self.expect_list(value, path)
                except _Reject:
                    continue
                for j, prompt in enumerate(prompts.items):
                    number += 1
                    step = self.legacy_step(prompt, number, join_key(path, j))
                    if step is not None:
                        steps.append(step)
            else:
                seen_body = True
                try:
                    tools = self.expect_list(value, path)
                except _Reject:
                    continue
                calls = self.calls(tools, path)
                steps.append(
                    Step(
                        0,
                        "tools",
                        None,
                        True,
                        (Recording(None, calls, key.line, key.column),),
                        True,
                        None,
                        key.line,
                        key.column,
                        path,
                    )
                )
        return Trail(self.path, "legacy", config, trailhead, tuple(steps))

    def legacy_step(self, node: YNode, number: int, key_path: str) -> Step | None:
        try:
            step = self.expect_map(node, key_path)
        except _Reject:
            return None
        self.unknown_keys(step, key_path, LEGACY_STEP)
        kind, text = self.step_text(step, key_path, strict_both=False)
        recordable, max_retries = self.step_options(step, key_path)
        recordings: tuple[Recording, ...] = ()
        if (rec_node := step.get("recording")) is not None:
            rec_path = join_key(key_path, "recording")
            try:
                rec = self.expect_map(rec_node, rec_path)
                self.unknown_keys(rec, rec_path, LEGACY_RECORDING)
                if (tools_node := rec.get("tools")) is None:
                    self.error(
                        rec,
                        rec_path,
                        "missing 'tools' (use 'tools: []' for a deliberate no-op)",
                        "missing-key",
                    )
                else:
                    tools_path = join_key(rec_path, "tools")
                    tools = self.expect_list(tools_node, tools_path)
                    recordings = (
                        Recording(None, self.calls(tools, tools_path), rec.line, rec.column),
                    )
            except _Reject:
                pass
        return Step(
            number,
            kind,
            text,
            recordable,
            recordings,
            rec_node is not None,
            max_retries,
            step.line,
            step.column,
            key_path,
        )

    def legacy_trailhead(self, node: YNode, key_path: str) -> Step | None:
        if isinstance(node, YScalar) and isinstance(node.value, str) and node.value:
            # The bare-string shorthand: one tool with no arguments.
            call = ToolCall(node.value, None, node.line, node.column, key_path)
            recording = Recording(None, (call,), node.line, node.column)
            return Step(
                0,
                "trailhead",
                None,
                True,
                (recording,),
                True,
                None,
                node.line,
                node.column,
                key_path,
            )
        try:
            head = self.expect_map(node, key_path)
        except _Reject:
            return None
        self.unknown_keys(head, key_path, LEGACY_TRAILHEAD)
        text = None
        if (step_node := head.get("step")) is not None:
            text = self.text(step_node, join_key(key_path, "step"))
        calls: tuple[ToolCall, ...] = ()
        if (tools_node := head.get("tools")) is not None:
            tools_path = join_key(key_path, "tools")
            with contextlib.suppress(_Reject):
                calls = self.calls(self.expect_list(tools_node, tools_path), tools_path)
        if not text and not calls:
            self.error(
                head,
                key_path,
                "a trailhead needs 'step' or a non-empty 'tools' list",
                "missing-key",
            )
        max_retries = self.max_retries(head, key_path)
        recordings = (Recording(None, calls, head.line, head.column),) if "tools" in head else ()
        return Step(
            0,
            "trailhead",
            text,
            True,
            recordings,
            "tools" in head,
            max_retries,
            head.line,
            head.column,
            key_path,
        )

    # -- argument tokens ----------------------------------------------------------------------

    def tokens(self, trail: Trail, root: YNode | None) -> None:
        """Check `{{args.x}}` tokens everywhere outside `config` (they do not reject the trail)."""
        declared = trail.config.arg_names
        for scalar in _token_scalars(root):
            if not isinstance(scalar.value, str) or ("{" not in scalar.text):
                continue
            for problem in check_tokens(scalar.text, declared, trail.config.has_args_block):
                line, column = offset_position(
                    scalar.text, problem.offset, scalar.line, scalar.column, scalar.style
                )
                self.findings.append(
                    Finding("parse", self.path, line, column, problem.message, code=problem.code)
                )


def _token_scalars(root: YNode | None) -> list[YScalar]:
    if isinstance(root, YMap):
        return [s for key, value in root if key.text != "config" for s in scalars(value)]
    if isinstance(root, YSeq):
        out: list[YScalar] = []
        for item in root.items:
            if isinstance(item, YMap) and item.keys() != ["config"]:
                out.extend(scalars(item))
        return out
    return []
