"""Comparing two versions of a server's tools: every kind of change, classified."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from toolkit import tool
from toolkit.cli._breaking_changes import Change, compare, format_changes


def make(
    name: str = "t", properties: dict[str, Any] | None = None, required: list[str] | None = None, **extra: Any
) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties or {}}
    if required:
        schema["required"] = required
    return {"name": name, "description": "A tool.", "inputSchema": schema, **extra}


def changes_of(old: dict[str, Any], new: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(c.severity, c.kind, c.message) for c in compare([old], [new])]


INT = {"type": "integer"}
STR = {"type": "string"}


def test_identical_tools_have_no_changes() -> None:
    assert compare([make(properties={"a": INT})], [make(properties={"a": INT})]) == []


def test_removed_added_and_renamed_tools() -> None:
    old = [make("keep"), make("gone", description="Gone."), make("old_name", {"a": INT}, description="Same.")]
    new = [make("keep"), make("new_name", {"a": INT}, description="Same."), make("fresh", {"b": INT})]

    assert compare(old, new) == [
        Change("compatible", "tool-added", "fresh", "tool `fresh` added"),
        Change("breaking", "tool-removed", "gone", "tool `gone` removed"),
        Change("breaking", "tool-renamed", "old_name", "tool `old_name` renamed to `new_name`"),
    ]


def test_parameters_removed_added_and_made_required() -> None:
    old = make(properties={"a": INT, "b": INT, "c": INT}, required=["a"])
    new = make(properties={"a": INT, "c": INT, "d": INT, "e": INT}, required=["a", "c", "d"])

    assert changes_of(old, new) == [
        ("breaking", "parameter-removed", "parameter `b` removed"),
        ("breaking", "parameter-now-required", "parameter `c` now required"),
        ("breaking", "required-parameter-added", "parameter `d` added (required)"),
        ("compatible", "optional-parameter-added", "parameter `e` added (optional)"),
    ]


def test_a_parameter_made_optional_is_compatible() -> None:
    assert changes_of(make(properties={"a": INT}, required=["a"]), make(properties={"a": INT})) == [
        ("compatible", "parameter-now-optional", "parameter `a` no longer required"),
    ]


def test_types_narrowed_widened_and_changed() -> None:
    old = make(properties={"n": {"type": "number"}, "i": INT, "s": {"type": ["string", "null"]}, "x": STR, "u": INT})
    new = make(
        properties={
            "n": INT,
            "i": {"type": "number"},
            "s": STR,
            "x": INT,
            "u": {"anyOf": [INT, {"type": "null"}]},
        }
    )

    assert changes_of(old, new) == [
        ("breaking", "type-narrowed", "parameter `n`: now accepts only integers (was number)"),
        ("compatible", "type-widened", "parameter `i`: now accepts any number (was integer)"),
        ("breaking", "type-narrowed", "parameter `s`: no longer accepts null"),
        ("breaking", "type-changed", "parameter `x`: type changed from string to integer"),
        ("compatible", "type-widened", "parameter `u`: now also accepts null"),
    ]


def test_any_value_versus_a_type() -> None:
    old = make(properties={"a": {}, "b": INT})
    new = make(properties={"a": STR, "b": {"description": "Anything."}})

    assert changes_of(old, new) == [
        ("breaking", "type-narrowed", "parameter `a`: now restricted to string (was any value)"),
        ("compatible", "description-changed", "parameter `b`: description changed"),
        ("compatible", "type-widened", "parameter `b`: now accepts any value (was integer)"),
    ]


def test_enum_values_removed_and_added() -> None:
    old = make(properties={"mode": {"enum": ["a", "b"]}, "free": STR, "fixed": {"enum": ["x"]}})
    new = make(properties={"mode": {"enum": ["a", "c"]}, "free": {"type": "string", "enum": ["x"]}, "fixed": STR})

    assert changes_of(old, new) == [
        ("breaking", "enum-value-removed", 'parameter `mode`: enum value `"b"` removed'),
        ("compatible", "enum-value-added", 'parameter `mode`: enum value `"c"` added'),
        ("breaking", "type-narrowed", 'parameter `free`: now restricted to `"x"`'),
        ("compatible", "type-widened", "parameter `fixed`: no longer restricted to a list of values"),
    ]


def test_numeric_bounds_tightened_and_loosened() -> None:
    old = make(
        properties={"a": {"type": "integer", "minimum": 0, "maximum": 10}, "b": {"type": "number", "minimum": 1}}
    )
    new = make(
        properties={
            "a": {"type": "integer", "exclusiveMinimum": 0, "maximum": 20},
            "b": {"type": "number", "multipleOf": 2},
        }
    )

    assert changes_of(old, new) == [
        ("breaking", "type-narrowed", "parameter `a`: lower bound changed from ≥ 0 to > 0"),
        ("compatible", "type-widened", "parameter `a`: upper bound changed from ≤ 10 to ≤ 20"),
        ("compatible", "type-widened", "parameter `b`: lower bound ≥ 1 removed"),
        ("breaking", "type-narrowed", "parameter `b`: multipleOf `2` added"),
    ]


def test_string_and_array_constraints() -> None:
    old = make(properties={"s": {"type": "string", "maxLength": 10}, "l": {"type": "array", "items": INT}})
    new = make(
        properties={
            "s": {"type": "string", "maxLength": 5, "minLength": 1, "pattern": "^a"},
            "l": {"type": "array", "items": STR, "uniqueItems": True, "maxItems": 3},
        }
    )

    assert changes_of(old, new) == [
        ("breaking", "type-narrowed", "parameter `s`: minLength 1 added"),
        ("breaking", "type-narrowed", "parameter `s`: maxLength changed from 10 to 5"),
        ("breaking", "type-narrowed", 'parameter `s`: pattern `"^a"` added'),
        ("breaking", "type-narrowed", "parameter `l`: maxItems 3 added"),
        ("breaking", "type-narrowed", "parameter `l`: unique items now required"),
        ("breaking", "type-changed", "parameter `l[]`: type changed from integer to string"),
    ]


def test_nested_objects_and_additional_properties() -> None:
    old = make(
        properties={
            "address": {"type": "object", "properties": {"city": STR, "zip": STR}, "required": ["city"]},
            "scores": {"type": "object", "additionalProperties": {"type": "number"}},
        }
    )
    new = make(
        properties={
            "address": {
                "type": "object",
                "properties": {"city": STR, "country": STR},
                "required": ["city", "country"],
                "additionalProperties": False,
            },
            "scores": {"type": "object", "additionalProperties": INT},
        }
    )

    assert changes_of(old, new) == [
        ("breaking", "parameter-removed", "parameter `address.zip` removed"),
        ("breaking", "required-parameter-added", "parameter `address.country` added (required)"),
        ("breaking", "type-narrowed", "parameter `address`: no longer accepts additional properties"),
        ("breaking", "type-narrowed", "parameter `scores.*`: now accepts only integers (was number)"),
    ]


def test_defaults_and_descriptions_are_compatible_changes() -> None:
    old = make(properties={"a": {"type": "integer", "default": 1}})
    new = {**make(properties={"a": {"type": "integer", "default": 2}}), "description": "New.", "title": "T"}

    assert changes_of(old, new) == [
        ("compatible", "title-changed", "title changed"),
        ("compatible", "description-changed", "description changed"),
        ("compatible", "default-changed", "parameter `a`: default changed from `1` to `2`"),
    ]


def test_hints_toward_danger_break_and_toward_safety_do_not() -> None:
    old = [
        make("a", annotations={"readOnlyHint": True}),
        make("b", annotations={"destructiveHint": False, "idempotentHint": True}),
        make("c", annotations={"openWorldHint": False}),
        make("d"),
    ]
    new = [
        make("a"),
        make("b"),
        make("c", annotations={"openWorldHint": True}),
        make("d", annotations={"readOnlyHint": True}),
    ]

    assert [(c.severity, c.tool, c.message) for c in compare(old, new)] == [
        ("breaking", "a", "hint changed: now not read-only (was read-only)"),
        ("breaking", "b", "hint changed: now destructive (was not destructive)"),
        ("breaking", "b", "hint changed: now not idempotent (was idempotent)"),
        ("breaking", "c", "hint changed: now open-world (was not open-world)"),
        ("compatible", "d", "hint changed: now read-only (was not read-only)"),
    ]


def test_output_promising_less_breaks_and_promising_more_does_not() -> None:
    old_out = {
        "type": "object",
        "properties": {"id": INT, "name": STR, "kind": {"enum": ["a", "b"]}},
        "required": ["id", "name"],
    }
    new_out = {
        "type": "object",
        "properties": {"id": {"type": ["integer", "null"]}, "name": STR, "kind": {"enum": ["a", "c"]}, "extra": STR},
        "required": ["id", "extra"],
    }

    assert changes_of(make(outputSchema=old_out), make(outputSchema=new_out)) == [
        ("breaking", "output-loosened", "output field `id`: now also accepts null"),
        ("breaking", "output-field-now-optional", "output field `name` no longer required"),
        ("compatible", "output-enum-value-removed", 'output field `kind`: enum value `"b"` removed'),
        ("breaking", "output-enum-value-added", 'output field `kind`: enum value `"c"` added'),
        ("compatible", "output-field-added", "output field `extra` added (required)"),
    ]


def test_output_schema_removed_breaks_and_added_does_not() -> None:
    out = {"type": "object", "properties": {"id": INT}}

    assert changes_of(make(outputSchema=out), make()) == [
        ("breaking", "output-schema-removed", "output schema removed")
    ]
    assert changes_of(make(), make(outputSchema=out)) == [("compatible", "output-schema-added", "output schema added")]


def test_a_wrapped_result_is_compared_as_its_value() -> None:
    def wrapped(schema: dict[str, Any]) -> dict[str, Any]:
        return {"type": "object", "properties": {"result": schema}, "required": ["result"]}

    old, new = make(outputSchema=wrapped(INT)), make(outputSchema=wrapped({"type": "number"}))

    assert changes_of(old, new) == [("breaking", "output-loosened", "output: now accepts any number (was integer)")]


class Node(BaseModel):
    name: str
    children: list[Node] = []


class NodeV2(BaseModel):
    name: str
    children: list[NodeV2] = []
    size: int


def test_recursive_definitions_are_compared_once() -> None:
    @tool
    def walk(root: Node) -> None:
        """Walk a tree."""

    @tool(name="walk")
    def walk_v2(root: NodeV2) -> None:
        """Walk a tree."""

    old = walk.definition.model_dump(mode="json", by_alias=True, exclude_none=True)
    new = walk_v2.definition.model_dump(mode="json", by_alias=True, exclude_none=True)

    assert changes_of(old, new) == [("breaking", "required-parameter-added", "parameter `root.size` added (required)")]


def test_the_report_lists_breaking_changes_first_and_counts_them() -> None:
    changes = compare([make("a"), make("b")], [make("b", {"x": INT}), make("c", {"y": INT})])

    assert format_changes(changes) == (
        "BREAKING    a: tool `a` removed\n"
        "compatible  b: parameter `x` added (optional)\n"
        "compatible  c: tool `c` added\n"
        "3 changes: 1 breaking, 2 compatible.\n"
    )
    assert format_changes([]) == "No changes.\n"


def test_keywords_that_are_not_analysed_count_as_a_breaking_change() -> None:
    old = make(properties={"a": {"allOf": [INT]}, "b": {"type": "string", "not": {"const": ""}}})
    new = make(properties={"a": {"allOf": [STR]}, "b": {"type": "string", "not": {"const": "x"}}})

    assert changes_of(old, new) == [
        ("breaking", "type-changed", "parameter `a`: schema changed"),
        ("breaking", "type-changed", "parameter `b`: not changed"),
    ]
