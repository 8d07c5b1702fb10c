"""`Server(tool_search=...)`: what `tools/list` lists, `search_tools`, and `call_tool` run as a direct call, in both
eras, in memory, over stdio and over HTTP."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
import servers
import wire
import zygote
from test_http import ALICE, BOB, http_client, modern_headers, modern_message, post
from test_middleware import http_client as client_over_http

from toolkit import (
    Client,
    ElicitationHandler,
    ElicitRequest,
    ElicitResult,
    Identity,
    ProtocolError,
    ProtocolMode,
    Server,
    StaticTokenVerifier,
    ToolDefinition,
    ToolSearch,
    tool,
)
from toolkit.testing import assert_portable

pytestmark = pytest.mark.anyio

PROTOCOLS: tuple[ProtocolMode, ...] = ("handshake", "2026-07-28")
TRANSPORTS = ("memory", "stdio", "http")


async def accept(request: ElicitRequest) -> ElicitResult[Any]:
    return ElicitResult.accept({})


async def decline(request: ElicitRequest) -> ElicitResult[Any]:
    return ElicitResult.decline()


@asynccontextmanager
async def connect(
    transport: str, protocol: ProtocolMode, backend: str, elicit: ElicitationHandler = accept
) -> AsyncIterator[Client]:
    """A client of a fresh search server (tests/servers/search_app.py) over `transport`."""
    if transport == "stdio":
        command = [sys.executable, str(servers.SEARCH), backend]
        async with zygote.client(command, protocol=protocol, elicitation_handler=elicit) as client:
            yield client
        return
    server = servers.build(servers.SEARCH)
    if transport == "memory":
        async with Client(server, protocol=protocol, elicitation_handler=elicit) as client:
            yield client
        return
    async with client_over_http(server, protocol, elicit) as client:  # in process, its lifespan running
        yield client


def found(result: Any) -> list[str]:
    """The names a `search_tools` result gives, checking that its text is its structured content as JSON."""
    assert result.is_error is not True
    assert json.loads(result.content[0].text) == result.structured_content
    return [definition["name"] for definition in result.structured_content["tools"]]


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_the_list_is_the_pinned_tools_and_the_two_and_a_search_finds_then_calls(
    transport: str, protocol: ProtocolMode, anyio_backend: str
) -> None:
    with anyio.fail_after(wire.TIMEOUT):
        async with connect(transport, protocol, anyio_backend) as client:
            listed = await client.list_tools()
            searched = await client.call_tool("search_tools", {"query": "What's the weather like in Paris?"})
            nothing = await client.call_tool("search_tools", {"query": "a sonnet about quantum chromodynamics"})
            called = await client.call_tool("call_tool", {"name": "get_weather", "arguments": {"city": "Paris"}})
            direct = await client.call_tool("get_weather", {"city": "Paris"})  # an unlisted tool, by name
    assert [definition.name for definition in listed] == ["help", "search_tools", "call_tool"]
    assert found(searched)[0] == "get_weather"
    weather = searched.structured_content["tools"][0]
    assert weather["inputSchema"]["required"] == ["city"]
    assert weather["inputSchema"]["properties"]["unit"]["enum"] == ["celsius", "fahrenheit"]
    assert found(nothing) == []
    assert called.model_dump() == direct.model_dump()
    assert called.content[0].text == "sunny in Paris, 21 degrees celsius"  # type: ignore[union-attr]


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_call_tool_validates_and_fails_as_a_direct_call_does(protocol: ProtocolMode) -> None:
    async with Client(servers.build(servers.SEARCH), protocol=protocol) as client:
        bad = await client.call_tool("call_tool", {"name": "get_weather", "arguments": {"town": "Paris"}})
        direct_bad = await client.call_tool("get_weather", {"town": "Paris"})
        no_name = await client.call_tool("call_tool", {"arguments": {}})
        not_object = await client.call_tool("call_tool", {"name": "get_weather", "arguments": [1]})
        unknown = await client.call_tool("call_tool", {"name": "get_wether", "arguments": {}})
        no_query = await client.call_tool("search_tools", {})
    assert bad.is_error is True
    assert bad.model_dump() == direct_bad.model_dump()
    assert no_name.is_error is True
    assert "takes the name of a tool" in no_name.content[0].text  # type: ignore[union-attr]
    assert not_object.is_error is True
    assert "must be an object" in not_object.content[0].text  # type: ignore[union-attr]
    assert unknown.content[0].text == "Unknown tool: get_wether; did you mean 'get_weather'?"  # type: ignore[union-attr]
    assert no_query.is_error is True


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_a_hidden_tool_is_never_found_nor_called_and_refused_as_an_unknown_one(protocol: ProtocolMode) -> None:
    async with Client(servers.build(servers.SEARCH), protocol=protocol) as client:
        searched = await client.call_tool("search_tools", {"query": "reset the weather service cache"})
        hidden = await client.call_tool("call_tool", {"name": "admin_reset", "arguments": {}})
        unknown = await client.call_tool("call_tool", {"name": "admin_rest", "arguments": {}})
        with pytest.raises(ProtocolError, match=r"^Unknown tool: admin_reset$"):
            await client.call_tool("admin_reset", {})
    assert "admin_reset" not in found(searched)
    assert hidden.is_error is True
    assert hidden.content[0].text == "Unknown tool: admin_reset; find tools with search_tools"  # type: ignore[union-attr]
    assert unknown.content[0].text == "Unknown tool: admin_rest; find tools with search_tools"  # type: ignore[union-attr]


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_an_app_only_tool_is_found_and_called_through_the_search_by_an_mcp_apps_host_only(
    protocol: ProtocolMode,
) -> None:
    @tool(visibility=["app"])
    def refresh_weather_panel() -> str:
        """Refresh the weather panel's data (called by the panel, never by the model)."""
        return "refreshed"

    server = servers.build(servers.SEARCH)
    server.add_tool(refresh_weather_panel)
    query = {"query": "refresh the weather panel data"}
    call = {"name": "refresh_weather_panel", "arguments": {}}
    async with Client(server, protocol=protocol) as model_client:
        hidden = found(await model_client.call_tool("search_tools", query))
        refused = await model_client.call_tool("call_tool", call)
    async with Client(server, protocol=protocol, apps=True) as host:
        seen = found(await host.call_tool("search_tools", query))
        called = await host.call_tool("call_tool", call)
    assert "refresh_weather_panel" not in hidden
    assert refused.is_error is True
    assert "refresh_weather_panel" in seen
    assert called.text == "refreshed"


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_the_middleware_sees_the_found_tool_and_confirmation_is_asked(protocol: ProtocolMode) -> None:
    module = servers.load(servers.SEARCH)
    async with Client(module.build(), protocol=protocol, elicitation_handler=accept) as client:
        confirmed = await client.call_tool("call_tool", {"name": "delete_file", "arguments": {"path": "a.txt"}})
    async with Client(module.build(), protocol=protocol, elicitation_handler=decline) as client:
        declined = await client.call_tool("call_tool", {"name": "delete_file", "arguments": {"path": "a.txt"}})
        await client.call_tool("search_tools", {"query": "delete a file"})
    assert confirmed.content[0].text == "deleted a.txt"  # type: ignore[union-attr]
    assert declined.is_error is True
    # every round of a 2026-07-28 call is a request of its own: the middleware sees the tool's each time
    assert set(module.seen[:-1]) == {"delete_file"}
    assert module.seen[-1] is None  # search_tools is no tool of the server's


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_a_confirmation_is_asked_through_call_tool_on_every_transport(
    transport: str, protocol: ProtocolMode, anyio_backend: str
) -> None:
    arguments = {"name": "delete_file", "arguments": {"path": "a.txt"}}
    with anyio.fail_after(wire.TIMEOUT):
        async with connect(transport, protocol, anyio_backend, accept) as client:
            confirmed = await client.call_tool("call_tool", arguments)
    with anyio.fail_after(wire.TIMEOUT):
        async with connect(transport, protocol, anyio_backend, decline) as client:
            declined = await client.call_tool("call_tool", arguments)
    assert confirmed.content[0].text == "deleted a.txt"  # type: ignore[union-attr]
    assert declined.is_error is True


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_call_tool_runs_a_task_tool_as_a_task(transport: str, protocol: ProtocolMode, anyio_backend: str) -> None:
    with anyio.fail_after(wire.TIMEOUT):
        async with connect(transport, protocol, anyio_backend) as client:
            task = await client.start_task("call_tool", {"name": "write_report", "arguments": {"topic": "owls"}})
            result = await task.result()
    assert task.id is not None
    assert result.content[0].text == "report on owls"  # type: ignore[union-attr]


