"""Where middleware runs: around a request's handler (`Server(middleware=...)`), around a tool's call
(`Server(tool_middleware=...)`, then `@tool(middleware=...)`), with the timeout and the result size limit innermost,
and the tools a caller may see (`Server(tool_filter=...)`).

The connection calls in here only when the server or the tool has something of it (an `if` on an attribute set
once): a server without middleware runs none of this (tests/test_hops.py).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

import anyio
import pydantic

from toolkit._asking.asking import Deadline, call_deadline
from toolkit._definition.middleware import Request, chain
from toolkit._definition.tool import CallSettings, call_tool, error_wire
from toolkit._errors import ProtocolError, ToolError
from toolkit._identity import current_identity
from toolkit._protocol.jsonrpc import INTERNAL_ERROR, decode, encode
from toolkit._protocol.meta import SERVER_INFO_KEY
from toolkit._protocol.types import MODERN_VERSION, CallToolResult

if TYPE_CHECKING:
    from toolkit._definition.tool import Tool

    from .registry import Registry
    from .search import Shown
    from .session import SessionState

__all__ = ["filtered_payloads", "run_method", "run_tool", "shown", "shown_tools", "tools_request", "visibility"]

logger = logging.getLogger("toolkit")

Handler = Callable[[Any, dict[str, Any], Any], Awaitable[Any]]


async def run_method(server: Registry, handler: Handler, message: dict[str, Any], state: SessionState | None) -> Any:
    """`handler`'s result for the request `message`, through the server's `middleware`.

    A middleware sees every result as a JSON object: `tools/list`'s prepared JSON text is decoded for it. A
    subscription (`subscriptions/listen`) is a stream, not a call: no middleware runs around it.
    """
    params: dict[str, Any] = message.get("params") or {}
    if message["method"] == "subscriptions/listen":
        return await handler(message["id"], params, state)

    async def last(request: Request) -> dict[str, Any]:
        params = request.params
        if request.method == "tools/call" and request.arguments is not params.get("arguments"):
            params = {**params, "arguments": request.arguments}
        result = await handler(request.request_id, params, state)
        return decode(result) if type(result) is str else result  # type: ignore[no-any-return]

    request = Request(
        message["method"],
        dict(params),
        state.version if state is not None else None,
        message["id"],
        current_identity.get(),
    )
    if request.method == "tools/call":
        if server.search is not None:  # a call_tool call is its tool's call to the middleware too
            params = server.search.unwrap(params, visibility(server, "tools/call", message["id"], state))
            request.params = dict(params)
        arguments, name = params.get("arguments"), params.get("name")
        request.arguments = arguments if isinstance(arguments, dict) else None
        tool = server.tools.get(name) if type(name) is str else None
        request.tool = tool.definition if tool is not None and shown(server, tool, request) else None
        result = _checked_call(await chain(server.middleware, last, as_tool_error=True)(request), request.version)
        if request.version == MODERN_VERSION and "resultType" not in result:  # a middleware's own answer
            result["resultType"] = "complete"
            result["_meta"] = {**(result.get("_meta") or {}), SERVER_INFO_KEY: server.server_info(MODERN_VERSION)}
        return result
    try:
        return _checked(await chain(server.middleware, last, as_tool_error=False)(request))
    except ToolError as exc:  # not a tool call: there is no tool error to answer with
        raise ProtocolError(INTERNAL_ERROR, f"Internal error: {exc or 'the request was refused'}") from None


async def run_tool(server: Registry, tool: Tool[Any, Any], request: Request, settings: CallSettings) -> dict[str, Any]:
    """One `tools/call` of `tool` through the server's `tool_middleware` and the tool's own, the timeout and the
    result size limit innermost (the tool's own, else the server's)."""
    timeout = tool.timeout if tool.timeout is not None else server.tool_timeout
    limit = tool.max_result_bytes if tool.max_result_bytes is not None else server.max_result_bytes

    async def last(request: Request) -> dict[str, Any]:
        call = call_tool(tool, request.arguments, request.context, settings)
        wire = await (call if timeout is None else _timed(server, tool, call, timeout))
        return wire if limit is None else _limited(tool, wire, limit)

    hooks = server.tool_middleware + tool.middleware
    if not hooks:
        return await last(request)
    return _checked_call(await chain(hooks, last, as_tool_error=True)(request), request.version)


def _checked(result: Any) -> dict[str, Any]:
    """What a middleware returned, if it is a result (a JSON object); a bug of the middleware's otherwise, answered
    with an internal error rather than no answer at all.

    Raises:
        TypeError: it is not a dict.
    """
    if type(result) is not dict:
        raise TypeError(f"a middleware returned {type(result).__name__}, not the result (a dict)")
    return result


def _checked_call(result: Any, version: str | None) -> dict[str, Any]:
    """What a middleware returned for a `tools/call`, if it is a `CallToolResult` (or, server-wide in 2026-07-28,
    the round's `InputRequiredResult`): a copy, which the connection may complete with the era's envelope while the
    middleware keeps its own (a cache's entry) unchanged.

    Raises:
        TypeError: it is not a result (answered with an internal error, logged).
    """
    result = _checked(result)
    # A task's creation (`CreateTaskResult`: 2026-07-28's `resultType: "task"`, 2025-11-25's `{"task": ...}`) is the
    # answer of a call made a task, as the round's `InputRequiredResult` is of one that asks.
    created = result.get("resultType") == "task" or (type(result.get("task")) is dict and "content" not in result)
    if result.get("resultType") != "input_required" and not created:
        problem = _call_problem(result, version)
        if problem is not None:
            raise TypeError(f"a middleware returned {problem}, not the result (a CallToolResult)")
    return dict(result)


def _call_problem(result: dict[str, Any], version: str | None) -> str | None:
    """What makes `result` no `CallToolResult` of `version`, or None."""
    if type(result.get("content")) is not list:
        return "a dict without a list of content blocks"
    if "isError" in result and type(result["isError"]) is not bool:
        return f"isError {result['isError']!r} (not a bool)"
    structured = result.get("structuredContent")
    if structured is not None and version != MODERN_VERSION and type(structured) is not dict:
        return f"structuredContent of type {type(structured).__name__} (not an object)"
    try:
        CallToolResult.model_validate(result, strict=True)
    except pydantic.ValidationError as exc:
        return f"an invalid result ({exc.error_count()} problem(s), first: {exc.errors()[0]['msg']})"
    return None


async def _timed(
    server: Registry, tool: Tool[Any, Any], call: Awaitable[dict[str, Any]], seconds: float
) -> dict[str, Any]:
    """`call`'s result, or a timeout's error result once `seconds` passed.

    The call is cancelled at the deadline. A sync tool's thread cannot be stopped: it is abandoned (it runs on, its
    result dropped) and counted in `server.abandoned_calls`. An async tool that swallows or shields the cancellation
    is waited for (structured concurrency leaves no coroutine behind); its result is dropped all the same.
    """
    with anyio.move_on_after(seconds) as scope:
        token = call_deadline.set(Deadline(scope))  # stopped while the client answers a question (asking.py)
        try:
            wire = await call
        finally:
            call_deadline.reset(token)
    if not scope.cancel_called:
        return wire
    if tool.runs_in_thread:
        server.abandoned_calls += 1
        logger.warning("tool %r timed out after %g s; its worker thread runs on, abandoned", tool.name, seconds)
    return error_wire(f"tool {tool.name!r} timed out after {seconds:g} s")


def _limited(tool: Tool[Any, Any], wire: dict[str, Any], limit: int) -> dict[str, Any]:
    """`wire`, or an error result when its JSON is larger than `limit` bytes: never a truncated result (half a
    result would not match the tool's output schema, nor say what is missing)."""
    size = len(encode(wire).encode())
    if size <= limit:
        return wire
    logger.warning("tool %r returned %d bytes, over its limit of %d: answered with an error", tool.name, size, limit)
    return error_wire(
        f"tool {tool.name!r} returned a result of {size:,} bytes, more than the {limit:,} bytes allowed "
        "(max_result_bytes): nothing of it was sent"
    )


# -- which tools a caller sees -------------------------------------------------------------------------------


def tools_request(method: str, request_id: Any, params: dict[str, Any], state: SessionState) -> Request:
    """The request as `tool_filter` sees it (`tools/list`, or a `tools/call` whose tool is looked up)."""
    return Request(method, dict(params), state.version, request_id, current_identity.get())


def shown(server: Registry, tool: Tool[Any, Any], request: Request) -> bool:
    """Whether the caller of `request` may see `tool` (always, without a `tool_filter`)."""
    return server.tool_filter is None or bool(server.tool_filter(tool.definition, request))


def shown_tools(server: Registry, request: Request, apps: bool = True) -> Mapping[str, Tool[Any, Any]]:
    """The tools the caller of `request` may see, in order (`apps` False: a client without MCP Apps, which sees no
    app-only tool)."""
    if server.tool_filter is None and apps:
        return server.tools
    return {
        name: tool
        for name, tool in server.tools.items()
        if (apps or not tool.app_only) and shown(server, tool, request)
    }


def visibility(server: Registry, method: str, request_id: Any, state: SessionState | None) -> Shown:
    """Whether the caller of a request may see a tool, given the request's params (what `Search` takes)."""
    if server.tool_filter is None or state is None:
        return _everyone
    session = state

    def visible(tool: Tool[Any, Any], params: dict[str, Any]) -> bool:
        return shown(server, tool, tools_request(method, request_id, params, session))

    return visible


def _everyone(tool: Tool[Any, Any], params: dict[str, Any]) -> bool:
    return True


def filtered_payloads(server: Registry, request: Request, version: str, apps: bool = True) -> list[str]:
    """The prepared JSON of the tools the caller may see (`tools/list` with a `tool_filter`)."""
    payloads = server.tool_payloads(version)
    tools = server.tools.values()
    return [
        payload
        for tool, payload in zip(tools, payloads, strict=True)
        if (apps or not tool.app_only) and shown(server, tool, request)
    ]
