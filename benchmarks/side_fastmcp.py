"""fastmcp's side: `FastMCP` and `fastmcp.Client`, defaults except the start-up banner and its update check."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import fastmcp
from fastmcp.client.transports import StdioTransport


def new_server(*, page_size: int | None = None) -> fastmcp.FastMCP:
    return fastmcp.FastMCP("bench", list_page_size=page_size)


def register(server: fastmcp.FastMCP, fn: Callable[..., Any]) -> None:
    server.tool(fn)


def run_stdio(server: fastmcp.FastMCP) -> None:
    # The banner asks PyPI for a newer version; leaving it on would time the network.
    server.run(show_banner=False)


class _Session:
    def __init__(self, client: fastmcp.Client[Any]) -> None:
        self._client = client

    async def list_tools(self) -> int:
        return len(await self._client.list_tools(cache_mode="bypass"))

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> object:
        return await self._client.call_tool(name, arguments)


@asynccontextmanager
async def memory_client(server: fastmcp.FastMCP) -> AsyncIterator[_Session]:
    async with fastmcp.Client(server) as client:
        yield _Session(client)


@asynccontextmanager
async def stdio_client(argv: list[str]) -> AsyncIterator[_Session]:
    transport = StdioTransport(command=argv[0], args=argv[1:], keep_alive=False)
    async with fastmcp.Client(transport) as client:
        yield _Session(client)