async def test_the_index_follows_the_tools_as_they_change() -> None:
    server = Server("changing", tool_search=True)

    @tool
    def translate(text: str, language: str) -> str:
        """Translate a text into another language."""
        return text

    async with Client(server) as client:
        before = await client.call_tool("search_tools", {"query": "translate into French"})
        server.add_tool(translate)
        added = await client.call_tool("search_tools", {"query": "translate into French"})
        server.remove_tool("translate")
        removed = await client.call_tool("search_tools", {"query": "translate into French"})
    assert (found(before), found(added), found(removed)) == ([], ["translate"], [])


def test_the_options_say_no() -> None:
    with pytest.raises(ValueError, match="limit must be an int of at least 1"):
        ToolSearch(limit=0)
    with pytest.raises(ValueError, match="must differ"):
        ToolSearch(search_name="x", call_name="x")
    with pytest.raises(ValueError, match="no valid tool name"):
        ToolSearch(pinned=["has space"])
    with pytest.raises(TypeError, match="not one string"):
        ToolSearch(pinned="help")
    with pytest.raises(TypeError, match="tool_search takes"):
        Server("s", tool_search="yes")  # type: ignore[arg-type]
    server = Server("s", tool_search=ToolSearch(search_name="find", call_name="run"))

    @tool
    def find() -> str:
        return ""

    with pytest.raises(ValueError, match="tool_search serves a tool of that name"):
        server.add_tool(find)


