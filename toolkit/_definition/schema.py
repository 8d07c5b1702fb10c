"""Python types to JSON Schema (2020-12) and to pydantic-core validators.

Each distinct annotation is turned into a `TypeAdapter` once; its core schema and cleaned JSON schema are
memoised, so that decorating hundreds of tools that share `int`, `str` or a model costs one schema build per
type, not one per tool. A tool's argument validator is then one `SchemaValidator` over a typed dict of those
core schemas.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import json
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, get_args, get_origin

import pydantic
import pydantic_core
from pydantic import TypeAdapter
from pydantic.json_schema import GenerateJsonSchema
from pydantic_core import CoreSchema, core_schema
from typing_extensions import is_typeddict

from toolkit._jsonschema import (
    SCHEMA_KEYS,
    SCHEMA_LIST_KEYS,
    SCHEMA_MAP_KEYS,
    def_name,
    expand_root_ref,
    inline_defs,
    merge_defs,
)

from .signature import Param, cache_key, first_sentence, is_class, type_name

__all__ = [
    "OutputSchema",
    "TypeInfo",
    "clean_schema",
    "compact_optionals",
    "input_schema",
    "is_object_like",
    "json_string_params",
    "output_schema",
    "type_info",
]


@dataclass(frozen=True)
class TypeInfo:
    """What toolkit derives once from one annotation."""

    adapter: TypeAdapter[Any]
    core_schema: CoreSchema
    faithful: dict[str, Any]
    """The cleaned JSON schema: a template, never handed out (see `schema`)."""
    compact: dict[str, Any]
    """The same with its nested optionals compacted (see `compact_optionals`)."""
    faithful_json: str
    compact_json: str
    flat: bool
    """No value of the schema is a dict or a list, so a shallow copy is a private copy."""

    def schema(self, *, compact: bool = False) -> dict[str, Any]:
        """A private copy of the JSON schema, for a caller to modify."""
        if self.flat:
            return dict(self.compact if compact else self.faithful)
        # raw_decode skips json.loads' argument checks: a copy of a small schema in a fraction of the time.
        result: dict[str, Any] = _DECODER.raw_decode(self.compact_json if compact else self.faithful_json)[0]
        return result


_DECODER = json.JSONDecoder()
# Types shared by many tools (str, a common model) are derived once. Bounded, oldest out first: the keys hold the
# annotations, so an unbounded cache would keep alive every class ever defined in a function body (a test's, say).
_CACHE: dict[tuple[object, ...], TypeInfo] = {}
CACHE_SIZE = 1024


def type_info(annotation: Any, mode: typing.Literal["validation", "serialization"] = "validation") -> TypeInfo:
    """Build (or reuse) the adapter and JSON schema of `annotation`.

    Raises:
        pydantic.PydanticSchemaGenerationError: pydantic cannot handle the type.
        pydantic.errors.PydanticInvalidForJsonSchema: the type has no JSON schema.
    """
    key = cache_key(annotation, mode)
    cached = _CACHE.get(key) if key is not None else None
    if cached is not None:
        return cached
    adapter: TypeAdapter[Any] = TypeAdapter(annotation)
    # An output schema keeps its types' names (a generated client names its classes after them); an input schema,
    # which the model reads in every listing, does not.
    schema = clean_schema(adapter.json_schema(mode=mode), named=mode == "serialization")
    faithful_json = _dumps(schema)
    compact = json.loads(faithful_json)
    compact_optionals(compact)
    flat = not any(isinstance(value, (dict, list)) for value in schema.values())
    info = TypeInfo(adapter, adapter.core_schema, schema, compact, faithful_json, _dumps(compact), flat)
    if key is not None:
        if len(_CACHE) >= CACHE_SIZE:
            del _CACHE[next(iter(_CACHE))]
        _CACHE[key] = info
    return info


def _dumps(schema: dict[str, Any]) -> str:
    return json.dumps(schema, separators=(",", ":"), ensure_ascii=False)


def clean_schema(schema: Any, *, named: bool = False) -> Any:
    """Drop the `title` pydantic adds to every schema: it costs tokens and tells the model nothing.

    With `named`, the titles that name a type stay: the root's and each `$defs` entry's (a model's class name, as
    pydantic writes it), so that a client generated from an output schema names a model after itself.
    """
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "title" and isinstance(value, str) and not named:
            continue
        out[key] = _clean_value(key, value, named)
    return out


def _clean_value(key: str, value: Any, named: bool) -> Any:
    """`clean_schema` for the value of one keyword: the schemas it holds cleaned, anything else as it is."""
    if key in SCHEMA_MAP_KEYS and isinstance(value, dict):
        definitions = named and key == "$defs"
        return {name: clean_schema(sub, named=definitions) for name, sub in value.items()}
    if key in SCHEMA_LIST_KEYS and isinstance(value, list):
        return [clean_schema(sub) for sub in value]
    if key in SCHEMA_KEYS:
        return clean_schema(value)
    return value


def is_object_like(annotation: Any) -> bool:
    """True for return types whose JSON form is an object: models, TypedDicts, dataclasses, `dict[str, T]`."""
    origin = get_origin(annotation)
    if origin is typing.Annotated:
        return is_object_like(get_args(annotation)[0])
    if is_class(annotation):
        if issubclass(annotation, pydantic.BaseModel) or dataclasses.is_dataclass(annotation):
            return True
        if annotation is dict or annotation is Mapping:  # bare, like `typing.Dict`: `dict[Any, Any]`
            return True
        if is_typeddict(annotation):
            return True
    if origin in (dict, Mapping, typing.Mapping, typing.Dict):  # noqa: UP006
        args = get_args(annotation)
        return not args or args[0] is str
    return is_typeddict(annotation)


def input_schema(
    params: list[Param], *, inline: bool, optional_style: str, problems: list[str]
) -> tuple[dict[str, Any], pydantic_core.SchemaValidator]:
    """The tool's `inputSchema` and one validator for its whole `arguments` object.

    The validator is a typed dict of the (memoised) core schema of each parameter's type, rejecting extra keys.
    Problems (types without a schema, defaults that are not JSON) are appended to `problems`.
    """
    compact = optional_style == "compact"
    properties: dict[str, Any] = {}
    required: list[str] = []
    defs: dict[str, Any] = {}
    core_defs: dict[str, CoreSchema] = {}
    fields: dict[str, core_schema.TypedDictField] = {}
    for p in params:
        info = _param_type(p, problems)
        if info is None:
            continue
        inner = _hoisted(info.core_schema, core_defs)
        schema = info.schema(compact=compact)
        if not inline:
            schema = _as_ref(schema, inner)
        schema, fields[p.name] = _property(p, schema, info.adapter, inner, problems)
        merge_defs(schema, defs)
        properties[p.name] = schema
        if fields[p.name]["required"]:
            required.append(p.name)
    root = _object_schema(properties, required, defs)
    if compact:
        # Every property's own schema (and so every definition) is already compact: only the root's level is left.
        _compact_level(root)
    if defs and inline:
        root = inline_defs(root)
    return root, _arguments_validator(fields, core_defs)


def _param_type(p: Param, problems: list[str]) -> TypeInfo | None:
    """What toolkit derives from a parameter's type; None, with the problem reported, for a type without a schema."""
    try:
        return type_info(p.annotation)
    except Exception as exc:
        problems.append(f"parameter {p.name}: type {type_name(p.annotation)} has no JSON schema: {first_sentence(exc)}")
        return None


