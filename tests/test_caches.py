"""What toolkit keeps between calls is bounded, or belongs to an owner and goes with it."""

from __future__ import annotations

import gc
import typing
import weakref

import pytest

from toolkit import Client, Server, tool
from toolkit._definition import schema as _schema


@tool
def echo(text: str) -> str:
    """Echo."""
    return text


def test_the_type_cache_keeps_at_most_its_bound_oldest_out_first() -> None:
    for value in range(_schema.CACHE_SIZE + 5):
        _schema.type_info(typing.Literal[value])
    first_kept = _schema.type_info(typing.Literal[_schema.CACHE_SIZE + 4])
    assert len(_schema._CACHE) == _schema.CACHE_SIZE
    assert _schema.type_info(typing.Literal[_schema.CACHE_SIZE + 4]) is first_kept  # still cached


def test_prepared_payloads_are_dropped_with_their_server_and_rebuilt_after_a_change() -> None:
    server = Server("gone", tools=[echo])
    before = server.registry.tool_payloads("2025-11-25")
    assert server.registry.tool_payloads("2025-11-25") is before  # prepared once
    assert server.registry.server_info("2024-11-05") == {"name": "gone", "version": "0.0.0"}
    server.remove_tool("echo")
    assert server.registry.tool_payloads("2025-11-25") == []
    alive = weakref.ref(server)
    del server
    gc.collect()
    assert alive() is None


@tool
def shout(text: str) -> str:
    """Shout."""
    return text.upper()


@pytest.mark.anyio
async def test_tools_are_added_in_place_before_serving_and_as_a_new_view_while_serving() -> None:
    server = Server("grows")
    view = server.tools
    server.add_tool(echo)
    assert server.tools is view  # decoration time: no copy of the list per tool
    assert list(view) == ["echo"]
    async with Client(server) as client:
        serving = server.tools
        server.add_tool(shout)
        assert list(serving) == ["echo"]  # a request reading the old view is not disturbed
        assert list(server.tools) == ["echo", "shout"]
        assert [t.name for t in await client.list_tools()] == ["echo", "shout"]


def test_an_http_app_serves_from_its_creation_so_tools_change_by_new_views() -> None:
    server = Server("web", tools=[echo])
    server.http_app()
    view = server.tools
    server.add_tool(shout)
    assert list(view) == ["echo"]
    assert list(server.tools) == ["echo", "shout"]
