"""Markdown and JSON references rendered from `tools/list` payloads.

The tools below are the golden file's subject: regenerate it with
`python -m toolkit docs tests/docs/test_docsgen.py -o tests/golden/reference.md` and review the diff.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from toolkit import tool
from toolkit.docs import badges, describe_type, render_json, render_markdown
from toolkit.docs._reference import definition_size, warnings
from toolkit.docs._schema_text import example_arguments

GOLDEN = Path(__file__).parents[1] / "golden"


class Address(BaseModel):
    """A postal address."""

    street: str = Field(description="Street and number.")
    city: str = Field("Paris", description="City name.")


class Folder(BaseModel):
    """A folder and the folders inside it."""

    name: str
    children: list[Folder] = []


class Note(BaseModel):
    id: int = Field(description="The note's id.")
    tags: list[str] = Field(description="Its tags | labels.\nSorted.")


@tool(title="Search notes", read_only=True, open_world=False)
def search(
    query: Annotated[str, Field(min_length=1, max_length=200)],
    limit: Annotated[int, Field(ge=1, le=100)] = 10,
    mode: Literal["all", "any"] = "all",
    tags: list[str] | None = None,
) -> list[Note]:
    """Find notes that match a query.

    Args:
        query: Words to look for.
        limit: How many notes to return at most.
        mode: Whether every word must match, or any of them.
    """
    return []


@tool(destructive=False, idempotent=True)
def move(
    address: Address, folder: Folder | None = None, when: Annotated[str, Field(examples=["tomorrow"])] = "now"
) -> Note:
    """Move a note.

    Args:
        address: Where to.
        folder: The folder tree to file it under.
        when: When to move it.
    """
    return Note(id=1, tags=[])


@tool
def ping() -> str:
    """Check that the server answers."""
    return "pong"


def payload(*tools: Any) -> list[dict[str, Any]]:
    return [t.definition.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools]


def test_the_markdown_reference_matches_the_golden_file() -> None:
    text = render_markdown(payload(search, move, ping))

    assert text == (GOLDEN / "reference.md").read_text(encoding="utf-8")


def test_the_json_reference_is_exactly_the_tools_list_payload() -> None:
    tools = payload(search, ping)

    assert json.loads(render_json(tools)) == {"tools": tools}
    assert render_json(tools).endswith("}\n")


def test_readable_types_spell_out_unions_bounds_and_containers() -> None:
    schemas: dict[str, Any] = {
        "any": {},
        "nothing": False,
        "string": {"type": "string"},
        "integer ≥ 0": {"type": "integer", "minimum": 0},
        "number > 0, < 1": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
        "string (date-time)": {"type": "string", "format": "date-time"},
        "list[string]": {"type": "array", "items": {"type": "string"}},
        "list[any]": {"type": "array"},
        "tuple[integer, string]": {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}]},
        '"a" | "b"': {"enum": ["a", "b"]},
        "3": {"const": 3},
        "string | null": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        "integer | boolean": {"type": ["integer", "boolean"]},
        "dict[string, number]": {"type": "object", "additionalProperties": {"type": "number"}},
        "object": {"type": "object", "properties": {"a": {"type": "string"}}},
        "Folder": {"$ref": "#/$defs/Folder"},
        "list[integer ≤ 9]": {"allOf": [{"type": "array", "items": {"type": "integer", "maximum": 9}}]},
    }

    assert {name: describe_type(schema) for name, schema in schemas.items()} == {name: name for name in schemas}


def test_a_strings_example_is_the_one_its_description_gives_in_code_when_it_fits() -> None:
    def text(description: str, **bounds: int) -> dict[str, Any]:
        return {"type": "string", "description": description, **bounds}

    schema = {
        "type": "object",
        "properties": {
            "expression": text("Numbers and operators, such as `(2 + 3) * 4 / 5`; no names."),
            "city": text("A city, e.g. `Lisbon`."),
            "path": text("A file, for example `notes/a.txt`, under the root."),
            "long": text("A code such as `ABCDEF`.", maxLength=3),
            "plain": text("Shown as `code` but given as no example."),
        },
        "required": ["expression", "city", "path", "long", "plain"],
    }

    # Before: "example" for each, which an expression, a city or a path would refuse.
    assert example_arguments(schema) == {
        "expression": "(2 + 3) * 4 / 5",
        "city": "Lisbon",
        "path": "notes/a.txt",
        "long": "exa",  # the given one would not fit: made up, within the bounds
        "plain": "example",
    }


def test_example_arguments_fill_required_parameters_within_their_bounds() -> None:
    schema = {
        "type": "object",
        "properties": {
            "count": {"type": "integer", "exclusiveMinimum": 5},
            "ratio": {"type": "number", "maximum": 0.25},
            "name": {"type": "string", "minLength": 10},
            "code": {"type": "string", "maxLength": 3},
            "when": {"type": "string", "format": "date"},
            "kind": {"enum": ["x", "y"]},
            "flags": {"type": "array", "items": {"type": "boolean"}, "minItems": 2},
            "pair": {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "null"}]},
            "maybe": {"anyOf": [{"type": "null"}, {"type": "integer", "minimum": 3}]},
            "node": {"$ref": "#/$defs/Node"},
            "loose": {},
            "skipped": {"type": "string"},
            "shown": {"type": "string", "examples": ["hello"]},
        },
        "required": ["count", "ratio", "name", "code", "when", "kind", "flags", "pair", "maybe", "node", "loose"],
        "$defs": {"Node": {"type": "object", "properties": {"id": {"type": ["integer", "null"]}}, "required": ["id"]}},
    }

    assert example_arguments(schema) == {
        "count": 6,
        "ratio": 0.25,
        "name": "examplexxx",
        "code": "exa",
        "when": "2025-01-01",
        "kind": "x",
        "flags": [True, True],
        "pair": [1, None],
        "maybe": 3,
        "node": {"id": 1},
        "loose": None,
        "shown": "hello",
    }


def test_badges_make_the_spec_defaults_explicit() -> None:
    bare = {"name": "t", "inputSchema": {"type": "object"}}
    read_only = {**bare, "annotations": {"readOnlyHint": True, "destructiveHint": True}}

    assert badges(bare) == [
        "not read-only (default)",
        "destructive (default)",
        "not idempotent (default)",
        "open-world (default)",
    ]
    assert badges(bare, mark_defaults=False) == ["destructive", "not idempotent", "open-world"]
    # destructive and idempotent mean nothing for a read-only tool (spec, ToolAnnotations).
    assert badges(read_only) == ["read-only", "open-world (default)"]


def test_size_is_the_compact_wire_json_and_a_quarter_of_it_in_tokens() -> None:
    tool_object = {"name": "é", "inputSchema": {"type": "object"}}

    assert definition_size(tool_object) == (44, 11)


def test_warnings_name_large_definitions_and_lint_alone_names_what_has_no_description() -> None:
    big = {
        "name": "big",
        "description": "Large.",
        "inputSchema": {
            "type": "object",
            "properties": {"x": {"type": "string", "description": "d" * 9000}, "y": {"type": "integer"}},
        },
    }
    bare = {
        "name": "bare",
        "inputSchema": {"type": "object", "properties": {"a": {"type": "object", "properties": {}}}},
    }

    assert warnings([big, bare]) == ["`big`: definition is 9,146 characters, ≈ 2,287 tokens (over 2,000)."]
    # Each missing description is said once, by its lint finding (TK105, TK101, TK105), not again as a warning.
    assert render_markdown([big, bare]).count("has no description") == 3


def test_an_output_schema_of_any_type_reads_as_a_type_with_its_fields() -> None:
    listing = {
        "name": "listing",
        "description": "List.",
        "inputSchema": {"type": "object"},
        "outputSchema": {
            "type": "array",
            "items": {"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]},
        },
    }

    lines = render_markdown([listing], title=None, heading_level=2, findings=[]).splitlines()

    assert lines[6] == "## `listing`"
    assert lines[12:20] == [
        "**Parameters:** none.",
        "",
        "**Output:** `list[object]` (`structuredContent`).",
        "",
        "| Name | Type | Required | Constraints | Description |",
        "| --- | --- | --- | --- | --- |",
        "| `[].id` | `integer` | yes |   |   |",
        "",
    ]


def test_an_empty_server_still_gets_a_summary() -> None:
    assert (
        render_markdown([])
        == "# Tools\n\n0 tools, 0 characters of definitions in total (≈ 0 tokens, estimated as characters / 4).\n"
    )
