"""Adapting a tool definition to a provider profile: one walk over its wire definition returns the adapted
definition, every problem of the original, and what to undo in the arguments a provider sends back (`Restore`).

Pure functions of JSON dicts: they work on a toolkit `Tool` and on any MCP server's `tools/list` alike.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from toolkit._jsonschema import SCHEMA_KEYS, SCHEMA_LIST_KEYS, SCHEMA_MAP_KEYS, def_name, inline_defs, recursive_defs

from .profiles import Problem, Profile, get_profile

__all__ = ["AdaptedTool", "Restore", "adapt"]

# -- restoring arguments -----------------------------------------------------------------------------------------


@dataclass
class Restore:
    """What to undo in arguments shaped by an adapted schema: nulls the provider must send for optional properties.

    A tree shaped like the schema: `drop_null` are properties of this object whose `null` means "left out".
    """

    drop_null: set[str] = field(default_factory=set)
    properties: dict[str, Restore] = field(default_factory=dict)
    items: Restore | None = None
    branches: list[Restore] = field(default_factory=list)
    names: frozenset[str] = frozenset()
    """The properties of the object this plan is for (to pick the branch of a union a value belongs to)."""

    def empty(self) -> bool:
        return not (self.drop_null or self.properties or self.items or self.branches)

    def apply(self, value: Any) -> Any:
        """`value` with the provider-only nulls removed; a new object where something changes."""
        if isinstance(value, dict):
            return self._apply_object(value)
        if isinstance(value, list) and self.items is not None:
            items = [self.items.apply(v) for v in value]
            return items if any(a is not b for a, b in zip(items, value, strict=True)) else value
        return value

    def _apply_object(self, value: dict[str, Any]) -> dict[str, Any]:
        """An object restored: by the branch of a union it belongs to, else property by property."""
        if self.branches:
            return self._apply_branch(value)
        out: dict[str, Any] | None = None
        for key, item in value.items():
            new = self._restored(key, item)
            if new is item:
                continue
            if out is None:
                out = dict(value)
            if new is _DROP:
                del out[key]
            else:
                out[key] = new
        return out if out is not None else value

    def _apply_branch(self, value: dict[str, Any]) -> dict[str, Any]:
        """A union of objects: `value` restored by the branch whose properties its keys are (as it is if none)."""
        for branch in self.branches:
            if set(value) <= branch.names:
                restored: dict[str, Any] = branch.apply(value)
                return restored
        return value

    def _restored(self, key: str, item: Any) -> Any:
        """One property's value restored, or `_DROP` for a null the provider had to send for a property left out."""
        if item is None and key in self.drop_null:
            return _DROP
        sub = self.properties.get(key)
        return sub.apply(item) if sub is not None else item


_DROP = object()


# -- adapting ----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AdaptedTool:
    """A tool definition adapted to one profile."""

    profile: Profile
    tool: dict[str, Any]
    """The MCP tool definition (wire form) with the adapted schemas."""
    problems: list[Problem]
    """Every problem of the original definition."""
    restore: Restore | None
    """What to undo in arguments coming back; None when nothing."""

    @property
    def remaining(self) -> list[Problem]:
        """The problems the adaptation cannot fix."""
        return [p for p in self.problems if not p.fixable]


_DROPPED = frozenset({"$schema", "$id", "$comment", "discriminator", "$anchor"})
_RECURSION_DEPTH = 3


def adapt(tool: Mapping[str, Any], profile: str | Profile) -> AdaptedTool:
    """Adapt one tool definition (wire form) to `profile`, listing every problem of the original."""
    prof = get_profile(profile)
    name = str(tool.get("name", "?"))
    walk = _Walk(prof, name)
    out = dict(tool)
    if prof.rule("name") is not None and not re.match(prof.name_pattern, name):
        walk.problem("name", "name", "name", f"{name!r} does not match {prof.name_pattern}")
    schema = tool.get("inputSchema")
    restore: Restore | None = None
    if isinstance(schema, dict):
        if schema.get("type") != "object":
            walk.problem("root-object", "inputSchema", "type", f"the root type is {schema.get('type')!r}")
        out["inputSchema"], restore = walk.root(schema)
    if prof.rule("output-schema") is not None and "outputSchema" in tool:
        walk.problem("output-schema", "outputSchema", "outputSchema", "the tool declares an output schema")
        del out["outputSchema"]
    useful = restore is not None and _prune(restore)
    return AdaptedTool(prof, out, walk.problems, restore if useful else None)


