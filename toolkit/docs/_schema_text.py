"""JSON Schema in words: readable types, constraints, and example values that fit a schema."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["code_span", "constraints", "describe_type", "example_arguments"]


def code_span(text: str) -> str:
    """Inline code that survives a table cell in both GitHub Markdown and Python-Markdown."""
    if "|" not in text and "`" not in text:
        return f"`{text}`"
    escaped = html.escape(text, quote=False)
    for char in "|*_`[\\":
        escaped = escaped.replace(char, f"&#{ord(char)};")
    return f"<code>{escaped}</code>"


# -- readable types --------------------------------------------------------------------------------------------


def _bound(value: Any) -> str:
    return json.dumps(value)


# A number's bounds and the signs they read as, lower bounds first.
_BOUNDS = (("minimum", "≥"), ("exclusiveMinimum", ">"), ("maximum", "≤"), ("exclusiveMaximum", "<"))


def constraints(schema: Mapping[str, Any]) -> list[str]:
    """The schema's own constraints in words: bounds, lengths, pattern, format, item counts."""
    out = [f"{sign} {_bound(schema[key])}" for key, sign in _BOUNDS if key in schema]
    if "multipleOf" in schema:
        out.append(f"multiple of {_bound(schema['multipleOf'])}")
    out += _range(schema, "minLength", "maxLength", "characters")
    if "pattern" in schema:
        out.append(f"pattern {code_span(str(schema['pattern']))}")
    if "format" in schema:
        out.append(f"format {code_span(str(schema['format']))}")
    out += _range(schema, "minItems", "maxItems", "items")
    if schema.get("uniqueItems"):
        out.append("unique items")
    out += _range(schema, "minProperties", "maxProperties", "properties")
    if schema.get("deprecated"):
        out.append("deprecated")
    return out


def _range(schema: Mapping[str, Any], low_key: str, high_key: str, unit: str) -> list[str]:
    low, high = schema.get(low_key), schema.get(high_key)
    if low is not None and high is not None:
        return [f"exactly {_count(low, unit)}" if low == high else f"{low}-{high} {unit}"]
    if low is not None:
        return [f"at least {_count(low, unit)}"] if low else []
    if high is not None:
        return [f"at most {_count(high, unit)}"]
    return []


def _count(n: Any, unit: str) -> str:
    singular = {"characters": "character", "items": "item", "properties": "property"}
    return f"{n} {singular[unit] if n == 1 else unit}"


def _inline_bounds(schema: Mapping[str, Any]) -> str:
    """Constraints short enough to sit inside a type: `integer ≥ 0`, `string (date-time)`."""
    parts = [c for c in constraints(schema) if c[0] in "≥>≤<"]
    if "format" in schema:
        parts.append(f"({schema['format']})")
    return " " + ", ".join(parts).replace(", (", " (") if parts else ""


def describe_type(schema: Any, *, bounds: bool = True, fields: bool = False) -> str:
    """A readable type: `list[string]`, `integer ≥ 0`, `"a" | "b"`, `dict[string, number]`, `Node | null`.

    Objects with properties read as `object`; their fields are listed separately. `bounds=False` leaves out
    the top level's own constraints (a table shows them in their own column). `fields=True` writes an object's
    fields in it instead, for a one-line listing: `{name: string, color?: string}` (`?`: not required).
    """
    if not isinstance(schema, Mapping):
        return "nothing" if schema is False else "any"
    combined = _describe_combination(schema, bounds=bounds, fields=fields)
    if combined is not None:
        return combined
    kind = schema.get("type")
    if kind is None and "properties" in schema:
        kind = "object"
    if not isinstance(kind, str):
        return "any"
    if kind == "array":
        return _describe_array(schema, fields=fields)
    if kind == "object":
        return _describe_object(schema, fields=fields)
    return kind + (_inline_bounds(schema) if bounds else "")


def _describe_array(schema: Mapping[str, Any], *, fields: bool) -> str:
    prefix = schema.get("prefixItems")
    if isinstance(prefix, list):
        return f"tuple[{', '.join(describe_type(item, fields=fields) for item in prefix)}]"
    return f"list[{describe_type(schema.get('items', True), fields=fields)}]"


def _describe_object(schema: Mapping[str, Any], *, fields: bool) -> str:
    """`object`, its fields with `fields=True` (`{name: string, color?: string}`), or a map's `dict[string, T]`."""
    properties = schema.get("properties")
    extra = schema.get("additionalProperties")
    if fields and isinstance(properties, Mapping) and properties:
        return _listed_fields(properties, set(schema.get("required") or ()))
    if not properties and isinstance(extra, Mapping) and extra:
        return f"dict[string, {describe_type(extra, fields=fields)}]"
    return "object"


