"""Elicitation forms: Python types to the spec's restricted `requestedSchema`, checked once; answers validated back.

A form is made from a pydantic model, a dataclass or a TypedDict of flat fields, or from a raw `requestedSchema`;
either is held to the spec's subset (`toolkit._asking.requested_schema`), and anything outside it (nesting,
patterns, exclusive bounds, non-string choices) is refused when the form is built, every problem of a class in one
error.
"""

from __future__ import annotations

import dataclasses
import datetime
import functools
import types
import typing
import weakref
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Generic, Literal, get_origin

import pydantic
import pydantic_core
from pydantic import TypeAdapter
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import CoreSchema, core_schema
from typing_extensions import TypeVar, is_typeddict

from toolkit._errors import ElicitationError, ToolDefinitionError

from .answer import ACTIONS, Action
from .requested_schema import check_requested_schema

__all__ = [
    "Choices",
    "ElicitationSchemaError",
    "Form",
    "empty_form",
    "form_of",
]

T = TypeVar("T", default=Any)


class ElicitationSchemaError(ToolDefinitionError):
    """A type or schema cannot be an elicitation form. Lists every problem at once, naming the form's class.

    Attributes:
        qualname: The qualified name of the class (`requestedSchema` for a raw dict).
        problems: One sentence per problem.
    """

    def __init__(self, qualname: str, problems: list[str]) -> None:
        super().__init__(qualname, problems)
        lines = "\n".join(f"  - {p}" for p in problems)
        self.args = (f"cannot make an elicitation form of {qualname}:\n{lines}",)

    def __str__(self) -> str:
        return str(self.args[0])


