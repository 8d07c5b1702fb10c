"""`$defs` and `$ref` in JSON schemas: inlining definitions, merging the definitions of several schemas.

A leaf (the standard library only): the tool definition wing and the provider profiles both walk schemas with it.

Many clients (Claude Desktop, several IDEs) cannot follow `$ref`, so toolkit inlines every definition it can;
recursive types cannot be inlined and keep theirs.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

__all__ = [
    "SCHEMA_KEYS",
    "SCHEMA_LIST_KEYS",
    "SCHEMA_MAP_KEYS",
    "def_name",
    "expand_root_ref",
    "inline_defs",
    "merge_defs",
    "recursive_defs",
]

# Schema keywords whose value is a schema, a list of schemas, or a mapping of names to schemas.
SCHEMA_KEYS = frozenset(
    {
        "items",
        "additionalProperties",
        "not",
        "contains",
        "propertyNames",
        "if",
        "then",
        "else",
        "unevaluatedItems",
        "unevaluatedProperties",
    }
)
SCHEMA_LIST_KEYS = frozenset({"anyOf", "oneOf", "allOf", "prefixItems"})
SCHEMA_MAP_KEYS = frozenset({"properties", "$defs", "patternProperties", "dependentSchemas"})


def def_name(schema: Mapping[str, Any]) -> str | None:
    """The name of the definition `schema`'s `$ref` points to (`#/$defs/<name>`), or None when it has no such `$ref`."""
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith(_DEFS):
        return ref[len(_DEFS) :]
    return None


_DEFS = "#/$defs/"


def _refs(schema: Any, found: set[str]) -> None:
    if isinstance(schema, dict):
        name = def_name(schema)
        if name is not None:
            found.add(name)
        for value in schema.values():
            _refs(value, found)
    elif isinstance(schema, list):
        for value in schema:
            _refs(value, found)


def recursive_defs(defs: Mapping[str, Any]) -> set[str]:
    """Names of definitions that can reach themselves through `$ref`."""
    edges: dict[str, set[str]] = {}
    for name, sub in defs.items():
        found: set[str] = set()
        _refs(sub, found)
        edges[name] = found
    recursive: set[str] = set()
    for start in defs:
        stack = list(edges.get(start, ()))
        seen: set[str] = set()
        while stack:
            node = stack.pop()
            if node == start:
                recursive.add(start)
                break
            if node in seen:
                continue
            seen.add(node)
            stack.extend(edges.get(node, ()))
    return recursive


def _substitute(schema: Any, defs: Mapping[str, Any], keep: set[str]) -> Any:
    """`schema` with every `$ref` to a definition of `defs` not in `keep` replaced by the definition, at any depth."""
    if isinstance(schema, list):
        return [_substitute(item, defs, keep) for item in schema]
    if not isinstance(schema, dict):
        return schema
    name = def_name(schema)
    if name is not None and name not in keep and name in defs:
        return _inlined(schema, defs[name], defs, keep)
    return {key: _substitute_value(key, value, defs, keep) for key, value in schema.items()}


def _inlined(schema: dict[str, Any], definition: Any, defs: Mapping[str, Any], keep: set[str]) -> Any:
    """The definition a `$ref` points to in place of the reference, the keywords beside the `$ref` kept."""
    target = _substitute(definition, defs, keep)
    if not isinstance(target, dict):
        return target
    siblings = {k: _substitute(v, defs, keep) for k, v in schema.items() if k != "$ref"}
    return {**target, **siblings}


def _substitute_value(key: str, value: Any, defs: Mapping[str, Any], keep: set[str]) -> Any:
    """`_substitute` for the value of one keyword: only values that hold schemas are walked."""
    if key in SCHEMA_MAP_KEYS and isinstance(value, dict):
        return {name: _substitute(sub, defs, keep) for name, sub in value.items()}
    if key in SCHEMA_LIST_KEYS or key in SCHEMA_KEYS:
        return _substitute(value, defs, keep)
    return value


def inline_defs(schema: dict[str, Any]) -> dict[str, Any]:
    """Replace every `$ref` to a non-recursive definition by the definition itself.

    Many clients (Claude Desktop, several IDEs) cannot follow `$ref`. Recursive types cannot be inlined, so
    they stay in `$defs`, with their own non-recursive references inlined.
    """
    defs: dict[str, Any] = schema.get("$defs") or {}
    if not defs:
        return schema
    keep = recursive_defs(defs)
    body = {k: v for k, v in schema.items() if k != "$defs"}
    result: dict[str, Any] = _substitute(body, defs, keep)
    if keep:
        result["$defs"] = {name: _substitute(defs[name], defs, keep) for name in sorted(keep)}
    return result


def expand_root_ref(schema: dict[str, Any]) -> dict[str, Any]:
    """Put the definition a root `$ref` points to at the root, so the root says `type: "object"`.

    pydantic describes a recursive model as `{"$ref": "#/$defs/Node", "$defs": ...}`; clients look for the
    root's `type` (fastmcp#2455), so the root becomes the definition itself, which keeps its own `$defs`.
    """
    name = def_name(schema)
    defs = schema.get("$defs") or {}
    if name is None or name not in defs:
        return schema
    rest = {k: v for k, v in schema.items() if k != "$ref"}
    return {**defs[name], **rest}


def merge_defs(schema: dict[str, Any], into: dict[str, Any]) -> None:
    """Move `schema`'s `$defs` into `into`, renaming a definition whose name is taken by a different one."""
    local = schema.pop("$defs", None)
    if not local:
        return
    renames: dict[str, str] = {}
    for name, definition in local.items():
        target = name
        n = 2
        while target in into and into[target] != definition:
            target = f"{name}{n}"
            n += 1
        if target != name:
            renames[name] = target
    if renames:
        text = json.dumps({"s": schema, "d": local})
        for old, new in renames.items():
            text = text.replace(f'"#/$defs/{old}"', f'"#/$defs/{new}"')
        loaded = json.loads(text)
        schema.clear()
        schema.update(loaded["s"])
        local = {renames.get(k, k): v for k, v in loaded["d"].items()}
    into.update(local)