class _Walk:
    """One walk over one tool's input schema for one profile."""

    def __init__(self, profile: Profile, tool: str) -> None:
        self.profile = profile
        self.tool = tool
        self.has = {r.id for r in profile.rules}
        self.problems: list[Problem] = []
        self.defs: dict[str, Any] = {}
        self.def_plans: dict[str, Restore] = {}
        self.counts = {"properties": 0, "enum": 0, "depth": 0}

    def problem(self, rule_id: str, path: str, keyword: str, detail: str) -> None:
        rule = self.profile.rule(rule_id)
        if rule is not None:
            self.problems.append(Problem(self.profile.name, self.tool, path, keyword, rule, detail))

    def root(self, schema: dict[str, Any]) -> tuple[dict[str, Any], Restore | None]:
        """Walk a whole input schema: the adapted schema and its restore plan."""
        body = self.take_defs(schema)
        result, plan = self.node(body, "inputSchema", {}, 0)
        if result is _DROP:  # the root itself is a cut recursion: cannot happen for an object root
            result = body
        if self.defs and not self.cuts_recursion():
            result["$defs"] = self.definitions()
        if "limits" in self.has:
            self.limits()
        return result, plan

    def take_defs(self, schema: dict[str, Any]) -> dict[str, Any]:
        """Keep the schema's `$defs` for the walk (inlined first for a profile without `$ref`), reporting each
        reference and each recursive definition the profile cannot take: the schema without them."""
        _find_refs(schema, "inputSchema", lambda path: self.problem("no-ref", path, "$ref", "a reference"))
        if "no-ref" in self.has and "$defs" in schema:
            schema = inline_defs(schema)
        defs = schema.get("$defs")
        self.defs = dict(defs) if isinstance(defs, dict) else {}
        self.def_plans = {n: Restore() for n in self.defs}
        if not self.cuts_recursion():
            self.report_recursion()
        return {k: v for k, v in schema.items() if k != "$defs"}

    def cuts_recursion(self) -> bool:
        """The profile cuts a recursive type after a few levels (lossy), instead of keeping it in `$defs`."""
        rule = self.profile.rule("recursion")
        return rule is not None and rule.fix == "lossy"

    def report_recursion(self) -> None:
        """Report each definition that refers to itself (a profile that keeps them cannot take them)."""
        if not self.defs or "recursion" not in self.has:
            return
        for name in sorted(recursive_defs(self.defs)):
            self.problem("recursion", f"inputSchema.$defs.{name}", "$ref", f"{name} refers to itself")

    def definitions(self) -> dict[str, Any]:
        """Walk each definition kept in `$defs`, once, filling in its plan (which references to it share)."""
        new_defs: dict[str, Any] = {}
        for name, sub in self.defs.items():
            new_defs[name], def_plan = self.node(sub, f"inputSchema.$defs.{name}", {}, 1)
            _fill(self.def_plans[name], def_plan)
        return new_defs

    def limits(self) -> None:
        if self.counts["properties"] > 5000:
            self.problem("limits", "inputSchema", "properties", f"{self.counts['properties']} properties (max 5000)")
        if self.counts["depth"] > 10:
            self.problem("limits", "inputSchema", "properties", f"{self.counts['depth']} levels of nesting (max 10)")
        if self.counts["enum"] > 1000:
            self.problem("limits", "inputSchema", "enum", f"{self.counts['enum']} enum values (max 1000)")

    # The walk returns the new schema (or _DROP: a recursion cut here) and its restore plan.
    def node(self, schema: Any, path: str, stack: dict[str, int], depth: int) -> tuple[Any, Restore | None]:
        """Walk one schema: its own keywords, then the schemas it holds."""
        if not isinstance(schema, dict):
            return schema, None
        name = def_name(schema)
        if name is not None and name in self.defs:
            return self.reference(schema, name, path, stack, depth)
        s = dict(schema)
        notes: list[str] = []
        self.types(s, path)
        self.unions(s, path)
        self.literals(s, path, notes)
        cut, plan = self.parts(s, path, stack, depth, notes)
        if cut:
            return _DROP, None
        self.keywords(s, path, notes)
        _add_notes(s, notes)
        return s, plan

    def parts(
        self, s: dict[str, Any], path: str, stack: dict[str, int], depth: int, notes: list[str]
    ) -> tuple[bool, Restore | None]:
        """Walk the schemas `s` holds (a union's branches, an object's properties, an array's items): whether a
        recursion was cut here, and the plan."""
        plan: Restore | None = None
        if "anyOf" in s:
            plan = self.branches(s, path, stack, depth)
            if plan is None:
                return True, None
        if _is_object(s):
            plan = self.object(s, path, stack, depth)
        if _is_array(s):
            cut, items_plan = self.array(s, path, stack, depth, notes)
            if cut:
                return True, None
            plan = items_plan or plan
        return False, plan

    def branches(self, s: dict[str, Any], path: str, stack: dict[str, int], depth: int) -> Restore | None:
        """Walk each branch of `s["anyOf"]` (kept in `s`); the union's plan, or None when every branch is cut."""
        branches: list[Any] = []
        plans: list[Restore] = []
        for i, sub in enumerate(s["anyOf"]):
            new, sub_plan = self.node(sub, f"{path}.anyOf[{i}]", stack, depth)
            if new is not _DROP:
                branches.append(new)
                plans.append(sub_plan if sub_plan is not None else _names_only(new))
        if not branches:
            return None
        s["anyOf"] = branches
        return Restore(branches=plans)

    def reference(
        self, schema: dict[str, Any], name: str, path: str, stack: dict[str, int], depth: int
    ) -> tuple[Any, Restore | None]:
        if not self.cuts_recursion():
            # The definition is adapted once, in $defs; its plan is filled in then (it may refer to itself).
            return schema, self.def_plans[name]
        seen = stack.get(name, 0)
        if seen >= _RECURSION_DEPTH:
            return _DROP, None
        siblings = {k: v for k, v in schema.items() if k != "$ref"}
        return self.node({**self.defs[name], **siblings}, path, {**stack, name: seen + 1}, depth)

    def types(self, s: dict[str, Any], path: str) -> None:
        """A list of types as a profile with `nullable` wants it: one type (or a union) and `nullable: true`."""
        kind = s.get("type")
        if isinstance(kind, list) and "nullable" in self.has:
            others = [t for t in kind if t != "null"]
            self.problem("nullable", path, "type", f"a list of types {kind}")
            if "null" in kind:
                s["nullable"] = True
            if len(others) == 1:
                s["type"] = others[0]
            else:
                del s["type"]
                s["anyOf"] = [{"type": t} for t in others]

    def unions(self, s: dict[str, Any], path: str) -> None:
        """`oneOf` as `anyOf`, an `allOf` of one schema as that schema, a union with null as the profile wants it."""
        if "oneOf" in s and "one-of" in self.has:
            self.problem("one-of", path, "oneOf", "a `oneOf` union")
            s["anyOf"] = [*s.get("anyOf", []), *s.pop("oneOf")]
        if "allOf" in s and "all-of" in self.has:
            parts = s["allOf"]
            if len(parts) == 1 and isinstance(parts[0], dict):
                self.problem("all-of", path, "allOf", "an `allOf` of one schema")
                del s["allOf"]
                _merge_into(s, parts[0])
        self.null_union(s, path)

    def null_union(self, s: dict[str, Any], path: str) -> None:
        """`anyOf [X, null]` as the profile wants it: X with `nullable: true` (Gemini), `type: [X, "null"]` (Claude
        Desktop), else as it is."""
        branches = s.get("anyOf")
        if not isinstance(branches, list) or {"type": "null"} not in branches:
            return
        rest = [b for b in branches if b != {"type": "null"}]
        if "nullable" in self.has:
            self.nullable(s, path, rest)
        elif "null-union" in self.has:
            self.null_type_list(s, path, rest)

    def nullable(self, s: dict[str, Any], path: str, rest: list[Any]) -> None:
        """Gemini: a union with null as the union of the `rest` with `nullable: true` (the one branch left, merged)."""
        self.problem("nullable", path, "anyOf", "a union with null")
        s["nullable"] = True
        del s["anyOf"]
        if len(rest) == 1 and isinstance(rest[0], dict):
            _merge_into(s, rest[0])
        elif rest:
            s["anyOf"] = rest

    def null_type_list(self, s: dict[str, Any], path: str, rest: list[Any]) -> None:
        """Claude Desktop: a union of simple types with null as a list of types; a complex one is reported."""
        simple = all(isinstance(b, dict) and set(b) == {"type"} and isinstance(b["type"], str) for b in rest)
        if len(rest) == 1 and isinstance(rest[0].get("type"), str) and "enum" not in rest[0]:
            self.problem("null-union", path, "anyOf", "a union with null")
            del s["anyOf"]
            _merge_into(s, rest[0])
            s["type"] = [rest[0]["type"], "null"]
        elif simple and rest:
            self.problem("null-union", path, "anyOf", "a union with null")
            del s["anyOf"]
            s["type"] = [*(b["type"] for b in rest), "null"]
        else:
            self.problem("null-union-complex", path, "anyOf", "a union of complex types with null")

    def literals(self, s: dict[str, Any], path: str, notes: list[str]) -> None:
        """`const` and `enum` as the profile takes them: a string `const` as an enum of one, values that are not
        strings in the description, no `type` beside them."""
        if "const" in s and "const" in self.has:
            self.const(s, path, notes)
        enum = s.get("enum")
        if isinstance(enum, list):
            self.enum(s, enum, path, notes)
        if "enum-type" in self.has and ("enum" in s or "const" in s) and "type" in s:
            self.problem("enum-type", path, "type", "a `type` beside `enum`/`const`")
            del s["type"]

    def const(self, s: dict[str, Any], path: str, notes: list[str]) -> None:
        """A profile without `const`: a string one as an enum of one value, any other said in the description."""
        value = s.pop("const")
        if isinstance(value, str):
            self.problem("const", path, "const", f"const {_text(value)}")
            s["enum"] = [value]
        else:
            self.problem("enum-strings", path, "const", f"const {_text(value)} is not a string")
            notes.append(f"Must be {_text(value)}.")

    def enum(self, s: dict[str, Any], enum: list[Any], path: str, notes: list[str]) -> None:
        """Count an enum's values; for a profile of string enums only, say other values in the description."""
        self.counts["enum"] += len(enum)
        if "enum-strings" in self.has and not all(isinstance(v, str) for v in enum):
            self.problem("enum-strings", path, "enum", "an enum of values that are not all strings")
            del s["enum"]
            notes.append("One of: " + ", ".join(_text(v) for v in enum) + ".")

    def object(self, s: dict[str, Any], path: str, stack: dict[str, int], depth: int) -> Restore:
        """Walk an object's properties (and its `additionalProperties`): its plan."""
        props = s.get("properties")
        props = props if isinstance(props, dict) else {}
        required = list(s.get("required") or ())
        self.counts["properties"] += len(props)
        self.counts["depth"] = max(self.counts["depth"], depth + 1)
        plan = Restore(names=frozenset(props))
        new_props: dict[str, Any] = {}
        for key, sub in props.items():
            sub_path = f"{path}.properties.{key}"
            new, sub_plan = self.node(sub, sub_path, stack, depth + 1)
            if new is _DROP:
                new = self.cut_property(sub, sub_path, key in required)
                if new is _DROP:
                    continue
            if sub_plan is not None:
                plan.properties[key] = sub_plan
            if key not in required:
                new = self.optional(key, new, sub_path, plan)
            new_props[key] = new
        self.properties(s, new_props, required)
        self.extra(s, path, stack, depth)
        return plan

    def cut_property(self, schema: Any, path: str, required: bool) -> Any:
        """A property where a recursion was cut: kept as it was if required (reported), else `_DROP`ped."""
        if required:
            self.problem("recursion", path, "$ref", "a required property of a recursive type")
            return schema
        self.problem("recursion", path, "$ref", f"recursion cut after {_RECURSION_DEPTH} levels")
        return _DROP

    def optional(self, key: str, schema: Any, path: str, plan: Restore) -> Any:
        """An optional property for a profile where all are required: it admits null, which `plan` then drops."""
        if "all-required" not in self.has or not isinstance(schema, dict):
            return schema
        self.problem("all-required", path, "required", f"optional property {key!r}")
        if _accepts_null(schema):
            return schema
        plan.drop_null.add(key)
        return _nullable(schema)

    def properties(self, s: dict[str, Any], new_props: dict[str, Any], required: list[str]) -> None:
        """Put the walked properties in `s`, and the list of those required (every one, if the profile says so)."""
        if "properties" in s or "closed-objects" in self.has:
            s["properties"] = new_props
        if "all-required" in self.has and new_props:
            s["required"] = list(new_props)
        elif required:
            s["required"] = [k for k in required if k in new_props]

    def extra(self, s: dict[str, Any], path: str, stack: dict[str, int], depth: int) -> None:
        """An object's `additionalProperties`: closed for a profile that wants it, walked when it is a schema."""
        extra = s.get("additionalProperties")
        if "closed-objects" in self.has:
            if extra is None:
                self.problem("closed-objects", path, "additionalProperties", "an object open to other keys")
                s["additionalProperties"] = False
            elif extra is not False:
                self.problem("open-map", path, "additionalProperties", "an object with free-form keys")
        if isinstance(extra, dict):
            new_extra, _ = self.node(extra, f"{path}.additionalProperties", stack, depth + 1)
            s["additionalProperties"] = extra if new_extra is _DROP else new_extra

    def array(
        self, s: dict[str, Any], path: str, stack: dict[str, int], depth: int, notes: list[str]
    ) -> tuple[bool, Restore | None]:
        """Walk an array's `prefixItems` and `items`: whether a recursion was cut in them, and the plan."""
        prefix = s.get("prefixItems")
        if isinstance(prefix, list):
            walked = [self.node(sub, f"{path}.prefixItems[{i}]", stack, depth)[0] for i, sub in enumerate(prefix)]
            if any(w is _DROP for w in walked):
                return True, None
            self.prefix_items(s, walked, path, notes)
        elif "items" not in s and "array-items" in self.has:
            self.problem("array-items", path, "items", "an array without `items`")
            s["items"] = {}
        items = s.get("items")
        if not isinstance(items, dict):
            return False, None
        new, sub_plan = self.node(items, f"{path}.items", stack, depth)
        if new is _DROP:
            return True, None
        s["items"] = new
        if sub_plan is None:
            return False, None
        return False, Restore(items=sub_plan)

    def prefix_items(self, s: dict[str, Any], walked: list[Any], path: str, notes: list[str]) -> None:
        """A tuple's walked `prefixItems`: kept, or for a profile without tuples, any of them as `items`, their order
        said in the description; a profile that needs `items` gets any of them."""
        if "tuple" not in self.has:
            s["prefixItems"] = walked
            if "items" not in s and "array-items" in self.has:
                self.problem("array-items", path, "items", "an array without `items`")
                s["items"] = _one_of(walked)
            return
        self.problem("tuple", path, "prefixItems", f"a tuple of {len(walked)} items")
        del s["prefixItems"]
        if "items" not in s:
            s["items"] = _one_of(walked)
        notes.append("Items in order: " + ", ".join(_brief(w) for w in walked) + ".")

    def keywords(self, s: dict[str, Any], path: str, notes: list[str]) -> None:
        """The other keywords: a `default`, a `format` or any keyword the profile does not take moves to the
        description."""
        if "default" in s and "default" in self.has:
            self.problem("default", path, "default", f"default {_text(s['default'])}")
            notes.append(f"Default: {_text(s.pop('default'))}.")
        self.unknown_format(s, path, notes)
        allowed = self.profile.keywords
        if allowed is not None:
            self.unknown_keywords(s, allowed, path, notes)

    def unknown_format(self, s: dict[str, Any], path: str, notes: list[str]) -> None:
        """A `format` the profile does not know, said in the description instead."""
        fmt = s.get("format")
        allowed = self.profile.formats
        if not isinstance(fmt, str) or allowed is None or fmt in allowed:
            return
        self.problem("format", path, "format", f"format {fmt!r}")
        del s["format"]
        notes.append(f"Format: {fmt}.")

    def unknown_keywords(self, s: dict[str, Any], allowed: Collection[str], path: str, notes: list[str]) -> None:
        """The keywords outside the profile's list (and a `minItems` above its largest), said in the description."""
        for key in [k for k in s if k not in allowed]:
            value = s.pop(key)
            self.problem("keyword", path, key, f"keyword {key!r}")
            note = _note(key, value) if key not in _DROPPED else ""
            if note:
                notes.append(note)
        largest = self.profile.max_min_items
        if largest is not None and isinstance(s.get("minItems"), int) and s["minItems"] > largest:
            self.problem("keyword", path, "minItems", "`minItems` above 1")
            notes.append(_note("minItems", s.pop("minItems")))


