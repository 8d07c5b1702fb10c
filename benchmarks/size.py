"""Large messages: sequential calls with a 1 MB argument or a 1 MB structured result.

In memory through each framework's own client (which checks a structured result against the tool's output
schema, as users get it), and over stdio with the hand-written client (the server's cost alone).
"""

from __future__ import annotations

import json
import time
from typing import Any

import anyio

from . import _raw, _scale_tools, _sides
from .call_memory import check


def _arguments(tool: str) -> dict[str, Any]:
    if tool == "take_text":
        return {"text": _scale_tools.TEXT}
    if tool == "take_records":
        return {"records": _scale_tools.records_argument()}
    return {"count": _scale_tools.RECORDS}


def _answer(result: object) -> Any:
    """A call result's structured content, else its first text block's JSON, whichever framework's type it is."""
    if isinstance(result, dict):  # the floor's, or a raw JSON-RPC result
        if "structuredContent" in result:
            return result["structuredContent"]
        return json.loads(result["content"][0]["text"])
    for name in ("structured_content", "structuredContent"):
        if (value := getattr(result, name, None)) is not None:
            return value
    return json.loads(result.content[0].text)  # type: ignore[attr-defined]


def _check_answer(side_name: str, tool: str, result: object) -> None:
    """A fast wrong answer is not a fast call: the whole text or all the records arrived, or came back."""
    check(side_name, result)
    if isinstance(result, dict) and result.get("isError"):
        raise RuntimeError(f"{side_name}: {tool} failed: {result}")
    answer = _answer(result)
    if tool == "make_records":
        got, expected = len(answer["records"]), _scale_tools.RECORDS
    else:
        got = answer["result"] if isinstance(answer, dict) else answer  # mcp and fastmcp wrap an int
        expected = len(_scale_tools.TEXT) if tool == "take_text" else _scale_tools.RECORDS
    if got != expected:
        raise RuntimeError(f"{side_name}: {tool} answered {got!r}, expected {expected}")


async def _measure(side_name: str, params: dict[str, Any]) -> float:
    side = _sides.load(side_name)
    server = side.new_server()
    for fn in (_scale_tools.take_text, _scale_tools.take_records, _scale_tools.make_records):
        side.register(server, fn)
    tool, calls = params["tool"], params["calls"]
    arguments = _arguments(tool)
    async with side.memory_client(server) as session:
        for _ in range(params["warmup"]):
            _check_answer(side_name, tool, await session.call_tool(tool, arguments))
        start = time.perf_counter()
        for _ in range(calls):
            await session.call_tool(tool, arguments)
        elapsed = time.perf_counter() - start
    return float(elapsed / calls * 1e3)


def run(side_name: str, params: dict[str, Any]) -> float:
    """Return milliseconds per call in memory, through the framework's own client."""
    return anyio.run(_measure, side_name, params)


def run_stdio(side_name: str, params: dict[str, Any]) -> float:
    """Return milliseconds per call over stdio, the client being raw JSON lines over the child's pipes."""
    argv = _sides.serve_argv(side_name, params["tools_dir"], 0, module=_scale_tools.__name__)
    tool, calls = params["tool"], params["calls"]
    request = {"name": tool, "arguments": _arguments(tool)}
    client = _raw.RawClient(argv, buffered=True)
    try:
        client.initialize()
        for _ in range(params["warmup"]):
            _check_answer(side_name, tool, client.request("tools/call", request))
        start = time.perf_counter()
        for _ in range(calls):
            client.request("tools/call", request)
        elapsed = time.perf_counter() - start
    finally:
        client.close()
    return float(elapsed / calls * 1e3)