class Choices:
    """Titled options for a field: `Annotated[str, Choices({"#f00": "Red", "#0f0": "Green"})]`.

    On a `str` field the form offers one of them (`oneOf` of `const`/`title`, SEP-1330); on `list[str]` any number
    of them (`items.anyOf`). `legacy=True` sends a single select as `enum` + `enumNames` instead, for clients that
    predate SEP-1330 (2025-06-18 clients get that shape anyway). The answer is validated to be one of the keys.

    Args:
        options: Value to title, in display order (a mapping, or `(value, title)` pairs).
        legacy: Use the deprecated `enumNames` form.
    """

    __slots__ = ("legacy", "options")

    def __init__(self, options: Mapping[str, str] | Sequence[tuple[str, str]], *, legacy: bool = False) -> None:
        self.options: dict[str, str] = dict(options)
        self.legacy = legacy

    def __repr__(self) -> str:
        return f"Choices({self.options!r}{', legacy=True' if self.legacy else ''})"

    def __get_pydantic_core_schema__(self, source: Any, handler: pydantic.GetCoreSchemaHandler) -> CoreSchema:
        choice = core_schema.literal_schema(list(self.options))
        if get_origin(source) in (list, set, frozenset, Sequence) or source in (list, set, frozenset):
            return core_schema.list_schema(choice)
        return choice

    def __get_pydantic_json_schema__(
        self, schema: CoreSchema, handler: pydantic.GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        titled = [{"const": value, "title": title} for value, title in self.options.items()]
        if schema["type"] == "list":
            return {"type": "array", "items": {"anyOf": titled}}
        if self.legacy:
            return {"type": "string", "enum": list(self.options), "enumNames": list(self.options.values())}
        return {"type": "string", "oneOf": titled}


class _FormSchema(GenerateJsonSchema):
    """Field titles only where the code gives one: on a form they are labels, and "Name" for `name` adds nothing."""

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False


class Form(Generic[T]):
    """An elicitation form made once from a type, checked against the spec's subset; validates answers into it.

    `schema` is a pydantic model, a dataclass or a TypedDict of flat fields (`str`, `int`, `float`, `bool`,
    `date`/`datetime`, `Literal`/`Enum` choices, a `list` of choices for multi-select, `X | None = None` for an
    optional field; descriptions from `Field(description=...)`; titles from `Field(title=...)`;
    [`Choices`][toolkit.Choices] for titled options), or a raw `requestedSchema` dict, sent as given.

    Build forms at module level (`CONTACT = Form(Contact)`) to get schema errors at import;
    [`ctx.elicit`][toolkit.Context.elicit] builds (and keeps) one on first use otherwise.

    Raises:
        ElicitationSchemaError: the type or schema is outside the subset; every problem is listed.
    """

    __slots__ = ("_adapter", "_defaults", "_raw", "name", "requested_schema")

    requested_schema: dict[str, Any]
    """The `requestedSchema` sent to clients of 2025-11-25 and later."""

    def __init__(self, schema: type[T] | Mapping[str, Any]) -> None:
        if isinstance(schema, Mapping):
            self.name = "requestedSchema"
            self._raw = True
            self.requested_schema = dict(schema)
            problems = check_requested_schema(self.requested_schema)
            if problems:
                raise ElicitationSchemaError(self.name, problems)
            self._adapter: TypeAdapter[Any] = TypeAdapter(_model_of(self.requested_schema))
        else:
            self.name = getattr(schema, "__qualname__", repr(schema))
            self._raw = False
            self.requested_schema, self._adapter = _compile(schema, self.name)
        self._defaults = {
            name: prop["default"] for name, prop in self.requested_schema["properties"].items() if "default" in prop
        }

    def __repr__(self) -> str:
        return f"Form({self.name})"

    @property
    def fields(self) -> dict[str, dict[str, Any]]:
        """The form's fields by wire name: each one's property schema."""
        properties: dict[str, dict[str, Any]] = self.requested_schema["properties"]
        return properties

    @property
    def required(self) -> list[str]:
        """The wire names of the fields an accepted answer must have."""
        return list(self.requested_schema.get("required", ()))

    def validate(self, content: Any) -> T:
        """The accepted answer as an instance of the form's type (a dict for a raw schema), defaults filled in.

        Raises:
            ElicitationError: the content does not fit; the message names the fields, never their values.
        """
        if not isinstance(content, Mapping):
            raise ElicitationError("the client accepted the form but sent no content object")
        try:
            value = self._adapter.validate_python(dict(content))
        except pydantic_core.ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(part) for part in err['loc']) or 'content'}: {err['msg']}"
                for err in exc.errors(include_url=False, include_input=False)
            )
            raise ElicitationError(f"the answer to the form does not fit it: {problems}") from None
        if self._raw:
            # A raw schema's optional fields without a default stay absent, as the user left them.
            dumped: dict[str, Any] = value.model_dump(mode="json")
            return {k: v for k, v in dumped.items() if k in content or k in self._defaults}  # type: ignore[return-value]
        return typing.cast("T", value)

    def defaults(self) -> dict[str, Any]:
        """The content of an answer that accepts every default (what a scripted `"accept"` sends)."""
        return dict(self._defaults)

    def params(self, message: str, version: str) -> dict[str, Any]:
        """The `elicitation/create` params for a protocol revision.

        2025-11-25 and later: `mode: "form"` and the schema as it is. 2025-06-18 knows neither `mode`, titled
        `oneOf` choices (sent as `enum` + `enumNames`), defaults other than boolean ones, nor multi-select fields.

        Raises:
            ValueError: the revision cannot carry this form (before 2025-06-18, or a multi-select on 2025-06-18).
        """
        if version >= "2025-11-25":
            return {"mode": "form", "message": message, "requestedSchema": self.requested_schema}
        if version < "2025-06-18":
            raise ValueError(f"protocol {version} has no elicitation (it arrived in 2025-06-18)")
        return {"message": message, "requestedSchema": self._schema_of_2025_06_18(version)}

    def _schema_of_2025_06_18(self, version: str) -> dict[str, Any]:
        """The form as 2025-06-18 knows it: each field reshaped by `_field_of_2025_06_18`.

        Raises:
            ValueError: a multi-select field, which it cannot carry.
        """
        properties = {name: _field_of_2025_06_18(name, prop, version) for name, prop in self.fields.items()}
        schema: dict[str, Any] = {"type": "object", "properties": properties}
        if "required" in self.requested_schema:
            schema["required"] = self.requested_schema["required"]
        return schema


def _field_of_2025_06_18(name: str, prop: dict[str, Any], version: str) -> dict[str, Any]:
    """One field as 2025-06-18 knows it: titled choices as `enum` + `enumNames`, no default but a boolean's.

    Raises:
        ValueError: a multi-select field.
    """
    if prop.get("type") == "array":
        raise ValueError(f"field {name!r} is a multi-select, which protocol {version} cannot ask for")
    shaped = {k: v for k, v in prop.items() if k != "default" or prop.get("type") == "boolean"}
    if "oneOf" in shaped:
        options = shaped.pop("oneOf")
        shaped["enum"] = [o["const"] for o in options]
        shaped["enumNames"] = [o["title"] for o in options]
    return shaped


@functools.cache
def empty_form() -> Form[dict[str, Any]]:
    """A form without fields: the buttons (accept, decline, cancel) are the answer. `@tool(confirm=...)` asks it."""
    return Form({"type": "object", "properties": {}})


_FORMS: weakref.WeakKeyDictionary[type, Form[Any]] = weakref.WeakKeyDictionary()