def _prune(root: Restore) -> bool:
    """Drop the parts of the plan that restore nothing; True when something is left.

    Plans of recursive definitions refer to themselves, so usefulness is a fixed point over the whole graph.
    """
    nodes = _plans(root)
    useful = _useful(nodes)
    for plan in nodes.values():
        plan.properties = {k: sub for k, sub in plan.properties.items() if useful[id(sub)]}
        if plan.items is not None and not useful[id(plan.items)]:
            plan.items = None
        if not any(useful[id(b)] for b in plan.branches):
            plan.branches = []
    return useful[id(root)]


def _plans(root: Restore) -> dict[int, Restore]:
    """Every plan reachable from `root`, each once (by identity: a recursive definition's plan reaches itself)."""
    nodes: dict[int, Restore] = {}
    todo = [root]
    while todo:
        plan = todo.pop()
        if id(plan) not in nodes:
            nodes[id(plan)] = plan
            todo.extend(_children(plan))
    return nodes


def _useful(nodes: dict[int, Restore]) -> dict[int, bool]:
    """Whether each plan restores something, itself or through a child: a fixed point over the graph."""
    useful = {key: bool(plan.drop_null) for key, plan in nodes.items()}
    changed = True
    while changed:
        changed = False
        for key, plan in nodes.items():
            if not useful[key] and any(useful[id(c)] for c in _children(plan)):
                useful[key] = changed = True
    return useful


