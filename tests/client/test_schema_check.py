"""The client's compiled output check agrees with jsonschema (draft 2020-12) on every schema it compiles.

Hypothesis draws schemas of the compiled subset (recursive `$defs` included) and JSON values over a small
vocabulary, so that both valid and invalid values come up; valid or not must be jsonschema's answer.
"""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typing_extensions import TypedDict

from toolkit import CallToolResult, Client, ProtocolError, Server, TextContent, tool
from toolkit._client.schema_check import OutputCheck, compile_schema

NAMES = ("a", "b", "c")
NUMBERS = [0, 1, -2, 3, 0.5, 1.0, -2.5]
numbers = st.sampled_from([*NUMBERS, True, False])
bounds = st.sampled_from(NUMBERS)  # the numbers without the booleans (a filter would retry a draw in 2 of 3 schemas)
json_values = st.recursive(
    st.none() | numbers | st.text(alphabet="ab", max_size=3),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.sampled_from(NAMES), children, max_size=3),
    max_leaves=8,
)
types = st.sampled_from(["object", "array", "string", "number", "integer", "boolean", "null"])
counts = st.integers(0, 3)
leaf_keywords = {
    "type": types | st.lists(types, min_size=1, max_size=3, unique=True),
    "enum": st.lists(json_values, min_size=1, max_size=3),
    "const": json_values,
    "minimum": bounds,
    "maximum": bounds,
    "exclusiveMinimum": bounds,
    "exclusiveMaximum": bounds,
    "minLength": counts,
    "maxLength": counts,
    "pattern": st.sampled_from(["^a", "b", "^[ab]*$", "a{2}"]),
    "minItems": counts,
    "maxItems": counts,
    "uniqueItems": st.booleans(),
    "minProperties": counts,
    "maxProperties": counts,
    "required": st.lists(st.sampled_from(NAMES), max_size=2, unique=True),
    "format": st.sampled_from(["date-time", "email"]),  # an annotation: jsonschema checks no format by default
    "title": st.text(max_size=3),
}
plain_leaves = st.booleans() | st.fixed_dictionaries({}, optional=leaf_keywords)


def _branches(children: st.SearchStrategy[Any], refs: tuple[str, ...] = ("#/$defs/A", "#/$defs/B")) -> Any:
    applicators = {
        "properties": st.dictionaries(st.sampled_from(NAMES), children, max_size=3),
        "additionalProperties": children,
        "patternProperties": st.dictionaries(st.sampled_from(["^a", "b$"]), children, max_size=2),
        "items": children,
        "prefixItems": st.lists(children, max_size=2),
        "allOf": st.lists(children, min_size=1, max_size=3),
        "anyOf": st.lists(children, min_size=1, max_size=3),
        "oneOf": st.lists(children, min_size=1, max_size=3),
        "not": children,
    }
    if refs:
        applicators["$ref"] = st.sampled_from(refs)
    return st.fixed_dictionaries({}, optional={**applicators, **leaf_keywords})


# No definition reaches itself (jsonschema and the check would both recurse forever on the same value): B names none,
# A names B, the root both; a recursive definition has its own test below.
b_schemas = st.recursive(plain_leaves, lambda c: _branches(c, ()), max_leaves=8)
a_schemas = st.recursive(
    plain_leaves | st.just({"$ref": "#/$defs/B"}), lambda c: _branches(c, ("#/$defs/B",)), max_leaves=8
)
roots = st.recursive(
    plain_leaves | st.sampled_from([{"$ref": "#/$defs/A"}, {"$ref": "#/$defs/B"}]), _branches, max_leaves=10
)
schemas = st.builds(lambda root, a, b: {**root, "$defs": {"A": a, "B": b}}, _branches(roots), a_schemas, b_schemas)


# One test for both answers of the check over the same draws: drawing a schema costs 70 ms of Hypothesis' time (the
# check and jsonschema a fraction of it), so the first error is compared on all 100 draws at the cost of none more.
@settings(max_examples=100, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(schema=schemas, value=json_values)
def test_the_compiled_check_agrees_with_jsonschema_on_validity_and_the_first_error_by_path(
    schema: dict[str, Any], value: Any
) -> None:
    validator = jsonschema.Draft202012Validator(schema)
    expected = validator.is_valid(value)
    errors = sorted(validator.iter_errors(value), key=lambda e: list(e.path))
    check = compile_schema(schema)

    assert check is not None  # every keyword drawn is in the compiled subset
    assert check(value) is expected
    assert OutputCheck(schema).first_error(value) == (None if expected else errors[0].message)


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "array", "contains": {"type": "integer"}},
        {"type": "number", "multipleOf": 2},
        {"$id": "https://example.com/s", "type": "array"},
        {"$defs": {"a": {"$anchor": "here", "type": "array"}}, "$ref": "#here"},
        {"properties": {"a": {"unevaluatedProperties": False}}},
        {"$schema": "http://json-schema.org/draft-07/schema#", "type": "array"},
    ],
)
def test_a_schema_with_a_keyword_it_does_not_compile_is_left_to_jsonschema_whole(schema: dict[str, Any]) -> None:
    checker = OutputCheck(schema)
    expected = [e.message for e in jsonschema.Draft202012Validator(schema).iter_errors([1, 1])][:1]

    assert compile_schema(schema) is None
    assert [checker.first_error([1, 1])] == (expected or [None])