PROFILES = ("openai-strict", "openai", "gemini", "anthropic", "anthropic-strict", "claude-desktop")


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_the_two_tools_are_adapted_to_the_schema_profile_as_the_found_ones_are(
    profile: str, protocol: ProtocolMode
) -> None:
    server = Server("adapted", tool_search=True, schema_profile=profile)

    @server.tool
    def book_flight(destination: str, seats: int = 1) -> str:
        """Book a flight to a destination."""
        return f"{seats} seat(s) to {destination}"

    # Under a strict profile (every object closed) no schema says "any object": call_tool takes the found tool's
    # arguments as JSON text.
    strict = profile.endswith("-strict")
    arguments: Any = json.dumps({"destination": "Lima", "seats": 2}) if strict else {"destination": "Lima", "seats": 2}
    async with Client(server, protocol=protocol) as client:
        listed = await client.list_tools()
        searched = await client.call_tool("search_tools", {"query": "book a flight"})
        called = await client.call_tool("call_tool", {"name": "book_flight", "arguments": arguments})
        wrong = await client.call_tool("call_tool", {"name": "book_flight", "arguments": "[1, 2]"})
    assert_portable(listed, profile)  # a provider in this profile takes all of the list as it is served
    assert_portable([ToolDefinition.model_validate(found) for found in searched.structured_content["tools"]], profile)
    assert called.content[0].text == "2 seat(s) to Lima"  # type: ignore[union-attr]
    assert wrong.is_error is True
    call = next(definition for definition in listed if definition.name == "call_tool")
    if strict:
        assert "[1, 2]" in wrong.content[0].text  # type: ignore[union-attr]
        assert call.input_schema["additionalProperties"] is False
        taken = call.input_schema["properties"]["arguments"]
        assert taken.get("type") == "string" or {"type": "string"} in taken["anyOf"]  # openai-strict: or null
    else:
        assert call.input_schema["properties"]["arguments"]["type"] == "object"
    search = next(definition for definition in listed if definition.name == "search_tools")
    assert (search.output_schema is None) == (profile == "claude-desktop")


async def test_the_names_and_count_are_options() -> None:
    server = Server("s", tool_search=ToolSearch(search_name="find", call_name="run", limit=1))

    @server.tool
    def add_numbers(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    @server.tool
    def add_note(text: str) -> str:
        """Add a note."""
        return text

    async with Client(server) as client:
        listed = [definition.name for definition in await client.list_tools()]
        searched = await client.call_tool("find", {"query": "add two numbers"})
        result = await client.call_tool("run", {"name": "add_numbers", "arguments": {"a": 1, "b": 2}})
    assert listed == ["find", "run"]
    assert len(found(searched)) == 1
    assert result.content[0].text == "3"  # type: ignore[union-attr]


async def test_call_tool_needs_the_scopes_of_the_tool_it_calls_over_http() -> None:
    server = Server("scoped", tool_search=True)

    @server.tool
    def delete_everything() -> str:
        """Delete every record for good."""
        return "deleted"

    verifier = StaticTokenVerifier(
        {ALICE: Identity("alice", frozenset({"tools"})), BOB: Identity("bob", frozenset({"admin"}))}
    )
    app = server.http_app(
        auth=verifier,
        authorization_servers=["https://auth.example.com"],
        scopes_supported=["tools", "admin"],
        required_scopes={"delete_everything": {"admin"}},
    )
    replies = {}
    async with http_client(app) as client:
        for token in (ALICE, BOB):
            message = modern_message("tools/call", {"name": "call_tool", "arguments": {"name": "delete_everything"}})
            headers = {**modern_headers(message), "authorization": f"Bearer {token}"}
            response, [reply] = await post(client, message, headers)
            replies[token] = (response.status_code, reply)
    assert replies[ALICE][0] == 403
    assert replies[ALICE][1] == wire.error(1, -32600)
    assert replies[BOB][0] == 200
    assert replies[BOB][1]["result"]["content"] == [{"type": "text", "text": "deleted"}]
