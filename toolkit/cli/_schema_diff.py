"""Structural comparison of two JSON Schemas: how the set of values each accepts differs.

Each `SchemaChange` says whether the new schema accepts fewer values (`narrowed`), more (`widened`), or different ones
(`changed`), with finer kinds for properties, `required` and enums; `_breaking_changes` turns them into breaking or
compatible changes depending on whether the schema describes arguments or results.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from toolkit.docs import describe_type

__all__ = ["SchemaChange", "Walk", "compare_schemas"]

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


@dataclass
class SchemaChange:
    """One difference between two schemas: its kind (`narrowed`, `widened`, `changed`, `removed`, `enum-added`, ...)
    and where."""

    kind: str
    path: str
    message: str


@dataclass
class Walk:
    """The state of one comparison: the two schemas' `$defs`, the changes found so far, the `$ref` pairs seen."""

    old_defs: Mapping[str, Any]
    new_defs: Mapping[str, Any]
    changes: list[SchemaChange] = field(default_factory=list)
    seen: set[tuple[str, str]] = field(default_factory=set)

    def add(self, kind: str, path: str, message: str) -> None:
        """Record one change found at `path`."""
        self.changes.append(SchemaChange(kind, path, message))

    def already_seen(self, old_ref: str, new_ref: str) -> bool:
        """Whether this pair of `$ref`s is already being compared (a recursive type); marks it seen otherwise."""
        if not old_ref and not new_ref:
            return False
        key = (old_ref, new_ref)
        if key in self.seen:
            return True
        self.seen.add(key)
        return False


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


def compare_schemas(old: Any, new: Any, path: str, walk: Walk) -> None:
    """Add to `walk.changes` every difference between `old` and `new`, found at `path` and below."""
    old, old_ref = _resolve(old, walk.old_defs)
    new, new_ref = _resolve(new, walk.new_defs)
    if walk.already_seen(old_ref, new_ref):
        return
    if old == new:
        return
    step = _Step(old, new, path, walk)
    if isinstance(old, Mapping) and isinstance(new, Mapping):
        _compare_annotations(step)
    if _restrictive(old) != _restrictive(new):
        _compare_types(step)


@dataclass(frozen=True)
class _Step:
    """One pair of schemas being compared, at one path."""

    old: Any
    new: Any
    path: str
    walk: Walk

    def add(self, kind: str, message: str) -> None:
        """Record one change found at this step's path."""
        self.walk.add(kind, self.path, message)


def _compare_annotations(step: _Step) -> None:
    """What the two objects say of a value without restricting it: its description and its default."""
    old, new = step.old, step.new
    if old.get("description") != new.get("description") and step.path not in ("", "output"):
        step.add("description", "description changed")
    if "default" in old and "default" in new and old["default"] != new["default"]:
        step.add("default", f"default changed from {_show(old['default'])} to {_show(new['default'])}")


def _compare_types(step: _Step) -> None:
    """Compare the two schemas branch by branch of JSON type, then say which types one accepts and the other not."""
    old_branches, new_branches = _branches(step.old), _branches(step.new)
    if old_branches is None or new_branches is None:
        _compare_unanalysed(step, old_branches is None, new_branches is None)
        return
    lost = [kind for kind in old_branches if not _compare_kind(step, kind, old_branches[kind], new_branches)]
    gained = _gained(old_branches, new_branches)
    if lost and gained and len(lost) == len(old_branches):
        step.add("changed", f"type changed from {describe_type(step.old)} to {describe_type(step.new)}")
        return
    if lost:
        step.add("narrowed", f"no longer accepts {' or '.join(lost)}")
    if gained:
        step.add("widened", f"now also accepts {' or '.join(gained)}")


def _gained(old_branches: Mapping[str, Any], new_branches: Mapping[str, Any]) -> list[str]:
    """The JSON types the new schema accepts and the old one accepted nothing of (a number is an integer's kin)."""
    return [k for k in new_branches if k not in old_branches and not _numeric_pair(k, old_branches)]


def _compare_kind(step: _Step, kind: str, branch: Any, new_branches: Mapping[str, Any]) -> bool:
    """Compare the old schema's branch of one JSON type with what the new one accepts of that type; False when the
    new one accepts nothing of it (the type is lost)."""
    if kind in new_branches:
        _compare_branch(kind, _Step(branch, new_branches[kind], step.path, step.walk))
        return True
    if _numeric_pair(kind, new_branches):
        widened = kind == "integer"
        step.add("widened" if widened else "narrowed", _NUMERIC[widened])
        return True
    return False