def _hoisted(core: CoreSchema, core_defs: dict[str, CoreSchema]) -> CoreSchema:
    """A parameter's core schema without its definitions, which go to `core_defs`: two parameters of one recursive
    type would each bring the same definitions, so they are held once, at the validator's root."""
    if core["type"] != "definitions":
        return core
    for definition in core["definitions"]:
        core_defs.setdefault(definition["ref"], definition)
    inner: CoreSchema = core["schema"]
    return inner


def _arguments_validator(
    fields: dict[str, core_schema.TypedDictField], core_defs: dict[str, CoreSchema]
) -> pydantic_core.SchemaValidator:
    """The validator of a whole `arguments` object: a typed dict of the parameters, closed to other keys."""
    validator_schema: CoreSchema = core_schema.typed_dict_schema(fields, extra_behavior="forbid")
    if core_defs:
        validator_schema = core_schema.definitions_schema(validator_schema, list(core_defs.values()))
    return pydantic_core.SchemaValidator(validator_schema)


def json_string_params(schema: Mapping[str, Any]) -> dict[str, frozenset[str]]:
    """The parameters a client may send as a JSON string, with the JSON types the parsed string may have.

    Several widely used clients send an object or array argument as a string holding its JSON. A parameter qualifies
    when its schema admits an object or an array and never a string (a string parameter is never parsed, and one
    that admits anything is not guessed at). Decided once, at decoration.
    """
    properties = schema.get("properties")
    defs = schema.get("$defs")
    defs = defs if isinstance(defs, Mapping) else {}
    out: dict[str, frozenset[str]] = {}
    for name, prop in properties.items() if isinstance(properties, Mapping) else ():
        kinds = _json_types(prop, defs, frozenset())
        if kinds is not None and "string" not in kinds and kinds & {"object", "array"}:
            out[name] = frozenset(kinds & {"object", "array"})
    return out


