"""The floor: a hand-written JSON-RPC loop, `json.loads` in and `json.dumps` out, no validation at all.

No framework can be faster than this over the same pipe, so each framework's figure is also shown as a
share of the floor's. Wire definitions come ready-made from the generated JSON file. Only `json` and
`sys` load at start (the in-memory pair lives in `_floor_memory`), so start-up and memory figures are the
interpreter's.
"""

from __future__ import annotations

import json
import sys

from . import _generate

# Not `typing.TYPE_CHECKING`: importing typing alone would add milliseconds to the floor's start.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from contextlib import AbstractAsyncContextManager
    from typing import Any

    from ._floor_memory import ConcurrentSession, Session


_ADD_SCHEMA = {
    "type": "object",
    "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
    "required": ["a", "b"],
}


class FloorServer:
    def __init__(self) -> None:
        self.functions: dict[str, Callable[..., Any]] = {}
        self.definitions: list[dict[str, Any]] = []
        self._prepared: dict[str, dict[str, Any]] | None = None

    def prepared(self, name: str) -> dict[str, Any]:
        if self._prepared is None:
            self._prepared = {}
            for directory in sys.path:
                try:
                    with open(f"{directory}/{_generate.FLOOR_FILE}", encoding="utf-8") as file:
                        self._prepared = {d["name"]: d for d in json.load(file)}
                    break
                except OSError:
                    continue
        return self._prepared.get(name) or {"name": name, "description": "Add.", "inputSchema": _ADD_SCHEMA}


def new_server(*, page_size: int | None = None) -> FloorServer:
    if page_size is not None:
        raise ValueError("the floor sends every tool in one page")
    return FloorServer()


def register(server: FloorServer, fn: Callable[..., Any]) -> None:
    server.functions[fn.__name__] = fn
    server.definitions.append(server.prepared(fn.__name__))


def register_generated(server: FloorServer, tools_dir: str, count: int, module: str = _generate.MODULE) -> None:
    """Register the first `count` generated tools of `module` from their JSON definitions alone.

    Importing the generated module would load pydantic (its `Point` model), and the floor's start-up and
    memory would stop being the interpreter's.
    """
    with open(f"{tools_dir}/{_generate.floor_file(module)}", encoding="utf-8") as file:
        definitions = json.load(file)[:count]
    for definition in definitions:
        server.functions[definition["name"]] = _generated_stub
        server.definitions.append(definition)


def _generated_stub(**arguments: Any) -> str:
    return "done"


def result(value: object) -> dict[str, Any]:
    structured = value if isinstance(value, dict) else {"result": value}
    return {"content": [{"type": "text", "text": json.dumps(value)}], "structuredContent": structured}


def reply(server: FloorServer, message: dict[str, Any]) -> dict[str, Any]:
    method = message["method"]
    if method == "initialize":
        payload: dict[str, Any] = {
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "floor", "version": "0"},
        }
    elif method == "tools/list":
        payload = {"tools": server.definitions}
    else:
        payload = {}
    return {"jsonrpc": "2.0", "id": message["id"], "result": payload}


def run_stdio(server: FloorServer) -> None:
    stdin, stdout = sys.stdin, sys.stdout
    while line := stdin.readline():
        message = json.loads(line)
        if "id" not in message:
            continue
        if message["method"] == "tools/call":
            params = message["params"]
            value = server.functions[params["name"]](**params.get("arguments", {}))
            response = {"jsonrpc": "2.0", "id": message["id"], "result": result(value)}
        else:
            response = reply(server, message)
        stdout.write(json.dumps(response) + "\n")
        stdout.flush()


def memory_client(server: FloorServer) -> AbstractAsyncContextManager[Session]:
    from ._floor_memory import memory_client

    return memory_client(server)


def concurrent_memory_client(server: FloorServer) -> AbstractAsyncContextManager[ConcurrentSession]:
    from ._floor_memory import concurrent_memory_client

    return concurrent_memory_client(server)


def stdio_client(argv: list[str]) -> AbstractAsyncContextManager[Session]:
    raise NotImplementedError("the floor has no client of its own: the hand-written client is its client")
