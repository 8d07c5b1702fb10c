"""Elicitation forms: Python types to the spec's restricted requestedSchema, whole schemas compared; answers back."""

from __future__ import annotations

import dataclasses
import datetime
import enum
import json
from pathlib import Path
from typing import Annotated, Any, Literal

import jsonschema
import pydantic
import pytest
from pydantic import BaseModel, Field
from typing_extensions import NotRequired, TypedDict

from toolkit import Choices, ElicitationError, ElicitationSchemaError, ElicitResult, Form
from toolkit._asking.elicitation import form_of, parse_answer

SCHEMAS = Path(__file__).parents[1] / "mcp_schema"


def primitive_validator(version: str) -> jsonschema.Draft202012Validator:
    """Validates one field against the revision's `PrimitiveSchemaDefinition`."""
    schema = json.loads((SCHEMAS / f"{version}.json").read_text())
    defs = "$defs" if "$defs" in schema else "definitions"
    return jsonschema.Draft202012Validator({**schema, "$ref": f"#/{defs}/PrimitiveSchemaDefinition"})


def assert_valid_form(schema: dict[str, Any], version: str = "2025-11-25") -> None:
    validator = primitive_validator(version)
    for prop in schema["properties"].values():
        validator.validate(prop)


class Status(str, enum.Enum):
    ACTIVE = "active"
    INACTIVE = "inactive"
    PENDING = "pending"


class Defaults(BaseModel):
    """The SEP-1034 conformance form, from plain Python defaults."""

    name: str = "John Doe"
    age: int = 30
    score: float = 95.5
    status: Status = Status.ACTIVE
    verified: bool = True


def test_defaults_for_every_primitive_sep1034() -> None:
    form = Form(Defaults)
    assert form.requested_schema == {
        "type": "object",
        "properties": {
            "name": {"type": "string", "default": "John Doe"},
            "age": {"type": "integer", "default": 30},
            "score": {"type": "number", "default": 95.5},
            "status": {"type": "string", "enum": ["active", "inactive", "pending"], "default": "active"},
            "verified": {"type": "boolean", "default": True},
        },
    }
    assert_valid_form(form.requested_schema)
    answer = form.validate({"name": "Jane Smith", "age": 25, "score": 88.0, "status": "inactive", "verified": False})
    assert answer == Defaults(name="Jane Smith", age=25, score=88.0, status=Status.INACTIVE, verified=False)
    assert form.defaults() == {"name": "John Doe", "age": 30, "score": 95.5, "status": "active", "verified": True}


class Enums(TypedDict):
    untitledSingle: Literal["option1", "option2", "option3"]
    titledSingle: Annotated[str, Choices({"value1": "First Option", "value2": "Second Option"})]
    legacyEnum: Annotated[str, Choices({"opt1": "Option One", "opt2": "Option Two"}, legacy=True)]
    untitledMulti: list[Literal["option1", "option2"]]
    titledMulti: Annotated[list[str], Choices({"value1": "First Choice", "value2": "Second Choice"})]


def test_every_kind_of_choice_sep1330() -> None:
    form = Form(Enums)
    assert form.requested_schema == {
        "type": "object",
        "properties": {
            "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
            "titledSingle": {
                "type": "string",
                "oneOf": [{"const": "value1", "title": "First Option"}, {"const": "value2", "title": "Second Option"}],
            },
            "legacyEnum": {"type": "string", "enum": ["opt1", "opt2"], "enumNames": ["Option One", "Option Two"]},
            "untitledMulti": {"type": "array", "items": {"type": "string", "enum": ["option1", "option2"]}},
            "titledMulti": {
                "type": "array",
                "items": {
                    "anyOf": [
                        {"const": "value1", "title": "First Choice"},
                        {"const": "value2", "title": "Second Choice"},
                    ]
                },
            },
        },
        "required": ["untitledSingle", "titledSingle", "legacyEnum", "untitledMulti", "titledMulti"],
    }
    assert_valid_form(form.requested_schema)
    content = {
        "untitledSingle": "option2",
        "titledSingle": "value1",
        "legacyEnum": "opt2",
        "untitledMulti": ["option1", "option2"],
        "titledMulti": ["value2"],
    }
    assert form.validate(content) == content
    with pytest.raises(ElicitationError) as caught:
        form.validate({**content, "titledSingle": "value9", "titledMulti": ["nope"]})
    message = str(caught.value)
    assert "titledSingle" in message
    assert "titledMulti" in message
    assert "value9" not in message  # answers are the user's data: errors name fields only


@dataclasses.dataclass
class Booking:
    """A dataclass with optional fields, dates, bounds and a set of choices."""

    when: datetime.date
    guests: Annotated[int, Field(ge=1, le=8, description="How many people")] = 2
    note: str | None = None
    email: Annotated[str, Field(title="E-mail", json_schema_extra={"format": "email"})] = ""
    extras: set[Status] = dataclasses.field(default_factory=set)