_JSON_TYPE_OF = {str: "string", bool: "boolean", int: "integer", float: "number", dict: "object", list: "array"}


def _json_types(schema: Any, defs: Mapping[str, Any], seen: frozenset[str]) -> frozenset[str] | None:
    """The JSON types `schema` admits, or None when it does not say (any type: nothing is guessed)."""
    if not isinstance(schema, Mapping):
        return None
    if isinstance(schema.get("$ref"), str):
        return _referred_types(schema, defs, seen)
    branches = schema.get("anyOf", schema.get("oneOf"))
    if isinstance(branches, list) and branches:
        return _union_types(branches, defs, seen)
    return frozenset(kind for kind in _declared_types(schema) if isinstance(kind, str)) or None


def _referred_types(schema: Mapping[str, Any], defs: Mapping[str, Any], seen: frozenset[str]) -> frozenset[str] | None:
    """The JSON types of the definition a `$ref` names; None for any other reference and for one met again on the way
    (a recursive type)."""
    name = def_name(schema)
    if name is None or name in seen:
        return None
    return _json_types(defs.get(name), defs, seen | {name})


def _union_types(branches: list[Any], defs: Mapping[str, Any], seen: frozenset[str]) -> frozenset[str] | None:
    """The JSON types any branch of a union admits; None when one branch admits any type."""
    kinds: frozenset[str] = frozenset()
    for branch in branches:
        found = _json_types(branch, defs, seen)
        if found is None:
            return None
        kinds |= found
    return kinds


def _declared_types(schema: Mapping[str, Any]) -> list[Any]:
    """What a schema's `type` says, else the types of its `enum`'s or `const`'s values; empty when none says."""
    kind = schema.get("type")
    if isinstance(kind, str):
        return [kind]
    if isinstance(kind, list):
        return kind
    if isinstance(schema.get("enum"), list):
        return [_JSON_TYPE_OF.get(type(value), "null") for value in schema["enum"]]
    if "const" in schema:
        return [_JSON_TYPE_OF.get(type(schema["const"]), "null")]
    return []


def _object_schema(properties: dict[str, Any], required: list[str], defs: dict[str, Any]) -> dict[str, Any]:
    """The root of an `inputSchema`: an object of the parameters, closed to others."""
    root: dict[str, Any] = {"type": "object"}
    if properties:
        root["properties"] = properties
    if required:
        root["required"] = required
    root["additionalProperties"] = False
    if defs:
        root["$defs"] = defs
    return root


def _property(
    p: Param, schema: dict[str, Any], adapter: TypeAdapter[Any], inner: CoreSchema, problems: list[str]
) -> tuple[dict[str, Any], core_schema.TypedDictField]:
    """One parameter's property schema (`schema`, a private copy of its type's, completed here) and validator field."""
    if p.description:
        schema["description"] = p.description
    if p.examples is not None:
        schema["examples"] = p.examples
    if p.default is inspect.Parameter.empty and p.factory is None:
        return schema, core_schema.typed_dict_field(inner, required=True)
    if p.factory is not None:
        return schema, core_schema.typed_dict_field(
            core_schema.with_default_schema(inner, default_factory=p.factory), required=False
        )
    try:
        schema["default"] = adapter.dump_python(p.default, mode="json", warnings=False)
    except Exception:
        problems.append(f"parameter {p.name}: default {p.default!r} is not JSON-serialisable")
    return schema, core_schema.typed_dict_field(
        core_schema.with_default_schema(inner, default=p.default), required=False
    )