def form_of(schema: type[T] | Form[T] | Mapping[str, Any]) -> Form[T]:
    """The form for `schema`: itself for a `Form`, built once per class, built each time for a raw dict.

    Raises:
        ElicitationSchemaError: the type or schema cannot be a form.
        TypeError: `schema` is none of a class, a `Form` or a mapping.
    """
    if isinstance(schema, Form):
        return schema
    if isinstance(schema, Mapping):
        return Form(schema)
    # `list[int]` is no class, though Python 3.10 says it is an instance of `type`.
    if isinstance(schema, types.GenericAlias) or not isinstance(schema, type):
        raise TypeError(
            f"an elicitation schema is a pydantic model, a dataclass, a TypedDict, a Form or a requestedSchema dict, "
            f"not {schema!r}"
        )
    form = _FORMS.get(schema)
    if form is None:
        form = _FORMS[schema] = Form(schema)
    return form


# -- compiling Python types -----------------------------------------------------------------------------


def _compile(schema: type[Any], name: str) -> tuple[dict[str, Any], TypeAdapter[Any]]:
    """The requestedSchema of a form type, and the adapter that validates answers into it.

    Raises:
        ElicitationSchemaError: the type is no form type, or its fields leave the spec's subset (every problem).
    """
    if not _is_form_type(schema):
        raise ElicitationSchemaError(
            name, ["a form is a pydantic model, a dataclass or a TypedDict of flat fields (or a requestedSchema dict)"]
        )
    try:
        adapter: TypeAdapter[Any] = TypeAdapter(schema)
        generated = adapter.json_schema(schema_generator=_FormSchema)
    except pydantic.PydanticUserError as exc:
        raise ElicitationSchemaError(name, [f"no JSON schema: {str(exc).splitlines()[0]}"]) from None
    problems: list[str] = []
    result = _flat_schema(generated, problems)
    problems.extend(check_requested_schema(result))
    if problems:
        raise ElicitationSchemaError(name, problems)
    return result, adapter


def _is_form_type(schema: type[Any]) -> bool:
    """Whether `schema` is a pydantic model, a dataclass or a TypedDict."""
    if isinstance(schema, type) and issubclass(schema, pydantic.BaseModel):
        return True
    return dataclasses.is_dataclass(schema) or is_typeddict(schema)


def _flat_schema(generated: dict[str, Any], problems: list[str]) -> dict[str, Any]:
    """A requestedSchema of pydantic's JSON schema for a form type: each field flattened, those that cannot be
    flattened left out (and reported in `problems`)."""
    defs = generated.get("$defs", {})
    properties: dict[str, Any] = {}
    for field, prop in (generated.get("properties") or {}).items():
        try:
            properties[field] = _flatten(prop, defs)
        except _NotAField as exc:
            problems.append(f"field {field}: {exc}")
    result: dict[str, Any] = {"type": "object", "properties": properties}
    required = [r for r in generated.get("required", ()) if r in properties]
    if required:
        result["required"] = required
    return result


class _NotAField(Exception):
    """A property of a form type cannot be a form field; the message says why."""


def _flatten(prop: dict[str, Any], defs: Mapping[str, Any]) -> dict[str, Any]:
    """One property, with `$ref`s inlined, the null branch of an optional dropped, and the subset's hints.

    Raises:
        _NotAField: a union, a secret, a list without choices, or a nested object.
    """
    prop = _one_type(_inline(prop, defs), defs)
    if prop.get("format") == "password" or prop.get("writeOnly"):
        raise _NotAField(
            "a secret cannot be asked in a form (the spec forbids passwords, keys and tokens in form mode); "
            "use ctx.elicit_url() to collect it out of band"
        )
    _const_as_enum(prop)
    if prop.get("type") == "array":
        _flatten_choices(prop, defs)
    if prop.get("type") == "object" or "properties" in prop:
        raise _NotAField("nested objects cannot be form fields (the spec allows only flat forms)")
    return prop


def _one_type(prop: dict[str, Any], defs: Mapping[str, Any]) -> dict[str, Any]:
    """An optional's property (`anyOf` of a type and null) as the type's, without the `None` default; any other
    property as it is.

    Raises:
        _NotAField: a union of several types.
    """
    branches = prop.get("anyOf")
    if not isinstance(branches, list) or "type" in prop:
        return prop
    real = [b for b in branches if b != {"type": "null"}]
    if len(real) != 1:
        raise _NotAField("a union of several types cannot be a form field (one type per field)")
    merged = {**{k: v for k, v in prop.items() if k != "anyOf"}, **_inline(real[0], defs)}
    if merged.get("default", 0) is None:
        del merged["default"]
    return merged


def _const_as_enum(prop: dict[str, Any]) -> None:
    """A `const` (pydantic's for a one-value `Literal`) as a one-value `enum`, in place."""
    if "const" in prop and "enum" not in prop:
        prop["enum"] = [prop.pop("const")]


