"""Python types to JSON Schema (2020-12) and to pydantic-core validators.

Each distinct annotation is turned into a `TypeAdapter` once; its core schema and cleaned JSON schema are
memoised, so that decorating hundreds of tools that share `int`, `str` or a model costs one schema build per
type, not one per tool. A tool's argument validator is then one `SchemaValidator` over a typed dict of those
core schemas.
"""

from __future__ import annotations

import dataclasses
import json
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pydantic
from pydantic import TypeAdapter
from pydantic_core import CoreSchema
from typing_extensions import get_args, get_origin, is_typeddict

__all__ = ["TypeInfo", "clean_schema", "inline_defs", "is_object_like", "type_info"]

# Schema keywords whose value is a schema, a list of schemas, or a mapping of names to schemas.
_SCHEMA_KEYS = frozenset(
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
_SCHEMA_LIST_KEYS = frozenset({"anyOf", "oneOf", "allOf", "prefixItems"})
_SCHEMA_MAP_KEYS = frozenset({"properties", "$defs", "patternProperties", "dependentSchemas"})


@dataclass(frozen=True)
class TypeInfo:
    """What toolkit derives once from one annotation."""

    adapter: TypeAdapter[Any]
    core_schema: CoreSchema
    schema_json: str
    """The cleaned JSON schema, serialised: `json.loads` gives each user a private copy cheaply."""

    def schema(self) -> dict[str, Any]:
        result: dict[str, Any] = json.loads(self.schema_json)
        return result


_CACHE: dict[tuple[object, str], TypeInfo] = {}


def type_info(annotation: Any, mode: typing.Literal["validation", "serialization"] = "validation") -> TypeInfo:
    """Build (or reuse) the adapter and JSON schema of `annotation`.

    Raises:
        pydantic.PydanticSchemaGenerationError: pydantic cannot handle the type.
        pydantic.errors.PydanticInvalidForJsonSchema: the type has no JSON schema.
    """
    try:
        key = (annotation, mode)
        cached = _CACHE.get(key)
    except TypeError:  # unhashable metadata inside Annotated
        key = None
        cached = None
    if cached is not None:
        return cached
    adapter: TypeAdapter[Any] = TypeAdapter(annotation)
    schema = clean_schema(adapter.json_schema(mode=mode))
    info = TypeInfo(adapter, adapter.core_schema, json.dumps(schema, separators=(",", ":"), ensure_ascii=False))
    if key is not None:
        _CACHE[key] = info
    return info


def clean_schema(schema: Any) -> Any:
    """Drop the `title` pydantic adds to every schema: it costs tokens and tells the model nothing."""
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "title" and isinstance(value, str):
            continue
        if key in _SCHEMA_MAP_KEYS and isinstance(value, dict):
            out[key] = {name: clean_schema(sub) for name, sub in value.items()}
        elif key in _SCHEMA_LIST_KEYS and isinstance(value, list):
            out[key] = [clean_schema(sub) for sub in value]
        elif key in _SCHEMA_KEYS:
            out[key] = clean_schema(value)
        else:
            out[key] = value
    return out


def _refs(schema: Any, found: set[str]) -> None:
    if isinstance(schema, dict):
        ref = schema.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            found.add(ref[8:])
        for value in schema.values():
            _refs(value, found)
    elif isinstance(schema, list):
        for value in schema:
            _refs(value, found)


def _recursive_defs(defs: Mapping[str, Any]) -> set[str]:
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
    if isinstance(schema, list):
        return [_substitute(item, defs, keep) for item in schema]
    if not isinstance(schema, dict):
        return schema
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/") and ref[8:] not in keep and ref[8:] in defs:
        target = _substitute(defs[ref[8:]], defs, keep)
        siblings = {k: _substitute(v, defs, keep) for k, v in schema.items() if k != "$ref"}
        return {**target, **siblings} if isinstance(target, dict) else target
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in _SCHEMA_MAP_KEYS and isinstance(value, dict):
            out[key] = {name: _substitute(sub, defs, keep) for name, sub in value.items()}
        elif key in _SCHEMA_LIST_KEYS or key in _SCHEMA_KEYS:
            out[key] = _substitute(value, defs, keep)
        else:
            out[key] = value
    return out


def inline_defs(schema: dict[str, Any]) -> dict[str, Any]:
    """Replace every `$ref` to a non-recursive definition by the definition itself.

    Many clients (Claude Desktop, several IDEs) cannot follow `$ref`. Recursive types cannot be inlined, so
    they stay in `$defs`, with their own non-recursive references inlined.
    """
    defs: dict[str, Any] = schema.get("$defs") or {}
    if not defs:
        return schema
    keep = _recursive_defs(defs)
    body = {k: v for k, v in schema.items() if k != "$defs"}
    result: dict[str, Any] = _substitute(body, defs, keep)
    if keep:
        result["$defs"] = {name: _substitute(defs[name], defs, keep) for name in sorted(keep)}
    return result


def is_object_like(annotation: Any) -> bool:
    """True for return types whose JSON form is an object: models, TypedDicts, dataclasses, `dict[str, T]`."""
    origin = get_origin(annotation)
    if origin is typing.Annotated:
        return is_object_like(get_args(annotation)[0])
    if isinstance(annotation, type):
        if issubclass(annotation, pydantic.BaseModel) or dataclasses.is_dataclass(annotation):
            return True
        if is_typeddict(annotation):
            return True
    if origin in (dict, Mapping, typing.Mapping, typing.Dict):  # noqa: UP006
        args = get_args(annotation)
        return not args or args[0] is str
    return is_typeddict(annotation)