def _compare_unanalysed(step: _Step, old_any: bool, new_any: bool) -> None:
    """One side (or both) has no branches by type: it accepts any value, or says so in keywords not analysed."""
    if old_any and new_any:
        step.add("changed", "schema changed")  # keywords such as allOf or not, which are not analysed
    elif old_any:
        step.add("narrowed", f"now restricted to {describe_type(step.new)} (was any value)")
    else:
        step.add("widened", f"now accepts any value (was {describe_type(step.old)})")


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
        return _alternative_branches(alternatives)
    return _typed_branches(schema)


def _alternative_branches(alternatives: list[Any]) -> dict[str, Any]:
    """The branches of an `anyOf` (or `oneOf`) by JSON type, the alternatives of one type merged into an `anyOf`."""
    out: dict[str, Any] = {}
    for sub in alternatives:
        resolved = sub if isinstance(sub, Mapping) else {}
        for kind, part in (_branches(resolved) or {"any": resolved}).items():
            out[kind] = {"anyOf": [out[kind], part]} if kind in out else part
    return out


def _typed_branches(schema: Mapping[str, Any]) -> dict[str, Any] | None:
    """The branches of a schema without alternatives: one per type it names (or its values have), each with the
    schema's other keywords and the values of that type."""
    values = [schema["const"]] if "const" in schema else schema.get("enum")
    if not isinstance(values, list):
        values = None
    kinds = _kinds(schema, values)
    if kinds is None:
        return None
    rest = {k: v for k, v in schema.items() if k not in ("type", "enum", "const")}
    out = {}
    for kind in kinds:
        part = dict(rest, type=kind)
        if values is not None:
            part["enum"] = [v for v in values if _is_of_kind(v, kind)]
        out[kind] = part
    return out


def _is_of_kind(value: Any, kind: str) -> bool:
    """Whether a JSON value is of the JSON type `kind` (an integer is a number too)."""
    if kind == "number" and type(value) is int:
        return True
    return _value_type(value) == kind


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
    """The values each side is restricted to: a list added or dropped, or values removed and added."""
    before, after = step.old.get("enum"), step.new.get("enum")
    if before is None and after is None:
        return
    if before is None:
        step.add("narrowed", f"now restricted to {', '.join(_show(v) for v in after)}")
        return
    if after is None:
        step.add("widened", "no longer restricted to a list of values")
        return
    gone, fresh = _missing(before, after), _missing(after, before)
    if gone:
        step.add("enum-removed", f"enum {_values(gone)} removed")
    if fresh:
        step.add("enum-added", f"enum {_values(fresh)} added")


def _missing(values: list[Any], others: list[Any]) -> list[Any]:
    """The values that are not among `others`, compared as JSON (`1` and `1.0` are the same number)."""
    keys = {json.dumps(v, sort_keys=True) for v in others}
    return [v for v in values if json.dumps(v, sort_keys=True) not in keys]


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
        compare_schemas(old.get("items", True), new.get("items", True), f"{step.path}[]", step.walk)
    for index, (a, b) in enumerate(zip(old.get("prefixItems") or (), new.get("prefixItems") or (), strict=False)):
        compare_schemas(a, b, f"{step.path}[{index}]", step.walk)


def _compare_object(step: _Step) -> None:
    """An object's properties (kept, removed, added, required or not) and what it says of the others."""
    old_props: Mapping[str, Any] = step.old.get("properties") or {}
    new_props: Mapping[str, Any] = step.new.get("properties") or {}
    new_required = _required(step.new)
    for name, sub in old_props.items():
        if name in new_props:
            _compare_property(step, name, sub, new_props[name])
        else:
            step.walk.add("removed", _join(step.path, name), "removed")
    for name in new_props:
        if name not in old_props:
            required = name in new_required
            kind = "added-required" if required else "added-optional"
            step.walk.add(kind, _join(step.path, name), f"added ({'required' if required else 'optional'})")
    _compare_additional(step)


def _compare_property(step: _Step, name: str, old: Any, new: Any) -> None:
    """One property both objects have: its schema, and whether it became required or optional."""
    where = _join(step.path, name)
    compare_schemas(old, new, where, step.walk)
    was_required, required = name in _required(step.old), name in _required(step.new)
    if was_required == required:
        return
    kind, text = ("now-required", "now required") if required else ("now-optional", "no longer required")
    step.walk.add(kind, where, text)


def _required(schema: Mapping[str, Any]) -> set[str]:
    """The names of an object's required properties."""
    return set(schema.get("required") or ())


def _compare_additional(step: _Step) -> None:
    """`additionalProperties`: forbidden now, allowed now, or both schemas of the other properties compared."""
    old_extra, new_extra = step.old.get("additionalProperties", True), step.new.get("additionalProperties", True)
    if old_extra == new_extra:
        return
    if new_extra is False:
        step.add("narrowed", "no longer accepts additional properties")
    elif old_extra is False:
        step.add("widened", "now accepts additional properties")
    else:
        compare_schemas(old_extra, new_extra, _join(step.path, "*"), step.walk)
