"""Compare two `tools/list` payloads and classify each change as breaking or compatible.

Arguments flow from client to server, so an input schema that accepts less than before breaks callers; results
flow the other way, so an output schema that promises less than before breaks consumers. The structural
comparison below works on the JSON Schema keywords MCP servers use in practice: `type` (and type lists),
`anyOf`/`oneOf` branches, `enum`/`const`, numeric bounds and `multipleOf`, string lengths, `pattern` and
`format`, array items and counts, object properties, `required` and `additionalProperties`, and local `$ref`s
into `$defs` (recursion-safe). Anything else that differs is reported as a change of type, which is breaking.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ._docsgen import describe_type

__all__ = ["Change", "compare", "format_changes"]

Severity = Literal["breaking", "compatible"]

# Keywords that document a value without restricting it.
_ANNOTATION_KEYS = frozenset(
    {"title", "description", "default", "examples", "deprecated", "readOnly", "writeOnly", "$comment", "$schema"}
)

# Keywords the comparison understands; a difference in any other keyword is reported as a change of type.
_ANALYSED = _ANNOTATION_KEYS | {
    "type",
    "enum",
    "const",
    "anyOf",
    "oneOf",
    "$defs",
    "minimum",
    "exclusiveMinimum",
    "maximum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "pattern",
    "format",
    "items",
    "prefixItems",
    "minItems",
    "maxItems",
    "uniqueItems",
    "properties",
    "required",
    "additionalProperties",
    "minProperties",
    "maxProperties",
}

# Generic findings -> (severity, kind) for arguments (input) and for results (output). A finding says how the
# set of values valid under the new schema relates to the old one.
_INPUT: dict[str, tuple[Severity, str]] = {
    "removed": ("breaking", "parameter-removed"),
    "added-required": ("breaking", "required-parameter-added"),
    "added-optional": ("compatible", "optional-parameter-added"),
    "now-required": ("breaking", "parameter-now-required"),
    "now-optional": ("compatible", "parameter-now-optional"),
    "enum-removed": ("breaking", "enum-value-removed"),
    "enum-added": ("compatible", "enum-value-added"),
    "narrowed": ("breaking", "type-narrowed"),
    "widened": ("compatible", "type-widened"),
    "changed": ("breaking", "type-changed"),
    "default": ("compatible", "default-changed"),
    "description": ("compatible", "description-changed"),
}
_OUTPUT: dict[str, tuple[Severity, str]] = {
    "removed": ("breaking", "output-field-removed"),
    "added-required": ("compatible", "output-field-added"),
    "added-optional": ("compatible", "output-field-added"),
    "now-required": ("compatible", "output-field-now-required"),
    "now-optional": ("breaking", "output-field-now-optional"),
    "enum-removed": ("compatible", "output-enum-value-removed"),
    "enum-added": ("breaking", "output-enum-value-added"),
    "narrowed": ("compatible", "output-tightened"),
    "widened": ("breaking", "output-loosened"),
    "changed": ("breaking", "output-type-changed"),
    "default": ("compatible", "output-default-changed"),
    "description": ("compatible", "output-description-changed"),
}

# (readable name, wire key, spec default, the value that is more dangerous)
_HINTS = (
    ("read-only", "readOnlyHint", False, False),
    ("destructive", "destructiveHint", True, True),
    ("idempotent", "idempotentHint", False, False),
    ("open-world", "openWorldHint", True, True),
)


@dataclass(frozen=True)
class Change:
    """One difference between two versions of a server's tools."""

    severity: Severity
    kind: str
    """A stable identifier such as `parameter-removed` or `type-widened`."""
    tool: str
    message: str
    path: str | None = None
    """Where in the tool: a parameter path such as `address.city` or `items[]`, or `output.total`."""

    def to_json(self) -> dict[str, Any]:
        """The change as a JSON object."""
        return {
            "severity": self.severity,
            "kind": self.kind,
            "tool": self.tool,
            "path": self.path,
            "message": self.message,
        }


@dataclass
class _Finding:
    kind: str
    path: str
    message: str


@dataclass
class _Walk:
    old_defs: Mapping[str, Any]
    new_defs: Mapping[str, Any]
    findings: list[_Finding] = field(default_factory=list)
    seen: set[tuple[str, str]] = field(default_factory=set)

    def add(self, kind: str, path: str, message: str) -> None:
        self.findings.append(_Finding(kind, path, message))


