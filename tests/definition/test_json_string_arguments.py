"""Object and array arguments sent as JSON strings (issue 21 §2): several widely used clients send
`"filters": "{\"colour\": \"red\"}"`. toolkit parses such a string where the parameter's schema asks for an object or
an array and admits no string, then validates as usual; `Server(strict_arguments=True)` refuses it. Through the real
client and the raw wire (every message schema-checked), in both eras."""

from __future__ import annotations

from typing import Any, Literal

import pytest
import wire
from pydantic import BaseModel
from typing_extensions import TypedDict

from toolkit import Client, Server, tool

pytestmark = pytest.mark.anyio
ERAS = pytest.mark.parametrize("protocol", ["handshake", "2026-07-28"])


class Filters(BaseModel):
    colour: str
    size: int = 0


class Point(TypedDict):
    x: int
    y: int


@tool
def search(
    filters: Filters,
    tags: list[str] | None = None,
    *,
    origin: Point | None = None,
    note: str | dict[str, Any] = "",
    label: str = "",
    anything: Any = None,
) -> str:
    return f"{filters.colour}/{filters.size} {tags} {origin} {note!r} {label!r} {anything!r}"


def server(**options: Any) -> Server:
    return Server("strings", tools=[search], **options)


@ERAS
async def test_a_json_string_is_parsed_for_an_object_or_array_parameter(anyio_backend: str, protocol: Any) -> None:
    async with Client(server(), protocol=protocol) as client:
        result = await client.call_tool(
            "search",
            {"filters": '{"colour": "red", "size": "3"}', "tags": '["a", "b"]', "origin": '{"x": 1, "y": 2}'},
        )
    assert (result.is_error, result.text) == (False, "red/3 ['a', 'b'] {'x': 1, 'y': 2} '' '' None")


@ERAS
async def test_a_string_parameter_is_never_parsed(anyio_backend: str, protocol: Any) -> None:
    async with Client(server(), protocol=protocol) as client:
        result = await client.call_tool(
            "search", {"filters": {"colour": "red"}, "note": '{"a": 1}', "label": "[1]", "anything": '{"b": 2}'}
        )
    assert (result.is_error, result.text) == (False, """red/0 None None '{"a": 1}' '[1]' '{"b": 2}'""")


@ERAS
async def test_the_parsed_value_is_validated_as_usual(anyio_backend: str, protocol: Any) -> None:
    async with Client(server(), protocol=protocol) as client:
        result = await client.call_tool("search", {"filters": '{"size": "big"}'})
    assert result.is_error
    assert result.text.splitlines() == [
        "Invalid arguments for tool 'search':",
        '- filters.colour: Field required (got {"size":"big"})',
        '- filters.size: Input should be a valid integer, unable to parse string as an integer (got "big")',
    ]


@ERAS
async def test_a_string_that_is_not_the_json_asked_for_is_refused_clearly(anyio_backend: str, protocol: Any) -> None:
    async with Client(server(), protocol=protocol) as client:
        result = await client.call_tool("search", {"filters": '{"colour": red}', "tags": '"a"', "origin": "null"})
    assert result.is_error
    assert result.text.splitlines() == [
        "Invalid arguments for tool 'search':",
        "- filters: expected an object, got a string that is not valid JSON "
        "(Expecting value: line 1 column 12 (char 11))",
        "- tags: expected an array, got a string (its JSON is not an array)",
        "- origin: expected an object, got a string (its JSON is not an object)",
    ]


@ERAS
async def test_strict_arguments_refuses_json_strings(anyio_backend: str, protocol: Any) -> None:
    async with Client(server(strict_arguments=True), protocol=protocol) as client:
        refused = await client.call_tool("search", {"filters": '{"colour": "red"}'})
        accepted = await client.call_tool("search", {"filters": {"colour": "red"}})
    assert refused.is_error
    assert refused.text.splitlines()[1].startswith("- filters: Input should be a valid dictionary or instance of")
    assert (accepted.is_error, accepted.text) == (False, "red/0 None None '' '' None")


async def test_on_the_wire_in_the_handshake_era(anyio_backend: str) -> None:
    async with wire.memory(server()) as peer:
        await peer.initialize()
        reply = await peer.call("search", {"filters": '{"colour": "blue"}', "tags": "[]"})
    assert reply["result"] == {"content": [{"type": "text", "text": "blue/0 [] None '' '' None"}], "isError": False}


async def test_on_the_wire_in_2026_07_28(anyio_backend: str) -> None:
    async with wire.memory(server()) as peer:
        reply = await peer.request(
            "tools/call", {"name": "search", "arguments": {"filters": '{"colour": "green"}'}, "_meta": wire.meta()}
        )
        bad = await peer.request("tools/call", {"name": "search", "arguments": {"filters": "{"}, "_meta": wire.meta()})
    assert reply["result"]["content"] == [{"type": "text", "text": "green/0 None None '' '' None"}]
    assert reply["result"]["isError"] is False
    assert bad["result"]["isError"] is True
    assert "expected an object, got a string that is not valid JSON" in bad["result"]["content"][0]["text"]


@tool
def page(limit: int = 10, exact: bool = False, ratio: float = 1.0) -> str:
    return f"{limit} {exact} {ratio}"


@ERAS
async def test_numbers_and_booleans_sent_as_strings_were_already_accepted(anyio_backend: str, protocol: Any) -> None:
    async with Client(Server("lax", tools=[page], strict_arguments=True), protocol=protocol) as client:
        lax = await client.call_tool("page", {"limit": "890", "exact": "true", "ratio": "0.5"})
        empty = await client.call_tool("page", {"limit": ""})
        null = await client.call_tool("page", {"limit": None})
    assert (lax.is_error, lax.text) == (False, "890 True 0.5")
    # Not guessed: an empty string or null for a parameter that admits neither is refused, saying what came.
    assert empty.is_error
    assert null.is_error
    assert "- limit: Input should be a valid integer" in null.text


class Shape(BaseModel):
    sides: int


@tool(inline_defs=False)
def shapes(
    first: Shape,
    pair: tuple[int, int] | int = 0,
    mode: Literal["a", "b"] = "a",
    codes: list[Literal[1, 2]] | None = None,
) -> str:
    return f"{first.sides} {pair} {mode} {codes}"


@ERAS
async def test_references_unions_and_choices_decide_what_is_parsed(anyio_backend: str, protocol: Any) -> None:
    async with Client(Server("refs", tools=[shapes]), protocol=protocol) as client:
        parsed = await client.call_tool("shapes", {"first": '{"sides": 3}', "pair": "[1, 2]", "codes": "[1]"})
        kept = await client.call_tool("shapes", {"first": {"sides": 4}, "mode": '"b"'})
    assert (parsed.is_error, parsed.text) == (False, "3 (1, 2) a [1]")
    assert kept.is_error  # a choice of strings is never parsed: '"b"' is not "b"
    assert "- mode: Input should be 'a' or 'b'" in kept.text