def test_a_dataclass_with_optionals_bounds_titles_and_a_set() -> None:
    form = Form(Booking)
    assert form.requested_schema == {
        "type": "object",
        "properties": {
            "when": {"type": "string", "format": "date"},
            "guests": {"type": "integer", "minimum": 1, "maximum": 8, "description": "How many people", "default": 2},
            "note": {"type": "string"},
            "email": {"type": "string", "title": "E-mail", "format": "email", "default": ""},
            "extras": {"type": "array", "items": {"type": "string", "enum": ["active", "inactive", "pending"]}},
        },
        "required": ["when"],
    }
    assert_valid_form(form.requested_schema)
    booking = form.validate({"when": "2026-12-24", "extras": ["active"]})
    assert booking == Booking(when=datetime.date(2026, 12, 24), extras={Status.ACTIVE})
    with pytest.raises(ElicitationError, match="guests"):
        form.validate({"when": "2026-12-24", "guests": 9})


class Contact(TypedDict):
    name: str
    phone: NotRequired[str]


def test_a_typeddict_is_validated_into_a_dict() -> None:
    form = form_of(Contact)
    assert form is form_of(Contact)  # built once per class
    assert form.requested_schema == {
        "type": "object",
        "properties": {"name": {"type": "string"}, "phone": {"type": "string"}},
        "required": ["name"],
    }
    assert form.validate({"name": "Ada"}) == {"name": "Ada"}


def test_a_raw_schema_is_checked_sent_unchanged_and_validated() -> None:
    raw = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {
            "n": {"type": "integer", "minimum": 1, "default": 3},
            "s": {"type": "string", "maxLength": 3},
            "c": {"type": "string", "oneOf": [{"const": "a", "title": "A"}]},
            "m": {"type": "array", "items": {"anyOf": [{"const": "x", "title": "X"}]}, "maxItems": 1},
        },
        "required": ["s"],
    }
    form = Form(raw)
    assert form.requested_schema == raw
    assert form.validate({"s": "abc"}) == {"n": 3, "s": "abc"}
    assert form.validate({"s": "a", "n": 5, "c": "a", "m": ["x"]}) == {"n": 5, "s": "a", "c": "a", "m": ["x"]}
    with pytest.raises(ElicitationError) as caught:
        form.validate({"s": "abcd", "n": 0, "c": "b", "m": ["x", "x"]})
    for name in ("s", "n", "c", "m"):
        assert f"{name}:" in str(caught.value)
    with pytest.raises(ElicitationError, match="no content"):
        form.validate(None)


def test_a_raw_schema_validates_each_kind_of_field_by_its_type_and_bounds() -> None:
    form = Form(
        {
            "type": "object",
            "properties": {
                "x": {"type": "number", "minimum": 0.5, "maximum": 2},
                "on": {"type": "boolean"},
                "day": {"type": "string", "format": "date"},
                "pick": {"type": "string", "enum": ["a", "b"]},
                "picks": {"type": "array", "items": {"type": "string", "enum": ["p", "q"]}, "minItems": 1},
            },
        }
    )
    answer = {"x": 1.5, "on": True, "day": "2026-12-07", "pick": "b", "picks": ["q", "p"]}
    assert form.validate(answer) == answer
    with pytest.raises(ElicitationError) as caught:
        form.validate({"x": 3, "on": "maybe", "day": "someday", "pick": "c", "picks": []})
    for name in ("x", "on", "day", "pick", "picks"):
        assert f"{name}:" in str(caught.value)


class Bad(BaseModel):
    nested: Defaults
    mapping: dict[str, int]
    free_list: list[str]
    union: int | str
    secret: pydantic.SecretStr
    pattern: str = Field(pattern="^a")
    exclusive: int = Field(gt=0)
    numbers: Literal[1, 2] = 1


def test_every_problem_of_a_class_is_reported_at_once() -> None:
    with pytest.raises(ElicitationSchemaError) as caught:
        Form(Bad)
    assert caught.value.qualname == "Bad"
    assert len(caught.value.problems) == 8
    text = str(caught.value)
    assert text.startswith("cannot make an elicitation form of Bad:")
    for field in ("nested", "mapping", "free_list", "union", "secret", "pattern", "exclusive", "numbers"):
        assert f"field {field}:" in text
    assert "elicit_url" in text  # the secret's problem says what to do instead


