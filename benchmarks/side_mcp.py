"""The official SDK's side: `mcp.server.mcpserver.MCPServer` and `mcp.Client`, defaults except the client cache."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import mcp
from mcp.server.mcpserver import MCPServer

NO_PAGES = "MCPServer has no page size: it sends every tool in one page"


def new_server(*, page_size: int | None = None) -> MCPServer:
    if page_size is not None:
        raise ValueError(NO_PAGES)
    return MCPServer("bench")


def register(server: MCPServer, fn: Callable[..., Any]) -> None:
    server.tool()(fn)


def run_stdio(server: MCPServer) -> None:
    server.run()


class _Session:
    def __init__(self, client: mcp.Client) -> None:
        self._client = client

    async def list_tools(self) -> int:
        # The 2026-07-28 response cache would answer from memory after the first call.
        return len((await self._client.list_tools(cache_mode="bypass")).tools)

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> object:
        return await self._client.call_tool(name, arguments)


@asynccontextmanager
async def memory_client(server: MCPServer) -> AsyncIterator[_Session]:
    async with mcp.Client(server, cache=None) as client:
        yield _Session(client)


@asynccontextmanager
async def stdio_client(argv: list[str]) -> AsyncIterator[_Session]:
    parameters = mcp.StdioServerParameters(command=argv[0], args=argv[1:])
    async with mcp.Client(parameters, cache=None) as client:
        yield _Session(client)