def compare(old: Sequence[Mapping[str, Any]], new: Sequence[Mapping[str, Any]]) -> list[Change]:
    """Every change from the `old` tools to the `new` ones, tool by tool in name order.

    A removed tool whose input schema and description reappear under a new name is reported once, as renamed.
    """
    before = {str(t.get("name")): t for t in old}
    after = {str(t.get("name")): t for t in new}
    removed = [name for name in sorted(before) if name not in after]
    added = [name for name in sorted(after) if name not in before]
    renamed: dict[str, str] = {}
    for name in removed:
        for candidate in added:
            if candidate not in renamed.values() and _same_shape(before[name], after[candidate]):
                renamed[name] = candidate
                break
    changes: list[Change] = []
    for name in sorted(set(before) | set(after)):
        if name in renamed:
            message = f"tool `{name}` renamed to `{renamed[name]}`"
            changes.append(Change("breaking", "tool-renamed", name, message))
        elif name not in after:
            changes.append(Change("breaking", "tool-removed", name, f"tool `{name}` removed"))
        elif name not in before:
            if name not in renamed.values():
                changes.append(Change("compatible", "tool-added", name, f"tool `{name}` added"))
        else:
            changes += _compare_tool(before[name], after[name])
    return changes


def _same_shape(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    return a.get("inputSchema") == b.get("inputSchema") and a.get("description") == b.get("description")


def _compare_tool(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[Change]:
    name = str(new.get("name"))
    changes: list[Change] = []
    if old.get("title") != new.get("title"):
        changes.append(Change("compatible", "title-changed", name, "title changed"))
    if old.get("description") != new.get("description"):
        changes.append(Change("compatible", "description-changed", name, "description changed"))
    changes += _compare_hints(name, old.get("annotations") or {}, new.get("annotations") or {})

    old_in, new_in = old.get("inputSchema") or {}, new.get("inputSchema") or {}
    walk = _Walk(old_in.get("$defs") or {}, new_in.get("$defs") or {})
    _compare(old_in, new_in, "", walk)
    changes += [_change(name, f, _INPUT, "parameter") for f in walk.findings]

    old_out, new_out = old.get("outputSchema"), new.get("outputSchema")
    if old_out is not None and new_out is None:
        changes.append(Change("breaking", "output-schema-removed", name, "output schema removed", "output"))
    elif old_out is None and new_out is not None:
        changes.append(Change("compatible", "output-schema-added", name, "output schema added", "output"))
    elif old_out is not None and new_out is not None:
        walk = _Walk(old_out.get("$defs") or {}, new_out.get("$defs") or {})
        _compare(_unwrap(old_out), _unwrap(new_out), "output", walk)
        changes += [_change(name, f, _OUTPUT, "output field") for f in walk.findings]
    return changes


def _unwrap(schema: Mapping[str, Any]) -> Any:
    props = schema.get("properties") or {}
    if list(props) == ["result"] and schema.get("required") == ["result"]:
        return props["result"]
    return schema


def _change(tool: str, finding: _Finding, table: Mapping[str, tuple[Severity, str]], noun: str) -> Change:
    severity, kind = table[finding.kind]
    shown = finding.path.removeprefix("output.") if noun == "output field" else finding.path
    if not finding.path:
        message = finding.message
    elif finding.path == "output":
        message = f"output: {finding.message}"
    elif finding.kind in _PLAIN:
        message = f"{noun} `{shown}` {finding.message}"
    else:
        message = f"{noun} `{shown}`: {finding.message}"
    return Change(severity, kind, tool, message, finding.path or None)


# Findings that read as a sentence after the parameter's name ("parameter `b` removed").
_PLAIN = frozenset({"removed", "added-required", "added-optional", "now-required", "now-optional"})


def _compare_hints(tool: str, old: Mapping[str, Any], new: Mapping[str, Any]) -> list[Change]:
    changes = []
    read_only = (_hint(old, "readOnlyHint", False), _hint(new, "readOnlyHint", False))
    for label, key, default, dangerous in _HINTS:
        if key in ("destructiveHint", "idempotentHint") and (read_only[0] or read_only[1]):
            continue  # meaningful only when the tool is not read-only (spec, ToolAnnotations)
        before, after = _hint(old, key, default), _hint(new, key, default)
        if before == after:
            continue
        severity: Severity = "breaking" if after == dangerous else "compatible"
        now, was = (label, f"not {label}") if after else (f"not {label}", label)
        changes.append(Change(severity, "hint-changed", tool, f"hint changed: now {now} (was {was})"))
    return changes


def _hint(annotations: Mapping[str, Any], key: str, default: bool) -> bool:
    value = annotations.get(key)
    return default if value is None else bool(value)


# -- schemas ---------------------------------------------------------------------------------------------------


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _resolve(schema: Any, defs: Mapping[str, Any]) -> tuple[Any, str]:
    if isinstance(schema, Mapping) and isinstance(schema.get("$ref"), str):
        ref = schema["$ref"]
        target = defs.get(ref.rsplit("/", 1)[-1], {}) if ref.startswith("#/$defs/") else {}
        siblings = {k: v for k, v in schema.items() if k != "$ref"}
        return {**target, **siblings}, ref
    return schema, ""


def _restrictive(schema: Any) -> Any:
    if not isinstance(schema, Mapping):
        return schema
    return {k: v for k, v in schema.items() if k not in _ANNOTATION_KEYS}


def _compare(old: Any, new: Any, path: str, walk: _Walk) -> None:
    old, old_ref = _resolve(old, walk.old_defs)
    new, new_ref = _resolve(new, walk.new_defs)
    if old_ref or new_ref:
        key = (old_ref, new_ref)
        if key in walk.seen:
            return  # a recursive type, already being compared
        walk.seen.add(key)
    if old == new:
        return
    step = _Step(old, new, path, walk)
    if isinstance(old, Mapping) and isinstance(new, Mapping):
        if old.get("description") != new.get("description") and path and path != "output":
            step.add("description", "description changed")
        if "default" in old and "default" in new and old["default"] != new["default"]:
            step.add("default", f"default changed from {_show(old['default'])} to {_show(new['default'])}")
    if _restrictive(old) != _restrictive(new):
        _compare_types(step)


@dataclass(frozen=True)
class _Step:
    """One pair of schemas being compared, at one path."""

    old: Any
    new: Any
    path: str
    walk: _Walk

    def add(self, kind: str, message: str) -> None:
        self.walk.findings.append(_Finding(kind, self.path, message))


def _compare_types(step: _Step) -> None:
    old_branches, new_branches = _branches(step.old), _branches(step.new)
    if old_branches is None or new_branches is None:
        if old_branches is None and new_branches is None:
            step.add("changed", "schema changed")  # keywords such as allOf or not, which are not analysed
        elif old_branches is None:
            step.add("narrowed", f"now restricted to {describe_type(step.new)} (was any value)")
        elif new_branches is None and old_branches is not None:
            step.add("widened", f"now accepts any value (was {describe_type(step.old)})")
        return
    lost: list[str] = []
    matched = False
    for kind, branch in old_branches.items():
        if kind in new_branches:
            _compare_branch(kind, _Step(branch, new_branches[kind], step.path, step.walk))
        elif _numeric_pair(kind, new_branches):
            widened = kind == "integer"
            step.add("widened" if widened else "narrowed", _NUMERIC[widened])
        else:
            lost.append(kind)
            continue
        matched = True
    gained = [k for k in new_branches if k not in old_branches and not _numeric_pair(k, old_branches)]
    if lost and gained and not matched:
        step.add("changed", f"type changed from {describe_type(step.old)} to {describe_type(step.new)}")
        return
    if lost:
        step.add("narrowed", f"no longer accepts {' or '.join(lost)}")
    if gained:
        step.add("widened", f"now also accepts {' or '.join(gained)}")


_NUMERIC = {True: "now accepts any number (was integer)", False: "now accepts only integers (was number)"}


def _numeric_pair(kind: str, other: Mapping[str, Any]) -> bool:
    return (kind == "number" and "integer" in other) or (kind == "integer" and "number" in other)


def _show(value: Any) -> str:
    return "`" + json.dumps(value, ensure_ascii=False, sort_keys=True) + "`"


_JSON_TYPES = {bool: "boolean", int: "integer", float: "number", str: "string", list: "array", dict: "object"}


def _value_type(value: Any) -> str:
    if value is None:
        return "null"
    return _JSON_TYPES.get(type(value), "object")


def _branches(schema: Any) -> dict[str, Any] | None:
    """The schema split by JSON type: `{"string": {...}, "null": {...}}`; None when it accepts any value.

    Branches of the same type inside `anyOf` are merged into one `anyOf`, compared as a whole.
    """
    if not isinstance(schema, Mapping):
        return {} if schema is False else None
    alternatives = schema.get("anyOf", schema.get("oneOf"))
    if isinstance(alternatives, list):
        out: dict[str, Any] = {}
        for sub in alternatives:
            resolved = sub if isinstance(sub, Mapping) else {}
            for kind, part in (_branches(resolved) or {"any": resolved}).items():
                out[kind] = {"anyOf": [out[kind], part]} if kind in out else part
        return out
    values = [schema["const"]] if "const" in schema else schema.get("enum")
    kinds = _kinds(schema, values if isinstance(values, list) else None)
    if kinds is None:
        return None
    rest = {k: v for k, v in schema.items() if k not in ("type", "enum", "const")}
    out = {}
    for kind in kinds:
        part = dict(rest, type=kind)
        if isinstance(values, list):
            part["enum"] = [v for v in values if _value_type(v) == kind or (kind == "number" and type(v) is int)]
        out[kind] = part
    return out


def _kinds(schema: Mapping[str, Any], values: list[Any] | None) -> list[str] | None:
    kinds = schema.get("type")
    if isinstance(kinds, str):
        return [kinds]
    if isinstance(kinds, list):
        return [str(k) for k in kinds]
    if values is not None:
        return sorted({_value_type(v) for v in values})
    if "properties" in schema:
        return ["object"]
    return ["array"] if "items" in schema else None


def _compare_branch(kind: str, step: _Step) -> None:
    if "anyOf" in step.old or "anyOf" in step.new:
        if _restrictive(step.old) != _restrictive(step.new):
            step.add("changed", f"{kind} alternatives changed")
        return
    for check in _CHECKS:
        check(step)
    others = sorted(k for k in {*step.old, *step.new} - _ANALYSED if step.old.get(k) != step.new.get(k))
    if others:
        step.add("changed", f"{', '.join(others)} changed")
    if kind == "array":
        _compare_array(step)
    if kind == "object":
        _compare_object(step)


def _compare_enum(step: _Step) -> None:
    before, after = step.old.get("enum"), step.new.get("enum")
    if before is None and after is None:
        return
    if before is None or after is None:
        if before is None:
            step.add("narrowed", f"now restricted to {', '.join(_show(v) for v in after)}")
        else:
            step.add("widened", "no longer restricted to a list of values")
        return
    keys_after = [json.dumps(v, sort_keys=True) for v in after]
    keys_before = [json.dumps(v, sort_keys=True) for v in before]
    gone = [v for v, k in zip(before, keys_before, strict=True) if k not in keys_after]
    fresh = [v for v, k in zip(after, keys_after, strict=True) if k not in keys_before]
    if gone:
        step.add("enum-removed", f"enum {_values(gone)} removed")
    if fresh:
        step.add("enum-added", f"enum {_values(fresh)} added")


def _values(values: list[Any]) -> str:
    return ("value " if len(values) == 1 else "values ") + ", ".join(_show(v) for v in values)


def _compare_bounds(step: _Step) -> None:
    for name, key, xkey, sign, ops in (
        ("lower bound", "minimum", "exclusiveMinimum", 1, ("≥", ">")),
        ("upper bound", "maximum", "exclusiveMaximum", -1, ("≤", "<")),
    ):
        a, b = _bound(step.old, key, xkey), _bound(step.new, key, xkey)
        if a == b:
            continue
        if a is None or b is None:
            value, exclusive = b or a or (0, False)
            shown = f"{ops[exclusive]} {_number(value)}"
            step.add("narrowed" if a is None else "widened", f"{name} {shown} {'added' if a is None else 'removed'}")
            continue
        # (value, exclusive): an exclusive bound at the same value is stricter than an inclusive one.
        stricter = (sign * b[0], b[1]) > (sign * a[0], a[1])
        text = f"{name} changed from {ops[a[1]]} {_number(a[0])} to {ops[b[1]]} {_number(b[0])}"
        step.add("narrowed" if stricter else "widened", text)


def _number(value: float) -> str:
    return json.dumps(value)


def _bound(schema: Mapping[str, Any], key: str, xkey: str) -> tuple[float, bool] | None:
    for name, exclusive in ((xkey, True), (key, False)):
        value = schema.get(name)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return (value, exclusive)
    return None


# Count limits and the direction that is stricter (+1: a higher value accepts less).
_LIMITS = (
    ("minLength", 1),
    ("maxLength", -1),
    ("minItems", 1),
    ("maxItems", -1),
    ("minProperties", 1),
    ("maxProperties", -1),
)


def _compare_limits(step: _Step) -> None:
    for key, sign in _LIMITS:
        a, b = step.old.get(key), step.new.get(key)
        if a == b:
            continue
        if a is None or b is None:
            text = f"{key} {b} added" if a is None else f"{key} {a} removed"
            step.add("narrowed" if a is None else "widened", text)
        else:
            step.add("narrowed" if (b - a) * sign > 0 else "widened", f"{key} changed from {a} to {b}")


def _compare_keywords(step: _Step) -> None:
    old, new = step.old, step.new
    for key in ("pattern", "format", "multipleOf"):
        if old.get(key) == new.get(key):
            continue
        if key not in new:
            step.add("widened", f"{key} {_show(old[key])} removed")
        elif key not in old:
            step.add("narrowed", f"{key} {_show(new[key])} added")
        else:
            step.add("narrowed", f"{key} changed from {_show(old[key])} to {_show(new[key])}")
    unique = bool(new.get("uniqueItems"))
    if bool(old.get("uniqueItems")) != unique:
        step.add(
            "narrowed" if unique else "widened", "unique items " + ("now required" if unique else "no longer required")
        )


_CHECKS: tuple[Callable[[_Step], None], ...] = (_compare_enum, _compare_bounds, _compare_limits, _compare_keywords)


def _compare_array(step: _Step) -> None:
    old, new = step.old, step.new
    if "items" in old or "items" in new:
        _compare(old.get("items", True), new.get("items", True), f"{step.path}[]", step.walk)
    for index, (a, b) in enumerate(zip(old.get("prefixItems") or (), new.get("prefixItems") or (), strict=False)):
        _compare(a, b, f"{step.path}[{index}]", step.walk)


def _compare_object(step: _Step) -> None:
    old, new, path, walk = step.old, step.new, step.path, step.walk
    old_props: Mapping[str, Any] = old.get("properties") or {}
    new_props: Mapping[str, Any] = new.get("properties") or {}
    old_required, new_required = set(old.get("required") or ()), set(new.get("required") or ())
    for name, sub in old_props.items():
        where = _join(path, name)
        if name not in new_props:
            walk.findings.append(_Finding("removed", where, "removed"))
            continue
        _compare(sub, new_props[name], where, walk)
        if (name in old_required) != (name in new_required):
            required = name in new_required
            kind, text = ("now-required", "now required") if required else ("now-optional", "no longer required")
            walk.findings.append(_Finding(kind, where, text))
    for name in new_props:
        if name not in old_props:
            required = name in new_required
            kind = "added-required" if required else "added-optional"
            walk.findings.append(_Finding(kind, _join(path, name), f"added ({'required' if required else 'optional'})"))
    old_extra, new_extra = old.get("additionalProperties", True), new.get("additionalProperties", True)
    if old_extra == new_extra:
        return
    if new_extra is False:
        step.add("narrowed", "no longer accepts additional properties")
    elif old_extra is False:
        step.add("widened", "now accepts additional properties")
    else:
        _compare(old_extra, new_extra, _join(path, "*"), walk)


def format_changes(changes: Sequence[Change]) -> str:
    """A readable report: one line per change, breaking ones first, then a count."""
    ordered = [c for c in changes if c.severity == "breaking"] + [c for c in changes if c.severity != "breaking"]
    lines = [
        f"{c.severity.upper() if c.severity == 'breaking' else c.severity:<10}  {c.tool}: {c.message}" for c in ordered
    ]
    breaking = sum(c.severity == "breaking" for c in changes)
    count = f"{len(changes)} change{'' if len(changes) == 1 else 's'}"
    lines.append(f"{count}: {breaking} breaking, {len(changes) - breaking} compatible." if changes else "No changes.")
    return "\n".join(lines) + "\n"