def _listed_fields(properties: Mapping[str, Any], required: set[str]) -> str:
    """An object's fields on one line, `?` after those not required: `{name: string, color?: string}`."""
    listed = (f"{k}{'' if k in required else '?'}: {describe_type(v, fields=True)}" for k, v in properties.items())
    return "{" + ", ".join(listed) + "}"


def _describe_combination(schema: Mapping[str, Any], *, bounds: bool, fields: bool) -> str | None:
    """The readable form of `$ref`, `const`, `enum`, `anyOf`/`oneOf`, one-item `allOf` and type lists."""
    for describe in _COMBINATIONS:
        described = describe(schema, bounds, fields)
        if described is not None:
            return described
    return None


def _describe_ref(schema: Mapping[str, Any], _bounds: bool, _fields: bool) -> str | None:
    """A `$ref` by the name of the definition it points to: `#/$defs/Node` reads `Node`."""
    ref = schema.get("$ref")
    return ref.rsplit("/", 1)[-1] if isinstance(ref, str) else None


def _describe_values(schema: Mapping[str, Any], _bounds: bool, _fields: bool) -> str | None:
    """A `const` or an `enum` as its values in JSON: `"a" | "b"` (`nothing` for an empty enum)."""
    values = [schema["const"]] if "const" in schema else schema.get("enum")
    if not isinstance(values, list):
        return None
    return " | ".join(json.dumps(v, ensure_ascii=False) for v in values) or "nothing"


def _describe_branches(schema: Mapping[str, Any], _bounds: bool, fields: bool) -> str | None:
    """An `anyOf` (or else a `oneOf`) as its branches' types, each once: `string | null`."""
    branches = schema.get("anyOf", schema.get("oneOf"))
    if not isinstance(branches, list):
        return None
    return " | ".join(_dedupe(describe_type(branch, fields=fields) for branch in branches))


def _describe_all_of(schema: Mapping[str, Any], bounds: bool, fields: bool) -> str | None:
    """A one-item `allOf` (pydantic's way to add a description to a `$ref`) as its item, with the schema's own keys."""
    all_of = schema.get("allOf")
    if not isinstance(all_of, list) or len(all_of) != 1:
        return None
    merged = {k: v for k, v in schema.items() if k != "allOf"}
    return describe_type({**all_of[0], **merged}, bounds=bounds, fields=fields)


def _describe_type_list(schema: Mapping[str, Any], bounds: bool, fields: bool) -> str | None:
    """A list of types as each type of the schema in turn: `["string", "null"]` reads `string | null`."""
    kinds = schema.get("type")
    if not isinstance(kinds, list):
        return None
    return " | ".join(describe_type({**schema, "type": k}, bounds=bounds, fields=fields) for k in kinds)


# The first that applies describes the schema: a `$ref` beside a description is the reference, a `const` beside its
# `type` is the value.
_COMBINATIONS: tuple[Callable[[Mapping[str, Any], bool, bool], str | None], ...] = (
    _describe_ref,
    _describe_values,
    _describe_branches,
    _describe_all_of,
    _describe_type_list,
)


def _dedupe(items: Any) -> list[str]:
    seen: dict[str, None] = {}
    for item in items:
        seen.setdefault(item, None)
    return list(seen)


# -- example call ----------------------------------------------------------------------------------------------

_FORMAT_EXAMPLES = {
    "date-time": "2025-01-01T12:00:00Z",
    "date": "2025-01-01",
    "time": "12:00:00",
    "duration": "PT1H",
    "email": "user@example.com",
    "uri": "https://example.com",
    "url": "https://example.com",
    "uuid": "123e4567-e89b-12d3-a456-426614174000",
    "ipv4": "192.0.2.1",
    "ipv6": "2001:db8::1",
    "hostname": "example.com",
}


def example_arguments(schema: Mapping[str, Any]) -> dict[str, Any]:
    """Arguments for an example `tools/call`: every required parameter, and optional ones that have examples.

    Values come from the schema's `examples`, then `default`, `const` or the first `enum` value, then a value
    of the right type that respects the bounds.
    """
    value = _example_object(schema, schema.get("$defs") or {}, depth=0)
    return value if isinstance(value, dict) else {}


def _example_object(schema: Mapping[str, Any], defs: Mapping[str, Any], depth: int) -> dict[str, Any]:
    properties: Mapping[str, Any] = schema.get("properties") or {}
    required = set(schema.get("required") or ())
    out: dict[str, Any] = {}
    for name, sub in properties.items():
        if name in required or (isinstance(sub, Mapping) and sub.get("examples")):
            out[name] = _example(sub, defs, depth + 1)
    return out


_NO_VALUE = object()


def _example(schema: Any, defs: Mapping[str, Any], depth: int) -> Any:
    if not isinstance(schema, Mapping) or depth > 8:
        return None
    given = _given_example(schema, defs, depth)
    if given is not _NO_VALUE:
        return given
    make = _example_maker(schema)
    if make is None:
        return None
    return make(schema, defs, depth)


