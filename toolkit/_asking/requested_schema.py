"""The spec's restricted `requestedSchema`: what an elicitation form may hold, checked field by field.

client/elicitation (`PrimitiveSchemaDefinition` in schema.ts) allows a flat object of string, number, integer and
boolean fields, single-select enums (plain, titled with `oneOf` const/title per SEP-1330, or the legacy
`enumNames`) and multi-select arrays of string choices (`items.enum`, or titled `items.anyOf`), each with an optional
default (SEP-1034). `check_requested_schema` says every way a schema leaves that subset, one sentence each: a form
made from a type and a raw schema are both held to it (`toolkit._asking.elicitation.Form`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["check_requested_schema"]

_FORMATS = frozenset({"email", "uri", "date", "date-time"})
_COMMON = frozenset({"type", "title", "description"})
# The keys each kind of field may have (schema.ts, 2025-11-25 = 2026-07-28; the JSON Schema does not close them).
_STRING_KEYS = _COMMON | {"minLength", "maxLength", "format", "default"}
_NUMBER_KEYS = _COMMON | {"minimum", "maximum", "default"}
_BOOLEAN_KEYS = _COMMON | {"default"}
_ENUM_KEYS = _COMMON | {"enum", "enumNames", "default"}
_TITLED_KEYS = _COMMON | {"oneOf", "default"}
_ARRAY_KEYS = _COMMON | {"minItems", "maxItems", "items", "default"}
_ROOT_KEYS = frozenset({"$schema", "type", "properties", "required"})
_HINTS = {
    "pattern": "patterns are not part of the elicitation subset (the spec's StringSchema has no `pattern`)",
    "exclusiveMinimum": "use ge= instead of gt=: the elicitation subset has only `minimum`",
    "exclusiveMaximum": "use le= instead of lt=: the elicitation subset has only `maximum`",
    "multipleOf": "`multipleOf` is not part of the elicitation subset",
    "uniqueItems": "`uniqueItems` is not part of the elicitation subset",
}


def check_requested_schema(schema: Mapping[str, Any]) -> list[str]:
    """Every way `schema` leaves the spec's restricted subset, one sentence each (empty: it is a valid form)."""
    problems: list[str] = []
    _check_root(schema, problems)
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        problems.append('requestedSchema: "properties" must be an object of fields')
        return problems
    for name, prop in properties.items():
        where = f"field {name}"
        if not isinstance(prop, Mapping):
            problems.append(f"{where}: must be a schema object")
            continue
        _check_field(prop, where, problems)
    _check_required(schema.get("required", []), properties, problems)
    return problems


def _check_root(schema: Mapping[str, Any], problems: list[str]) -> None:
    """The schema is an object schema with the root keys the subset has."""
    if schema.get("type") != "object":
        problems.append('requestedSchema: "type" must be "object"')
    extra = sorted(set(schema) - _ROOT_KEYS)
    if extra:
        problems.append(f"requestedSchema: {', '.join(extra)} not allowed (only $schema, type, properties, required)")


def _check_required(required: Any, properties: Mapping[str, Any], problems: list[str]) -> None:
    """`required` lists fields of the form, each once."""
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        problems.append('requestedSchema: "required" must be a list of field names')
        return
    missing = [r for r in required if r not in properties]
    if missing:
        problems.append(f"requestedSchema: required names unknown fields: {', '.join(missing)}")
    if len(set(required)) != len(required):
        problems.append("requestedSchema: required lists a field twice")


def _check_field(prop: Mapping[str, Any], where: str, problems: list[str]) -> None:
    """One field: its kind's own rules (`_FIELDS`), then the keys that kind may have."""
    field = _FIELDS.get(_field_kind(prop))
    if field is None:
        problems.append(
            f"{where}: type {prop.get('type')!r} cannot be a form field "
            "(string, number, integer, boolean, or an array of choices)"
        )
        return
    allowed, check = field
    check(prop, where, problems)
    _check_keys(prop, allowed, where, problems)


def _field_kind(prop: Mapping[str, Any]) -> str | None:
    """Which row of `_FIELDS` checks `prop`: its type, a string's by its choices; None for a type no field has."""
    kind = prop.get("type")
    if kind not in _FIELD_TYPES:
        return None
    if kind != "string":
        return str(kind)
    if "oneOf" in prop:
        return "titled"
    if "enum" in prop:
        return "enum"
    return "string"


def _check_keys(prop: Mapping[str, Any], allowed: frozenset[str], where: str, problems: list[str]) -> None:
    """The field has only the keys its kind `allowed` (with a hint for the usual mistakes), and text as text."""
    for key in sorted(set(prop) - allowed):
        hint = _HINTS.get(key)
        problems.append(f"{where}: {hint}" if hint else f"{where}: {key!r} is not allowed in a {prop['type']} field")
    for key in ("title", "description"):
        if key in prop and not isinstance(prop[key], str):
            problems.append(f"{where}: {key} must be a string")


