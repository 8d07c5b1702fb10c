"""What the spec asks of a tool definition, checked at definition: `_meta` keys, the JSON Schema dialect."""

from __future__ import annotations

import enum
from typing import Annotated, Generic, TypeVar

import pytest
import wire
from pydantic import BaseModel, ConfigDict, Field
from wire import meta

from toolkit import Client, Server, ToolDefinitionError, tool

pytestmark = pytest.mark.anyio


# -- tool _meta keys -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "key",
    ["plain", "", "x", "com.example/my-key", "com.example/a.b_c-d", "com.example.mcp/key", "a/b", "org.example-1/"],
)
def test_meta_keys_in_the_specs_format_are_published_unchanged(key: str) -> None:
    made = tool(name="keyed", meta={key: 1})(lambda: None)

    assert made.definition.meta == {key: 1}


@pytest.mark.parametrize(
    ("key", "why"),
    [
        ("-bad key-", "not a valid key"),
        ("trailing.", "not a valid key"),
        ("_leading", "not a valid key"),
        ("1com.example/x", "not a valid key"),
        ("com.-example/x", "not a valid key"),
        ("com..example/x", "not a valid key"),
        ("com.example-/x", "not a valid key"),
        ("com.example/a b", "not a valid key"),
        ("a/b/c", "not a valid key"),
        ("io.modelcontextprotocol/anything", "reserved for MCP"),
        ("io.modelcontextprotocol/", "reserved for MCP"),
        ("dev.mcp/x", "reserved for MCP"),
        ("org.modelcontextprotocol.api/x", "reserved for MCP"),
        ("com.mcp.tools/x", "reserved for MCP"),
        ("io.modelcontextprotocol/serverInfo", "reserved for MCP"),  # a key the spec defines, but not for tools
    ],
)
def test_a_meta_key_out_of_format_or_under_a_reserved_prefix_is_a_definition_error(key: str, why: str) -> None:
    def broken() -> None:
        """Has a bad _meta key."""

    with pytest.raises(ToolDefinitionError) as caught:
        tool(meta={key: 1})(broken)

    assert len(caught.value.problems) == 1
    assert caught.value.problems[0].startswith(f"_meta key {key!r}")
    assert why in caught.value.problems[0]


def test_every_bad_meta_key_is_reported_at_once_with_the_other_problems() -> None:
    def broken(a, /) -> None:  # type: ignore[no-untyped-def]
        """Two problems in _meta, one in the signature."""

    with pytest.raises(ToolDefinitionError) as caught:
        tool(meta={"io.modelcontextprotocol/anything": 1, "-bad key-": 2, "com.example/fine": 3})(broken)

    assert [problem.split(" ", 3)[:3] for problem in caught.value.problems] == [
        ["parameter", "a:", "positional-only"],
        ["_meta", "key", "'io.modelcontextprotocol/anything':"],
        ["_meta", "key", "'-bad"],
    ]


# -- the JSON Schema dialect ---------------------------------------------------------------------------------


class Address(BaseModel):
    street: str
    city: str


@tool(schema_dialect=True, inline_defs=False)
def json_schema_2020_12_tool(name: str, address: Address | None = None) -> str:
    """Mirrors the conformance suite's `json-schema-2020-12` scenario (SEP-1613).

    Args:
        name: A name.
        address: Where.
    """
    return name


