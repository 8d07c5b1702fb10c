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
    async with server_inbox, to_client, client_inbox, anyio.create_task_group() as tasks:  # every end closed
        tasks.start_soon(_serve_memory, server, server_inbox, to_client)
        session = Session(to_server, client_inbox)
        await session._request("initialize", {"protocolVersion": "2025-11-25"})
        yield session
        await to_server.aclose()


class ConcurrentSession:
    """A client that may have many requests in flight: a reader task hands each reply to its waiting caller."""

    def __init__(self, send: Any) -> None:
        self._send = send
        self._id = 0
        self._waiting: dict[int, tuple[anyio.Event, list[Any]]] = {}

    async def read(self, receive: Any) -> None:
        async for text in receive:
            message = json.loads(text)
            event, slot = self._waiting.pop(message["id"])
            slot.append(message["result"])
            event.set()

    async def _request(self, method: str, params: dict[str, Any]) -> Any:
        self._id += 1
        event, slot = self._waiting[self._id] = anyio.Event(), []
        await self._send.send(json.dumps({"jsonrpc": "2.0", "id": self._id, "method": method, "params": params}))
        await event.wait()
        return slot[0]

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> object:
        return await self._request("tools/call", {"name": name, "arguments": arguments})


async def _answer_call(server: side_floor.FloorServer, message: dict[str, Any], send: Any) -> None:
    params = message["params"]
    value = await server.functions[params["name"]](**params.get("arguments", {}))
    await send.send(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": side_floor.result(value)}))


async def _serve_concurrently(server: side_floor.FloorServer, receive: Any, send: Any) -> None:
    async with anyio.create_task_group() as calls:
        async for text in receive:
            message = json.loads(text)
            if message["method"] == "tools/call":
                calls.start_soon(_answer_call, server, message, send)
            else:
                await send.send(json.dumps(side_floor.reply(server, message)))
    await send.aclose()  # ends the client's reader


@asynccontextmanager
async def concurrent_memory_client(server: side_floor.FloorServer) -> AsyncIterator[ConcurrentSession]:
    """The floor for calls in flight at once: a task per call on the server, replies matched by id on the client.

    Only async tools: the loop awaits what the tool returns.
    """
    to_server, server_inbox = anyio.create_memory_object_stream[str](0)
    to_client, client_inbox = anyio.create_memory_object_stream[str](0)
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(_serve_concurrently, server, server_inbox, to_client)
        session = ConcurrentSession(to_server)
        tasks.start_soon(session.read, client_inbox)
        await session._request("initialize", {"protocolVersion": "2025-11-25"})
        yield session
        await to_server.aclose()