def _check_titled(prop: Mapping[str, Any], where: str, problems: list[str]) -> None:
    """A single select of titled options (`oneOf` of const/title, SEP-1330), and a default among them."""
    _check_default(prop, where, _titled(prop["oneOf"], f"{where}: oneOf", problems), str, problems)


def _check_boolean(prop: Mapping[str, Any], where: str, problems: list[str]) -> None:
    """A boolean, and a boolean default."""
    _check_default(prop, where, None, bool, problems)


def _check_number(prop: Mapping[str, Any], where: str, problems: list[str]) -> None:
    for key in ("minimum", "maximum"):
        if key in prop and not _is_number(prop[key]):
            problems.append(f"{where}: {key} must be a number")
    _check_default(prop, where, None, int if prop["type"] == "integer" else (int, float), problems)


def _check_enum(prop: Mapping[str, Any], where: str, problems: list[str]) -> None:
    choices = _strings(prop["enum"], f"{where}: enum", problems)
    names = prop.get("enumNames")
    if names is not None and (
        not isinstance(names, list)
        or not all(isinstance(n, str) for n in names)
        or choices is None
        or len(names) != len(choices)
    ):
        problems.append(f"{where}: enumNames must be strings, one per enum value")
    _check_default(prop, where, choices, str, problems)


def _check_string(prop: Mapping[str, Any], where: str, problems: list[str]) -> None:
    fmt = prop.get("format")
    if fmt is not None and fmt not in _FORMATS:
        problems.append(f"{where}: format {fmt!r} is not one of email, uri, date, date-time")
    _check_ints(prop, ("minLength", "maxLength"), where, problems)
    _check_default(prop, where, None, str, problems)


def _check_array(prop: Mapping[str, Any], where: str, problems: list[str]) -> None:
    choices = _array_choices(prop.get("items"), where, problems)
    _check_ints(prop, ("minItems", "maxItems"), where, problems)
    if "default" in prop:
        default = prop["default"]
        if not isinstance(default, list) or not all(isinstance(d, str) for d in default):
            problems.append(f"{where}: default must be a list of choices")
        elif choices is not None and not set(default) <= set(choices):
            problems.append(f"{where}: default names values that are not among the choices")


def _strings(value: Any, where: str, problems: list[str]) -> list[str] | None:
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        problems.append(f"{where} must be a non-empty list of strings (choices are strings in elicitation)")
        return None
    if len(set(value)) != len(value):
        problems.append(f"{where} lists a value twice")
    return value


def _titled(value: Any, where: str, problems: list[str]) -> list[str] | None:
    if not isinstance(value, list) or not value:
        problems.append(f"{where} must be a non-empty list of {{const, title}}")
        return None
    consts: list[str] = []
    for option in value:
        if (
            not isinstance(option, Mapping)
            or set(option) != {"const", "title"}
            or not isinstance(option["const"], str)
            or not isinstance(option["title"], str)
        ):
            problems.append(f"{where}: each option must be exactly {{const: string, title: string}}")
            return None
        consts.append(option["const"])
    if len(set(consts)) != len(consts):
        problems.append(f"{where} lists a value twice")
    return consts


def _array_choices(items: Any, where: str, problems: list[str]) -> list[str] | None:
    if isinstance(items, Mapping) and set(items) == {"type", "enum"} and items["type"] == "string":
        return _strings(items["enum"], f"{where}: items.enum", problems)
    if isinstance(items, Mapping) and set(items) == {"anyOf"}:
        return _titled(items["anyOf"], f"{where}: items.anyOf", problems)
    problems.append(
        f"{where}: a multi-select's items must be {{type: string, enum: [...]}} or {{anyOf: [{{const, title}}]}}"
    )
    return None


def _check_default(
    prop: Mapping[str, Any], where: str, choices: list[str] | None, kind: Any, problems: list[str]
) -> None:
    if "default" not in prop:
        return
    default = prop["default"]
    if not isinstance(default, kind) or (kind is not bool and isinstance(default, bool)):
        problems.append(f"{where}: default has the wrong type for a {prop.get('type')} field")
    elif choices is not None and default not in choices:
        problems.append(f"{where}: default is not among the choices")


def _check_ints(prop: Mapping[str, Any], keys: tuple[str, ...], where: str, problems: list[str]) -> None:
    for key in keys:
        if key in prop and (not isinstance(prop[key], int) or isinstance(prop[key], bool) or prop[key] < 0):
            problems.append(f"{where}: {key} must be a non-negative integer")


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


_FIELD_TYPES = ("string", "number", "integer", "boolean", "array")
# The kinds of field: the keys each may have, and the check of its own rules.
_FIELDS: dict[str | None, tuple[frozenset[str], Callable[[Mapping[str, Any], str, list[str]], None]]] = {
    "titled": (_TITLED_KEYS, _check_titled),
    "enum": (_ENUM_KEYS, _check_enum),
    "string": (_STRING_KEYS, _check_string),
    "number": (_NUMBER_KEYS, _check_number),
    "integer": (_NUMBER_KEYS, _check_number),
    "boolean": (_BOOLEAN_KEYS, _check_boolean),
    "array": (_ARRAY_KEYS, _check_array),
}