@pytest.mark.parametrize("version", [*wire.HANDSHAKE, wire.MODERN])
async def test_schema_dialect_defs_and_additional_properties_survive_the_listing(version: str) -> None:
    bare = tool(name="bare", schema_dialect=True)(lambda: None)
    server = Server("dialect", version="1", tools=[json_schema_2020_12_tool, bare])
    async with wire.memory(server) as peer:
        if version == wire.MODERN:
            await peer.send({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": meta()}})
            listed = (await peer.receive())["result"]
        else:
            await peer.initialize(version)
            listed = await peer.result("tools/list")

    assert [t["inputSchema"] for t in listed["tools"]] == [
        {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "A name."},
                "address": {"$ref": "#/$defs/Address", "description": "Where."},
            },
            "required": ["name"],
            "additionalProperties": False,
            "$defs": {
                "Address": {
                    "type": "object",
                    "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
                    "required": ["street", "city"],
                }
            },
        },
        {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object", "additionalProperties": False},
    ]


T = TypeVar("T")


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Box(BaseModel, Generic[T]):
    item: T


class Anchored(BaseModel):
    model_config = ConfigDict(json_schema_extra={"$anchor": "anchoredDef"})
    street: str


def test_with_inline_defs_false_a_parameters_own_type_is_a_ref_named_as_pydantic_names_it() -> None:
    @tool(inline_defs=False)
    def pack(
        box: Box[int],
        color: Annotated[Color, Field(description="The paint.")],
        where: Anchored,
        again: Anchored,
        plain: int = 1,
    ) -> None:
        """Pack a box."""

    assert pack.definition.input_schema == {
        "type": "object",
        "properties": {
            "box": {"$ref": "#/$defs/Box_int_"},
            "color": {"$ref": "#/$defs/Color", "description": "The paint."},
            "where": {"$ref": "#/$defs/Anchored"},
            "again": {"$ref": "#/$defs/Anchored"},
            "plain": {"type": "integer", "default": 1},
        },
        "required": ["box", "color", "where", "again"],
        "additionalProperties": False,
        "$defs": {
            "Box_int_": {"properties": {"item": {"type": "integer"}}, "required": ["item"], "type": "object"},
            "Color": {"enum": ["red", "blue"], "type": "string"},
            "Anchored": {
                "$anchor": "anchoredDef",
                "properties": {"street": {"type": "string"}},
                "required": ["street"],
                "type": "object",
            },
        },
    }
    assert pack.definition_for("claude-desktop")["inputSchema"]["properties"]["box"] == {
        "properties": {"item": {"type": "integer"}},
        "required": ["item"],
        "type": "object",
    }  # a profile for clients that cannot follow $ref still inlines


def test_input_schema_extra_adds_root_keywords_and_cannot_contradict_the_signature() -> None:
    rules = {"anyOf": [{"required": ["phone"]}, {"required": ["email"]}], "$comment": "one of them"}

    @tool(input_schema_extra=rules)
    def reach(phone: str | None = None, email: str | None = None) -> None:
        """Reach someone."""

    assert reach.definition.input_schema == {
        "type": "object",
        "properties": {"phone": {"type": "string"}, "email": {"type": "string"}},
        "additionalProperties": False,
        **rules,
    }
    rules["$comment"] = "changed later"  # the definition keeps its own copy
    assert reach.definition.input_schema["$comment"] == "one of them"

    with pytest.raises(ToolDefinitionError) as caught:
        tool(name="bad", input_schema_extra={"required": ["x"], "$schema": "x", "default": float("nan")})(lambda: None)
    derived, dialect, not_json = caught.value.problems
    assert derived == "input_schema_extra cannot set 'required': toolkit derives it from the signature"
    assert dialect.endswith("cannot set '$schema': toolkit derives it from the signature (use schema_dialect=True)")
    assert not_json.startswith("input_schema_extra is not JSON: Out of range float values")
    with pytest.raises(ToolDefinitionError, match="must be a mapping of JSON Schema keywords, not list"):
        tool(name="bad", input_schema_extra=["anyOf"])(lambda: None)  # type: ignore[call-overload]


def test_without_schema_dialect_no_schema_keyword_is_published() -> None:
    assert "$schema" not in tool(name="plain")(lambda: None).definition.input_schema


async def test_a_tool_with_a_dialect_validates_its_arguments_as_before() -> None:
    async with Client(Server("dialect", version="1", tools=[json_schema_2020_12_tool])) as client:
        good = await client.call_tool(
            "json_schema_2020_12_tool", {"name": "n", "address": {"street": "s", "city": "c"}}
        )
        bad = await client.call_tool("json_schema_2020_12_tool", {"name": "n", "address": {"street": "s"}})

    assert (good.text, good.is_error, bad.is_error) == ("n", False, True)