def _example_maker(schema: Mapping[str, Any]) -> Callable[[Mapping[str, Any], Mapping[str, Any], int], Any] | None:
    """What makes an example of the schema's type: of its type, the first that is not null of a list of types, or
    `object` for a typeless schema with properties; None for a type it does not know."""
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind is None and "properties" in schema:
        kind = "object"
    return _EXAMPLES_BY_TYPE.get(kind) if isinstance(kind, str) else None


def _example_string(schema: Mapping[str, Any], defs: Mapping[str, Any], depth: int) -> str:
    described = _described_example(schema)
    if described is not None:
        return described
    text = _FORMAT_EXAMPLES.get(schema.get("format", ""), "example").ljust(schema.get("minLength", 0), "x")
    return text[: schema["maxLength"]] if "maxLength" in schema else text


# "such as `(2 + 3) * 4`", "e.g. `Lisbon`", "for example `a.txt`": the example a description gives in code.
_GIVEN_IN_TEXT = re.compile(r"(?:\be\.g\.,?|\bsuch as|\bfor example,?)\s+`([^`]+)`", re.IGNORECASE)


def _described_example(schema: Mapping[str, Any]) -> str | None:
    """The example a string's description gives in code (`such as `(2 + 3) * 4``), if it fits the length bounds:
    a better example than a made-up `"example"`, which an expression, a query or a path would refuse."""
    description = schema.get("description")
    found = _GIVEN_IN_TEXT.search(description) if isinstance(description, str) else None
    if found is None or "format" in schema or "pattern" in schema:
        return None
    text = found.group(1)
    fits = schema.get("minLength", 0) <= len(text) <= schema.get("maxLength", len(text))
    return text if fits else None


def _example_array(schema: Mapping[str, Any], defs: Mapping[str, Any], depth: int) -> list[Any]:
    if isinstance(schema.get("prefixItems"), list):
        return [_example(item, defs, depth + 1) for item in schema["prefixItems"]]
    return [_example(schema.get("items", {}), defs, depth + 1)] * max(1, schema.get("minItems", 1))


_EXAMPLES_BY_TYPE: dict[str, Callable[[Mapping[str, Any], Mapping[str, Any], int], Any]] = {
    "integer": lambda schema, _defs, _depth: _example_number(schema, integer=True),
    "number": lambda schema, _defs, _depth: _example_number(schema, integer=False),
    "string": _example_string,
    "boolean": lambda _schema, _defs, _depth: True,
    "array": _example_array,
    "object": _example_object,
}


def _given_example(schema: Mapping[str, Any], defs: Mapping[str, Any], depth: int) -> Any:
    """A value the schema spells out (`examples`, `default`, `const`, `enum`), or one of a `$ref`/`anyOf`."""
    spelled = _spelled_out(schema)
    if spelled is not _NO_VALUE:
        return spelled
    return _example_of_another(schema, defs, depth)


def _spelled_out(schema: Mapping[str, Any]) -> Any:
    """The first of the schema's `examples`, its `default`, its `const`, or its first `enum` value, in that order;
    `_NO_VALUE` when it spells out none."""
    examples = schema.get("examples")
    if isinstance(examples, list) and examples:
        return examples[0]
    for key in ("default", "const"):
        if key in schema:
            return schema[key]
    values = schema.get("enum")
    if isinstance(values, list) and values:
        return values[0]
    return _NO_VALUE


def _example_of_another(schema: Mapping[str, Any], defs: Mapping[str, Any], depth: int) -> Any:
    """An example of the schema a `$ref` points to, or of the first branch of an `anyOf` (else a `oneOf`) that is
    not null; `_NO_VALUE` when the schema is neither."""
    ref = schema.get("$ref")
    if isinstance(ref, str):
        return _example(defs.get(ref.rsplit("/", 1)[-1], {}), defs, depth + 1)
    for key in ("anyOf", "oneOf"):
        branches = [b for b in schema.get(key) or () if isinstance(b, Mapping) and b.get("type") != "null"]
        if branches:
            return _example(branches[0], defs, depth + 1)
    return _NO_VALUE


def _example_number(schema: Mapping[str, Any], *, integer: bool) -> float | int:
    step = 1 if integer else 0.5
    value: float = 1
    if "minimum" in schema:
        value = schema["minimum"]
    elif "exclusiveMinimum" in schema:
        value = schema["exclusiveMinimum"] + step
    if "maximum" in schema and value > schema["maximum"]:
        value = schema["maximum"]
    elif "exclusiveMaximum" in schema and value >= schema["exclusiveMaximum"]:
        value = schema["exclusiveMaximum"] - step
    return int(value) if integer else value