@functools.cache
def _namer() -> GenerateJsonSchema:
    return GenerateJsonSchema()


def _as_ref(schema: dict[str, Any], core: CoreSchema) -> dict[str, Any]:
    """`inline_defs=False`: a parameter whose type is a model (a dataclass, a TypedDict, an enum) is a `$ref` to
    its definition, named as pydantic names the same type nested (`Address`, `Box_int_`). pydantic describes a
    type at the top of its own schema in place, so without this the one definition a user most expects in
    `$defs` would be the one inlined."""
    cls = core.get("cls")
    if "ref" not in core or not isinstance(cls, type):
        return schema
    name = _namer().normalize_name(cls.__name__)
    defs: dict[str, Any] = schema.pop("$defs", None) or {}
    if name in defs:  # a nested type of the same name: pydantic named them apart; keep the parameter inline
        return {**schema, "$defs": defs}
    return {"$ref": f"#/$defs/{name}", "$defs": {**defs, name: schema}}


def compact_optionals(schema: Any) -> None:
    """Describe every optional property whose default is null (`x: T | None = None`) as an optional `T`.

    `anyOf [T, null]` with `default: null` says nothing a client needs: not being required already says "may be
    left out", and clients such as Claude Desktop mishandle `anyOf` with `null` (MCP.md, pain point 4). The
    validator still accepts an explicit null. Applies at every depth, in place.
    """
    if isinstance(schema, list):
        for item in schema:
            compact_optionals(item)
        return
    if not isinstance(schema, dict):
        return
    _compact_level(schema)
    for key, value in schema.items():
        if key in SCHEMA_MAP_KEYS and isinstance(value, dict):
            for sub in value.values():
                compact_optionals(sub)
        elif key in SCHEMA_LIST_KEYS or key in SCHEMA_KEYS:
            compact_optionals(value)


def _compact_level(schema: dict[str, Any]) -> None:
    """`compact_optionals` for the properties of `schema` itself, not deeper."""
    properties = schema.get("properties")
    if isinstance(properties, dict):
        required = schema.get("required") or ()
        for name, sub in properties.items():
            if name not in required and isinstance(sub, dict) and "default" in sub and sub["default"] is None:
                _drop_null(sub)


def _drop_null(schema: dict[str, Any]) -> None:
    """Turn `anyOf [T, null]` with `default: null` into `T`, keeping the other keywords."""
    branches = schema.get("anyOf")
    if not isinstance(branches, list) or {"type": "null"} not in branches:
        return
    rest = [b for b in branches if b != {"type": "null"}]
    del schema["anyOf"], schema["default"]
    if len(rest) == 1 and isinstance(rest[0], dict):
        merged = {**rest[0], **schema}
        schema.clear()
        schema.update(merged)
    else:
        schema["anyOf"] = rest


class OutputSchema(typing.NamedTuple):
    """What a tool derives from its return annotation when it returns structured content."""

    adapter: TypeAdapter[Any]
    """Validates and dumps return values."""
    raw: dict[str, Any]
    """The schema of the return value itself."""
    wire: dict[str, Any]
    """The `outputSchema` clients see: `raw`, or `raw` wrapped as `{"result": ...}` for a non-object type."""
    wraps: bool


def output_schema(annotation: Any, *, inline: bool) -> OutputSchema:
    """The output schema of a return annotation (validation is the caller's choice: this always builds one).

    Raises:
        pydantic.PydanticSchemaGenerationError: pydantic cannot handle the type.
        pydantic.errors.PydanticInvalidForJsonSchema: the type has no JSON schema.
    """
    info = type_info(annotation, "serialization")
    raw = info.schema()
    if inline and "$defs" in raw:
        raw = inline_defs(raw)
    raw = expand_root_ref(raw)
    wraps = raw.get("type") != "object"
    if not wraps:
        return OutputSchema(info.adapter, raw, raw, False)
    body = {k: v for k, v in raw.items() if k != "$defs"}
    wire: dict[str, Any] = {"type": "object", "properties": {"result": body}, "required": ["result"]}
    if "$defs" in raw:
        wire["$defs"] = raw["$defs"]
    return OutputSchema(info.adapter, raw, wire, True)
