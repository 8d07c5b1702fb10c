"""The floor's in-memory pair: the same loop as over stdio, on anyio memory streams of JSON text."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio

from . import side_floor


class Session:
    def __init__(self, send: Any, receive: Any) -> None:
        self._send, self._receive = send, receive
        self._id = 0

    async def _request(self, method: str, params: dict[str, Any]) -> Any:
        self._id += 1
        await self._send.send(json.dumps({"jsonrpc": "2.0", "id": self._id, "method": method, "params": params}))
        return json.loads(await self._receive.receive())["result"]

    async def list_tools(self) -> int:
        return len((await self._request("tools/list", {}))["tools"])

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> object:
        return await self._request("tools/call", {"name": name, "arguments": arguments})


async def _serve_memory(server: side_floor.FloorServer, receive: Any, send: Any) -> None:
    async for text in receive:
        message = json.loads(text)
        if message["method"] == "tools/call":
            params = message["params"]
            value = server.functions[params["name"]](**params.get("arguments", {}))
            if hasattr(value, "__await__"):
                value = await value
            response = {"jsonrpc": "2.0", "id": message["id"], "result": side_floor.result(value)}
        else:
            response = side_floor.reply(server, message)
        await send.send(json.dumps(response))


@asynccontextmanager
async def memory_client(server: side_floor.FloorServer) -> AsyncIterator[Session]:
    to_server, server_inbox = anyio.create_memory_object_stream[str](0)
    to_client, client_inbox = anyio.create_memory_object_stream[str](0)
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(_serve_memory, server, server_inbox, to_client)
        session = Session(to_server, client_inbox)
        await session._request("initialize", {"protocolVersion": "2025-11-25"})
        yield session
        await to_server.aclose()
