"""One `tools/call`, whoever serves it: a connection's loop, HTTP in the request's own task (`Connection.answer`),
and, for its run, a task (`tasks.py` runs `running.run_call`, the same last steps).

The steps, in order, each once: find the tool (through tool search's `call_tool` when it is on), hide what this
caller may not see (`tool_filter`, app-only tools), adapt the arguments to the schema profile, decide whether the
call is a task, start its asking (a tool that may ask the client), run it (`running.run_call`: the tool's own path,
or middleware, timeout and size limit around it), and finish it for the request's era (a round's questions, a task
begun, or the result stamped by `Era.complete`).

Where the call's messages go is its **outlet** (`Outlet`), handed in with the request: its notifications (tagged
with the request's id) and the peer its questions go to as requests (handshake era), who also makes its Context.
Nothing reaches a call through a context variable.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from toolkit._asking.asking import AskedCall, Asker
from toolkit._asking.mrtr import Suspend
from toolkit._definition.tool import argument_problem, error_wire
from toolkit._definition.ui import speaks_apps
from toolkit._errors import ProtocolError, URLElicitationRequired
from toolkit._protocol.jsonrpc import INVALID_PARAMS

from .eras import Era, stamps
from .running import run_call
from .visibility import sees, shown_tools, tools_request, visibility

if TYPE_CHECKING:
    from toolkit._call.context import Context
    from toolkit._definition.tool import Tool

    from .registry import Registry
    from .session import SessionState

__all__ = ["Incoming", "Outlet", "ServingConnection", "ToolCalls"]

Closer = Callable[[], Coroutine[Any, Any, None]]


class Notify(Protocol):
    """Sends one notification of the request whose id is `related` (progress, logs), in order before its answer."""

    def __call__(self, method: str, params: dict[str, Any] | None, related: Any) -> Awaitable[None]: ...


class ServingConnection(Protocol):
    """The side that serves a request (a `Connection`): it sends the client requests (a call's questions in the
    handshake era), hears of URL elicitations completed, and describes the request's client to its Context."""

    async def request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        related: Any = None,
        timeout: float | None = None,
    ) -> Any: ...

    def tools_changed(self) -> None: ...

    def elicitation_complete(self, elicitation_id: str) -> None: ...

    def context(self, incoming: Incoming, asker: Asker | None) -> Context: ...


@dataclass(slots=True)
class Outlet:
    """Where the requests served through it send their messages besides their answers: one a connection, made with
    it (and one for each request HTTP answers in its own task, whose notifications go on its response).

    `notify(method, params, related=request_id)`: a request's notifications (progress, logs), in order, before its
    answer. `connection`: who sends a call's questions to the client as requests (handshake era) and makes its Context
    (which also knows how the call ends its HTTP response early, where it has one: 2025-11-25 SSE polling).
    """

    notify: Notify
    connection: ServingConnection


@dataclass(slots=True)
class Incoming:
    """One request as its handler gets it: its id, params, the state it is served with and its era (`eras.route`:
    `NO_SESSION` and None for `initialize`, and `ping` before it), and its outlet."""

    id: Any
    params: dict[str, Any]
    state: SessionState
    era: Era | None
    outlet: Outlet