def _children(plan: Restore) -> list[Restore]:
    return [*plan.properties.values(), *([plan.items] if plan.items is not None else []), *plan.branches]


def _fill(target: Restore, plan: Restore | None) -> None:
    if plan is not None:
        target.drop_null, target.properties, target.items = plan.drop_null, plan.properties, plan.items
        target.branches, target.names = plan.branches, plan.names


def _names_only(schema: Any) -> Restore:
    props = schema.get("properties") if isinstance(schema, dict) else None
    return Restore(names=frozenset(props) if isinstance(props, dict) else frozenset())


def _find_refs(schema: Any, path: str, found: Callable[[str], None]) -> None:
    """Call `found` with the path of every schema that has a `$ref`, at any depth."""
    if not isinstance(schema, dict):
        return
    if isinstance(schema.get("$ref"), str):
        found(path)
    for key, value in schema.items():
        for sub_path, sub in _subschemas(key, value, path):
            _find_refs(sub, sub_path, found)


def _subschemas(key: str, value: Any, path: str) -> list[tuple[str, Any]]:
    """The schemas the value of the keyword `key` holds, each with its path."""
    if key in SCHEMA_MAP_KEYS and isinstance(value, dict):
        return [(f"{path}.{key}.{name}", sub) for name, sub in value.items()]
    if key in SCHEMA_LIST_KEYS and isinstance(value, list):
        return [(f"{path}.{key}[{i}]", sub) for i, sub in enumerate(value)]
    if key in SCHEMA_KEYS:
        return [(f"{path}.{key}", value)]
    return []


