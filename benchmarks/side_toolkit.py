"""toolkit's side: `Server`, `@server.tool`, `Client(server)` (in memory) and `Client.stdio`.

Until `Server` exists, definition falls back to `@tool` into a dict, and the other measures are skipped.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import toolkit

HAS_SERVER = hasattr(toolkit, "Server")


def new_server(*, page_size: int | None = None) -> Any:
    return toolkit.Server("bench", page_size=page_size) if HAS_SERVER else {}


def register(server: Any, fn: Callable[..., Any]) -> None:
    if HAS_SERVER:
        server.tool(fn)
    else:
        server[fn.__name__] = toolkit.tool(fn)


def run_stdio(server: Any) -> None:
    server.run()


class _Session:
    def __init__(self, client: Any) -> None:
        self._client = client

    async def list_tools(self) -> int:
        return len(await self._client.list_tools())

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> object:
        return await self._client.call_tool(name, arguments)


@asynccontextmanager
async def memory_client(server: Any) -> AsyncIterator[_Session]:
    async with toolkit.Client(server) as client:
        yield _Session(client)


@asynccontextmanager
async def stdio_client(argv: list[str]) -> AsyncIterator[_Session]:
    async with toolkit.Client.stdio(argv) as client:
        yield _Session(client)