class ToolCalls:
    """The `tools/call` of one server: `answer`, decided once (with tool search on, its two tools in front).

    `answer(incoming)` returns the wire object that answers the call in the request's era.

    Raises:
        ProtocolError: -32602 when params are malformed or the tool is unknown to this caller (failures of the tool
            itself, bad arguments included, are results with `isError: true`); the era's task refusals.
    """

    __slots__ = ("_stamps", "answer", "server")

    def __init__(self, server: Registry) -> None:
        self.server = server
        self._stamps = stamps(server.server_info)  # what each era's results carry of the server
        self.answer: Callable[[Incoming], Awaitable[dict[str, Any]]] = (
            self._call if server.search is None else self._searched
        )

    async def _searched(self, incoming: Incoming) -> dict[str, Any]:
        """A call with tool search on: a `call_tool` call is its tool's own call; `search_tools`, or a `call_tool`
        that names no tool this caller may call, is answered by the search."""
        search, state, era = self.server.search, incoming.state, incoming.era
        assert search is not None
        assert era is not None
        shown_to = visibility(self.server, "tools/call", incoming.id, state)
        params = search.unwrap(incoming.params, shown_to)
        if params.get("name") not in search.names:
            return await self._call(dataclasses.replace(incoming, params=params))
        return era.complete(search.answer(params, state.version, shown_to), self._stamps[era].info)

    async def _call(self, incoming: Incoming) -> dict[str, Any]:
        server, params, state, era = self.server, incoming.params, incoming.state, incoming.era
        assert era is not None  # routed to an era
        name = params.get("name")
        tool = server.tools.get(name) if type(name) is str else None
        if tool is None or server.tool_filter is not None or tool.app_only:  # looked at closer: may be hidden
            tool = self._find(tool, incoming)
        arguments = self._arguments(tool, params)
        # A task now, or (2026-07-28, a tool that calls `ctx.begin_task()`) once its questions before are answered.
        task = era.tasks.wanted(tool, params, state) if tool.task is not None or "task" in params else None
        if task == "now":
            return await self._task(tool, arguments, incoming, era)
        asking = self._asking(tool, incoming, task) if tool.may_ask else None
        wire, asking = await self._run(tool, arguments, incoming, asking)
        if asking is not None:
            create = functools.partial(server.tasks.create, tool, arguments, params, state)
            return await self._asked(asking, wire, create, era)
        return era.complete(wire, self._stamps[era].info)

    async def _task(
        self, tool: Tool[Any, Any], arguments: Mapping[str, Any] | None, incoming: Incoming, era: Era
    ) -> dict[str, Any]:
        """A call made a task now. Where the server decides per request whether a call is a task (2026-07-28), one
        whose arguments do not fit is answered at once with the plain call's error result: no task is made for a
        call that cannot run. Unless tool middleware, which may change the arguments, stands between; and in
        2025-11-25, where the client asked for the task (`params.task`), the task reports the error."""
        server = self.server
        if era.tasks.server_decides and not (tool.middleware or server.tool_middleware):
            problem = argument_problem(tool, arguments or {}, strict=server.strict_arguments)
            if problem is not None:
                return era.complete(error_wire(problem), self._stamps[era].info)
        return await server.tasks.create(tool, arguments, incoming.params, incoming.state)

    def _arguments(self, tool: Tool[Any, Any], params: Mapping[str, Any]) -> Mapping[str, Any] | None:
        """A call's arguments (None when absent), adapted from the server's schema profile if it has one.

        Raises:
            ProtocolError: -32602, they are not an object.
        """
        arguments = params.get("arguments")
        if arguments is not None and type(arguments) is not dict:
            raise ProtocolError(INVALID_PARAMS, "Invalid params: arguments must be an object")
        profile = self.server.schema_profile
        return arguments if profile is None else tool.arguments_from(profile, arguments)

    def _find(self, tool: Tool[Any, Any] | None, incoming: Incoming) -> Tool[Any, Any]:
        """`tool` (the one a call names), if this caller may see it (`tool_filter`; an app-only tool only to an MCP
        Apps host, apps.mdx "Visibility"); else the spec's unknown-tool error, the same whether the tool is hidden or
        does not exist, its hint naming only tools the caller sees.

        Raises:
            ProtocolError: -32602, the name is not a string or names no tool this caller sees.
        """
        server, state = self.server, incoming.state
        request = tools_request("tools/call", incoming.id, incoming.params, state)
        apps = speaks_apps(state.client_capabilities)
        if tool is not None and sees(server, tool, request, apps):
            return tool
        raise _unknown_tool(incoming.params.get("name"), shown_tools(server, request, apps))

    def _asking(self, tool: Tool[Any, Any], incoming: Incoming, task: str | None) -> Asker | None:
        """The asking of a call whose tool may ask the client (a Context, or `confirm=`), started now (a 2026-07-28
        retry's requestState is verified here, before the tool runs); None for a Context its source shows is only
        told (`Tool.asks`), unless tool middleware is handed it or the call is a retry (human-in-the-loop.md)."""
        params = incoming.params
        handed = bool(tool.middleware or self.server.tool_middleware)
        if tool.asks or handed or "inputResponses" in params or "requestState" in params:
            return self._start_asking(incoming, task)
        return None

    def _start_asking(self, incoming: Incoming, task: str | None = None) -> Asker:
        params, state = incoming.params, incoming.state
        call: AskedCall = {
            "tool": params["name"],
            "arguments": params.get("arguments"),
            "params": params,
            "version": state.version,
            "capabilities": state.client_capabilities,
        }
        asker = Asker.start(self.server, incoming.outlet.connection, incoming.id, call)
        if task == "later":  # its questions before `ctx.begin_task()` are this request's rounds
            asker.task = "before"
        return asker

    async def _run(
        self, tool: Tool[Any, Any], arguments: Mapping[str, Any] | None, incoming: Incoming, asking: Asker | None
    ) -> tuple[dict[str, Any], Asker | None]:
        """The call's wire result (`running.run_call`) and its asking; a question without an answer yet (2026-07-28)
        ends this round with an empty result, and a URL elicitation the tool requires is the result that says so
        (through an asking started then, for a tool that had none)."""
        # Where its Context comes from, for a tool that takes one (or confirms): made only then, and only once asked.
        context = functools.partial(incoming.outlet.connection.context, incoming, asking) if tool.may_ask else None
        try:
            return await run_call(self.server, tool, arguments, context, incoming), asking
        except Suspend:
            return {}, asking
        except URLElicitationRequired as exc:  # also from a tool without a Context
            asking = asking or self._start_asking(incoming)
            return asking.url_required(exc), asking

    async def _asked(
        self,
        asking: Asker,
        wire: dict[str, Any],
        create: Callable[[list[Any]], Awaitable[dict[str, Any]]],
        era: Era,
    ) -> dict[str, Any]:
        """What a call that started asking answers (`Asker.finish`): its result, or (2026-07-28) a round that ends
        with questions, or (a tool at `ctx.begin_task()`) its task, `create`d with the answers of the questions asked
        before."""
        wire = asking.finish(wire)
        if wire.get("resultType") == "input_required":
            return era.stamp(wire, self._stamps[era].info)
        if asking.task == "begun" and asking.replay is not None:
            return await create(asking.replay.answered())
        return era.complete(wire, self._stamps[era].info)


def _unknown_tool(name: Any, tools: Mapping[str, Any]) -> ProtocolError:
    if type(name) is not str:
        return ProtocolError(INVALID_PARAMS, "Invalid params: name must be a string")
    # A typo is the usual cause, as for arguments (`_definition/tool.py`); difflib loads on this error path only.
    import difflib

    close = difflib.get_close_matches(name, list(tools), n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    return ProtocolError(INVALID_PARAMS, f"Unknown tool: {name}{hint}")