def _is_object(schema: dict[str, Any]) -> bool:
    """The schema describes an object (its properties make it one without `type`)."""
    return schema.get("type") == "object" or "properties" in schema


def _is_array(schema: dict[str, Any]) -> bool:
    """The schema describes an array (its items make it one without `type`)."""
    return "prefixItems" in schema or "items" in schema or schema.get("type") == "array"


def _merge_into(schema: dict[str, Any], part: dict[str, Any]) -> None:
    """Make `schema` the merge of `part` and itself, in place: `part`'s keywords first, `schema`'s winning."""
    merged = {**part, **schema}
    schema.clear()
    schema.update(merged)


def _add_notes(schema: dict[str, Any], notes: list[str]) -> None:
    """Append what the profile could not say in keywords to the schema's description."""
    if notes:
        description = schema.get("description")
        schema["description"] = " ".join([description, *notes] if description else notes)


def _accepts_null(schema: dict[str, Any]) -> bool:
    kind = schema.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind) or schema.get("nullable") is True:
        return True
    return any(isinstance(b, dict) and _accepts_null(b) for b in schema.get("anyOf") or ())


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` or null, keeping the description outside, where a model reads it first."""
    inner = {k: v for k, v in schema.items() if k != "description"}
    out: dict[str, Any] = (
        {"anyOf": [*inner["anyOf"], {"type": "null"}]}
        if set(inner) == {"anyOf"}
        else {"anyOf": [inner, {"type": "null"}]}
    )
    if "description" in schema:
        out["description"] = schema["description"]
    return out


def _one_of(schemas: list[Any]) -> Any:
    unique: list[Any] = []
    for s in schemas:
        if s not in unique:
            unique.append(s)
    return unique[0] if len(unique) == 1 else {"anyOf": unique}


def _brief(schema: Any) -> str:
    if isinstance(schema, dict):
        kind = schema.get("type")
        if isinstance(kind, str):
            return kind
        if "anyOf" in schema:
            return " or ".join(_brief(b) for b in schema["anyOf"])
    return "any"


def _text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


_PHRASES = {
    "minLength": "At least {} character{}.",
    "maxLength": "At most {} character{}.",
    "minimum": "At least {}.",
    "maximum": "At most {}.",
    "exclusiveMinimum": "Greater than {}.",
    "exclusiveMaximum": "Less than {}.",
    "multipleOf": "A multiple of {}.",
    "minItems": "At least {} item{}.",
    "maxItems": "At most {} item{}.",
    "pattern": "Matches the pattern {}.",
    "examples": "Examples: {}.",
}


def _note(key: str, value: Any) -> str:
    if key == "uniqueItems":
        return "Items are unique." if value else ""
    if key == "examples" and isinstance(value, list):
        return "Examples: " + ", ".join(_text(v) for v in value) + "."
    phrase = _PHRASES.get(key)
    return phrase.format(_text(value), "" if value == 1 else "s") if phrase else f"{key}: {_text(value)}."