def test_a_recursive_definition_is_compiled_and_checks_every_level() -> None:
    tree = {
        "$ref": "#/$defs/Node",
        "$defs": {"Node": {"type": "object", "properties": {"children": {"type": "array", "items": {"$ref": "#"}}}}},
    }
    check = compile_schema(tree)

    assert check is not None
    assert check({"children": [{"children": []}, {"children": [{}]}]}) is True
    assert check({"children": [{"children": [{"children": 3}]}]}) is False


class Record(TypedDict):
    id: int
    name: str


class Listing(TypedDict):
    records: list[Record]


@tool(structured=True)
def listing() -> Listing:
    """Claims a listing of records, one of which is not."""
    records = [{"id": 1, "name": "one"}, {"id": "two", "name": "two"}]
    return CallToolResult(content=[TextContent(text="")], structured_content={"records": records})  # type: ignore[return-value]


@pytest.mark.anyio
async def test_a_result_breaking_the_output_schema_deep_down_is_refused_with_jsonschemas_message() -> None:
    async with Client(Server("records", tools=[listing])) as client:
        with pytest.raises(ProtocolError) as caught:
            await client.call_tool("listing")

    assert caught.value.code == -32603
    assert str(caught.value).endswith("does not match its outputSchema: 'two' is not of type 'integer'")


@settings(max_examples=150, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(schema=st.fixed_dictionaries({}, optional=leaf_keywords), value=json_values | numbers)
def test_each_keyword_on_its_own_agrees_with_jsonschema(schema: dict[str, Any], value: Any) -> None:
    check = compile_schema(schema)

    assert check is not None
    assert check(value) is jsonschema.Draft202012Validator(schema).is_valid(value)


@pytest.mark.parametrize(
    ("schema", "valid", "invalid"),
    [
        ({"minimum": 1, "exclusiveMaximum": 3}, [1, 2.5, "x"], [0, 3, 0.5]),
        ({"prefixItems": [{"type": "string"}], "items": {"type": "integer"}}, [["a", 1, 2], []], [[1], ["a", "b"]]),
        ({"patternProperties": {"^x": {"type": "null"}}, "additionalProperties": False}, [{"xa": None}], [{"y": 1}]),
        ({"patternProperties": {"^x": {"type": "null"}}}, [{"y": 1}], [{"xa": 1}]),
        ({"$ref": "#/prefixItems/0", "prefixItems": [{"type": "array"}]}, [[]], [{}]),
        (
            {"uniqueItems": True},
            [[1, True], [[1], [True]], [{"a": 1}, {"a": True}]],
            [[1, 1.0], [{"a": 1}, {"a": 1.0}]],
        ),
        ({"enum": [[1, {"a": True}], None]}, [[1.0, {"a": True}], None], [[1, {"a": 1}], [True, {"a": True}]]),
    ],
)
def test_keywords_the_drawn_schemas_rarely_reach_agree_with_jsonschema(
    schema: dict[str, Any], valid: list[Any], invalid: list[Any]
) -> None:
    check = compile_schema(schema)

    assert check is not None
    assert [check(value) for value in valid] == [True] * len(valid)
    assert [check(value) for value in invalid] == [False] * len(invalid)
    assert [jsonschema.Draft202012Validator(schema).is_valid(value) for value in [*valid, *invalid]] == [True] * len(
        valid
    ) + [False] * len(invalid)


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "decimal"},
        {"required": "a"},
        {"properties": []},
        {"enum": "ab"},
        {"anyOf": []},
        {"minLength": -1},
        {"minimum": "1"},
        {"pattern": "("},
        {"prefixItems": {}},
        {"items": [{"type": "string"}]},
        {"$ref": "#/$defs/missing"},
    ],
)
def test_a_schema_it_cannot_read_is_left_to_jsonschema(schema: dict[str, Any]) -> None:
    assert compile_schema(schema) is None


def test_a_value_nested_deeper_than_the_stack_is_left_to_jsonschema() -> None:
    tree = {"$defs": {"T": {"type": "array", "items": {"$ref": "#/$defs/T"}}}, "$ref": "#/$defs/T"}
    deep: list[Any] = []
    for _ in range(5_000):
        deep = [deep]
    checker = OutputCheck(tree)

    with pytest.raises(RecursionError):  # jsonschema's own answer to such a value, as before the compiled check
        checker.first_error(deep)
    assert checker.first_error([[[]]]) is None