def _flatten_choices(prop: dict[str, Any], defs: Mapping[str, Any]) -> None:
    """A multi-select's items inlined in place, `const` as a one-value `enum`.

    Raises:
        _NotAField: the items have no choices.
    """
    prop.pop("uniqueItems", None)  # pydantic's for `set[...]`: a multi-select never repeats a choice anyway
    items = prop.get("items")
    if isinstance(items, dict):
        prop["items"] = items = _inline(items, defs)
        _const_as_enum(items)
    if not isinstance(items, dict) or not ("enum" in items or "anyOf" in items):
        raise _NotAField("a list field needs its choices (list[Literal[...]], list[SomeEnum], Choices)")


def _inline(prop: dict[str, Any], defs: Mapping[str, Any]) -> dict[str, Any]:
    ref = prop.get("$ref")
    if not isinstance(ref, str) or not ref.startswith("#/$defs/"):
        return dict(prop)
    target = {k: v for k, v in defs.get(ref.removeprefix("#/$defs/"), {}).items() if k != "title"}
    return {**target, **{k: v for k, v in prop.items() if k != "$ref"}}


def _model_of(schema: Mapping[str, Any]) -> type[pydantic.BaseModel]:
    """A model that validates answers to a raw (already checked) requestedSchema: one validation path for all forms."""
    required = set(schema.get("required", ()))
    fields: dict[str, Any] = {}
    for name, prop in schema["properties"].items():
        annotation = _annotation_of(prop)
        default = prop.get("default", None)
        fields[name] = (annotation, ...) if name in required else (annotation | None, default)
    model: type[pydantic.BaseModel] = pydantic.create_model("RequestedSchema", **fields)
    return model


def _annotation_of(prop: Mapping[str, Any]) -> Any:
    """The type an answer to one field of a checked requestedSchema is validated as, by the field's type."""
    annotation = _ANNOTATIONS.get(prop["type"], _boolean)
    return annotation(prop)


def _choice_values(schema: Mapping[str, Any], titled: str) -> list[str]:
    """The values of a choice: its `enum`, or the `const`s of its titled options (under `titled`)."""
    if "enum" in schema:
        return list(schema["enum"])
    return [option["const"] for option in schema[titled]]


def _constrained(base: Any, **constraints: Any) -> Any:
    """`base` with the constraints that are given (not None)."""
    return typing.Annotated[base, pydantic.Field(**{k: v for k, v in constraints.items() if v is not None})]


def _array(prop: Mapping[str, Any]) -> Any:
    """A multi-select: a list of its choices, as many as `minItems`/`maxItems` allow."""
    values = _choice_values(prop["items"], "anyOf")
    choices: Any = list[Literal[tuple(values)]]  # type: ignore[misc]
    return _constrained(choices, min_length=prop.get("minItems"), max_length=prop.get("maxItems"))


def _string(prop: Mapping[str, Any]) -> Any:
    """A single select (one of its choices), or a string: a date or date-time by its format, within its lengths."""
    if "enum" in prop or "oneOf" in prop:
        return Literal[tuple(_choice_values(prop, "oneOf"))]
    base = {"date": datetime.date, "date-time": datetime.datetime}.get(prop.get("format", ""), str)
    return _constrained(base, min_length=prop.get("minLength"), max_length=prop.get("maxLength"))


def _integer(prop: Mapping[str, Any]) -> Any:
    """An integer within its bounds."""
    return _constrained(int, ge=prop.get("minimum"), le=prop.get("maximum"))


def _number(prop: Mapping[str, Any]) -> Any:
    """A number within its bounds."""
    return _constrained(float, ge=prop.get("minimum"), le=prop.get("maximum"))


def _boolean(prop: Mapping[str, Any]) -> Any:
    """A boolean."""
    return bool


_ANNOTATIONS: dict[str, Callable[[Mapping[str, Any]], Any]] = {
    "array": _array,
    "string": _string,
    "integer": _integer,
    "number": _number,
    "boolean": _boolean,
}


# -- the answer -------------------------------------------------------------------------------------------


def parse_answer(raw: Any) -> tuple[Action, dict[str, Any] | None]:
    """The action and content of a client's `ElicitResult`.

    The official JSON Schema types content numbers as integers (a bug of the generated schema; schema.ts says
    `number`), so answers are checked here, never against it.

    Raises:
        ValueError: not an object with a known action, or content that is not an object of form values.
    """
    if not isinstance(raw, Mapping) or raw.get("action") not in ACTIONS:
        raise ValueError("an elicitation answer must be an object whose action is accept, decline or cancel")
    content = raw.get("content")
    if content is not None and not isinstance(content, Mapping):
        raise ValueError("an elicitation answer's content must be an object")
    return raw["action"], dict(content) if content is not None else None
