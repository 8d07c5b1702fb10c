"""Where request middleware runs: around a request's handler (`Server(middleware=...)`). Tool middleware runs
around a tool's call (`running.py`), and which tools a caller sees is `visibility.py`'s.

The connection calls in here only when the server has middleware (an `if` on an attribute set once): a server
without it runs none of this (tests/test_hops.py).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from toolkit._definition.middleware import Request, chain
from toolkit._errors import ProtocolError, ToolError
from toolkit._identity import current_identity
from toolkit._protocol.jsonrpc import INTERNAL_ERROR, decode

from .running import checked, checked_call
from .visibility import shown, visibility

if TYPE_CHECKING:
    from .pipeline import Incoming
    from .registry import Registry

__all__ = ["run_method"]

Handler = Callable[["Incoming"], Awaitable[Any]]


async def run_method(server: Registry, handler: Handler, incoming: Incoming, method: str) -> Any:
    """`handler`'s result for the request `incoming` (of `method`), through the server's `middleware`.

    A middleware sees every result as a JSON object: `tools/list`'s prepared JSON text is decoded for it. A
    subscription (`subscriptions/listen`) is a stream, not a call: no middleware runs around it.
    """
    params, state = incoming.params, incoming.state
    if method == "subscriptions/listen":
        return await handler(incoming)

    async def last(request: Request) -> dict[str, Any]:
        params = request.params
        if request.method == "tools/call" and request.arguments is not params.get("arguments"):
            params = {**params, "arguments": request.arguments}
        result = await handler(dataclasses.replace(incoming, id=request.request_id, params=params))
        return decode(result) if type(result) is str else result  # type: ignore[no-any-return]

    request = Request(
        method,
        dict(params),
        state.version or None,  # None outside both eras (`initialize`)
        incoming.id,
        current_identity.get(),
    )
    if request.method == "tools/call":
        return await _tools_call(server, request, last, incoming)
    try:
        return checked(await chain(server.middleware, last, as_tool_error=False)(request))
    except ToolError as exc:  # not a tool call: there is no tool error to answer with
        raise ProtocolError(INTERNAL_ERROR, f"Internal error: {exc or 'the request was refused'}") from None


async def _tools_call(
    server: Registry, request: Request, last: Callable[[Request], Awaitable[dict[str, Any]]], incoming: Incoming
) -> dict[str, Any]:
    """A `tools/call` through the server's `middleware`: the request shows its tool (when this caller sees it) and
    its arguments; the answer is a `CallToolResult` (a middleware's own answer, in 2026-07-28, completed as the era
    sends it)."""
    params, state = request.params, incoming.state
    if server.search is not None:  # a call_tool call is its tool's call to the middleware too
        params = server.search.unwrap(params, visibility(server, "tools/call", incoming.id, state))
        request.params = dict(params)
    arguments, name = params.get("arguments"), params.get("name")
    request.arguments = arguments if isinstance(arguments, dict) else None
    tool = server.tools.get(name) if type(name) is str else None
    request.tool = tool.definition if tool is not None and shown(server, tool, request) else None
    result = checked_call(await chain(server.middleware, last, as_tool_error=True)(request), request.version)
    if incoming.era is not None and "resultType" not in result:  # a middleware's own answer, as its era sends it
        incoming.era.complete(result, server.server_info(state.version))
    return result