@pytest.mark.parametrize(
    ("schema", "fragment"),
    [
        ({"type": "array", "properties": {}}, '"type" must be "object"'),
        ({"type": "object"}, '"properties" must be an object'),
        ({"type": "object", "properties": {}, "additionalProperties": False}, "additionalProperties not allowed"),
        ({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["b"]}, "unknown fields: b"),
        ({"type": "object", "properties": {"a": {"type": "object"}}}, "cannot be a form field"),
        ({"type": "object", "properties": {"a": {"type": "string", "format": "phone"}}}, "format 'phone'"),
        ({"type": "object", "properties": {"a": {"type": "string", "enum": [1, 2]}}}, "strings"),
        ({"type": "object", "properties": {"a": {"type": "string", "enum": ["x"], "enumNames": []}}}, "one per enum"),
        ({"type": "object", "properties": {"a": {"type": "string", "enum": ["x"], "default": "y"}}}, "not among"),
        ({"type": "object", "properties": {"a": {"type": "integer", "default": 1.5}}}, "wrong type"),
        ({"type": "object", "properties": {"a": {"type": "boolean", "default": "yes"}}}, "wrong type"),
        ({"type": "object", "properties": {"a": {"type": "string", "oneOf": [{"const": "x"}]}}}, "exactly"),
        ({"type": "object", "properties": {"a": {"type": "array", "items": {"type": "string"}}}}, "multi-select"),
        (
            {
                "type": "object",
                "properties": {"a": {"type": "array", "items": {"type": "string", "enum": ["x"]}, "default": ["y"]}},
            },
            "not among the choices",
        ),
        ({"type": "object", "properties": {"a": {"type": "string", "minLength": -1}}}, "non-negative"),
        ({"type": "object", "properties": {"a": {"type": "number", "maximum": "9"}}}, "must be a number"),
        ({"type": "object", "properties": {"a": {"type": "string", "pattern": "x"}}}, "patterns"),
    ],
)
def test_raw_schemas_outside_the_subset_are_refused(schema: dict[str, Any], fragment: str) -> None:
    with pytest.raises(ElicitationSchemaError) as caught:
        Form(schema)
    assert fragment in str(caught.value)


def test_a_form_is_shaped_for_2025_06_18() -> None:
    form = Form(
        {
            "type": "object",
            "properties": {
                "name": {"type": "string", "default": "x"},
                "ok": {"type": "boolean", "default": True},
                "color": {"type": "string", "oneOf": [{"const": "r", "title": "Red"}], "default": "r"},
            },
            "required": ["name"],
        }
    )
    params = form.params("Who?", "2025-06-18")
    assert params == {
        "message": "Who?",
        "requestedSchema": {
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "ok": {"type": "boolean", "default": True},
                "color": {"type": "string", "enum": ["r"], "enumNames": ["Red"]},
            },
            "required": ["name"],
        },
    }
    assert_valid_form(params["requestedSchema"], "2025-06-18")
    assert form.params("Who?", "2025-11-25") == {
        "mode": "form",
        "message": "Who?",
        "requestedSchema": form.requested_schema,
    }
    with pytest.raises(ValueError, match="multi-select"):
        Form(Enums).params("m", "2025-06-18")
    with pytest.raises(ValueError, match="2025-06-18"):
        form.params("m", "2025-03-26")


def test_form_of_refuses_what_is_not_a_form() -> None:
    with pytest.raises(TypeError, match="pydantic model"):
        form_of(42)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"pydantic model, .*not list\[int\]"):  # a class on 3.10 (isinstance type)
        form_of(list[int])
    with pytest.raises(ElicitationSchemaError, match="flat fields"):
        Form(int)


def test_elicit_results_say_what_the_user_did() -> None:
    accepted = ElicitResult.accept({"a": 1})
    assert (accepted.action, accepted.accepted, accepted.content) == ("accept", True, {"a": 1})
    assert accepted.to_wire() == {"action": "accept", "content": {"a": 1}}
    assert ElicitResult.accept().to_wire() == {"action": "accept", "content": {}}
    assert ElicitResult.accept().to_wire(form=False) == {"action": "accept"}
    assert ElicitResult.decline().to_wire() == {"action": "decline"}
    assert ElicitResult.cancel().cancelled
    assert ElicitResult.decline() == ElicitResult("decline")
    assert repr(ElicitResult("accept", {"x": 1})) == "ElicitResult('accept', data={'x': 1})"
    with pytest.raises(ValueError, match="action"):
        ElicitResult("maybe")  # type: ignore[arg-type]


def test_client_answers_are_parsed_tolerantly_but_checked() -> None:
    assert parse_answer({"action": "accept", "content": {"score": 95.5}}) == ("accept", {"score": 95.5})
    assert parse_answer({"action": "decline"}) == ("decline", None)
    for bad in (None, {"action": "ok"}, {"action": "accept", "content": [1]}):
        with pytest.raises(ValueError, match="elicitation answer"):
            parse_answer(bad)
