"""`InProcess`: a toolkit server mounted in memory, its calls served by its own `tools/call` pipeline, with no second
protocol hop.

A mounted toolkit `Server` is connected as every upstream is (`Upstream`: one connection, for its listing, its
`list_changed` and the calls that must run as its tasks), but a call of one of its tools takes a shorter path: the
gateway hands it to the upstream's own `tools/call` (`ToolCalls`) as a request in the era the connection speaks (a
session's, or one 2026-07-28 request's state), through the upstream's request middleware and its SERVER span, and the
pipeline serves it as it serves a client's (visibility, schema profile, tool middleware, timeouts, argument checks,
its asking). What differs is only where the call's messages go (its `Outlet`): its progress and log messages to the
downstream call, its questions (the handshake era's requests, or 2026-07-28's input requests, answered and the call
retried as toolkit's client does) to the downstream client through the gateway's own answers (`Downstream`). No JSON
is encoded or decoded, and no second connection's reader, request matcher or outbox runs.
"""

from __future__ import annotations

import functools
import itertools
import logging
import secrets
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

import anyio

from toolkit._asking.asking import call_deadline
from toolkit._asking.handlers import call_with_input
from toolkit._call.context import Context
from toolkit._engine.eras import Era, era_of
from toolkit._engine.middleware import run_method
from toolkit._engine.pipeline import Incoming, Outlet, ToolCalls
from toolkit._engine.session import SessionState
from toolkit._engine.telemetry import MCP_PROTOCOL_VERSION, SESSION_ID, ServerSpan, network_attributes
from toolkit._errors import ProtocolError
from toolkit._identity import current_identity
from toolkit._protocol.jsonrpc import INTERNAL_ERROR, encode
from toolkit._protocol.revisions import era_neutral
from toolkit._protocol.types import Implementation, LogLevel
from toolkit._transports.base import INPROC_NETWORK
from toolkit._version import __version__

if TYPE_CHECKING:
    from toolkit._asking.asking import Asker
    from toolkit._engine.registry import Registry

__all__ = ["Downstream", "InProcess"]

logger = logging.getLogger("toolkit")

#: How many rounds of input requests one 2026-07-28 call may ask for, as a `Client`'s default (`max_input_rounds`).
MAX_INPUT_ROUNDS = 10
_CLIENT_INFO = Implementation(name="toolkit", version=__version__)  # who the upstream's Context says is calling


class Downstream(Protocol):
    """What an in-process call reaches of the downstream call it serves (the gateway's call in flight)."""

    async def answer(self, method: str, params: Any, key: str | None = None) -> dict[str, Any]:
        """The downstream client's answer to a question of the upstream's (`elicitation/create`,
        `sampling/createMessage`, `roots/list`): the request's result, or (`key`, 2026-07-28) the input response.

        Raises:
            ProtocolError: the question cannot be answered (the error the upstream's request gets).
        """
        ...

    async def notified(self, method: str, params: Mapping[str, Any]) -> None:
        """A notification of the upstream's call (progress, a log message), for the downstream call."""
        ...


class InProcess:
    """How calls reach a toolkit server mounted in memory through its own pipeline (see the module docstring).

    Args:
        registry: The upstream's registry (`Server.registry`): its tools, options and running lifespan.
        gateway: The mounting server's registry, whose telemetry makes the CLIENT span of each call.
        capabilities: What the gateway declares it answers (its `Handlers`'): the upstream's asking checks its
            questions against them, as against any client's.
    """

    __slots__ = ("_calls", "_capabilities", "_gateway", "_ids", "_in_flight", "_registry", "_sessions")

    def __init__(self, registry: Registry, gateway: Registry, capabilities: dict[str, Any]) -> None:
        self._registry = registry
        self._gateway = gateway
        self._capabilities = capabilities
        self._calls: ToolCalls | None = None  # made when the upstream runs: its options (tool search) are final then
        self._ids = itertools.count(1)
        self._sessions: dict[str, tuple[Era, SessionState]] = {}
        self._in_flight = 0  # its requests being served (on the loop that holds the connection: no lock)

    def serves(self, name: str) -> bool:
        """Whether a call of the tool `name` takes this path: every one but a tool that runs only as a task, whose
        task is the upstream's (the gateway's connection starts it and follows it)."""
        tool = self._registry.tools.get(name)
        return tool is None or tool.task != "required"

    async def call(
        self, name: str, arguments: Mapping[str, Any], downstream: Downstream, version: str
    ) -> dict[str, Any]:
        """The upstream's wire result of calling its tool `name` in the revision `version` (the one the gateway's
        connection speaks): in 2026-07-28, its input requests answered by `downstream` and the call made again,
        as the client does (`call_with_input`), each round a request of its own.

        Raises:
            ProtocolError: the upstream refused the request (an unknown tool, malformed params), as a client is told;
                a question that cannot be answered.
        """
        era, state = self._session(version)

        async def send(params: dict[str, Any]) -> dict[str, Any]:
            return await self._traced(next(self._ids), params, era, state, downstream)

        params = {"name": name, "arguments": dict(arguments)}
        result = await call_with_input(send, params, downstream.answer, max_rounds=MAX_INPUT_ROUNDS)
        return era_neutral(result)  # type: ignore[no-any-return]  # as the client hands a result on

    def _session(self, version: str) -> tuple[Era, SessionState]:
        """The era of `version` and the state its calls are served with: what the gateway's connection would say
        (its capabilities, toolkit's client info, messages from `info` up)."""
        found = self._sessions.get(version)
        if found is None:
            era = era_of(version)
            client_info = _CLIENT_INFO.model_dump(mode="json", exclude_none=True)
            key = "" if era.stateless else secrets.token_urlsafe(16)  # a 2025-11-25 session's own
            state = SessionState(version, self._capabilities, client_info, True, "info", key)
            found = self._sessions[version] = (era, state)
        return found

    async def _traced(
        self, request_id: int, params: dict[str, Any], era: Era, state: SessionState, downstream: Downstream
    ) -> dict[str, Any]:
        """One request, in the gateway's CLIENT span when it traces (the upstream's SERVER span continues it)."""
        telemetry = self._gateway.telemetry
        if telemetry is None:
            return await self._serve(Incoming(request_id, params, state, era, _outlet(self, downstream)))
        attributes = {**network_attributes(INPROC_NETWORK), MCP_PROTOCOL_VERSION: state.version}
        with telemetry.sending("tools/call", params, attributes) as sending:
            incoming = Incoming(request_id, sending.params, state, era, _outlet(self, downstream))
            sending.result = await self._serve(incoming)
        return sending.result  # type: ignore[no-any-return]

    async def _serve(self, incoming: Incoming) -> dict[str, Any]:
        """The request served as the upstream's connection serves one: admitted as one of at most its
        `max_concurrent_requests` in flight, with what a request's task of an in-memory connection starts with (no
        caller identity, no HTTP session, no deadline: those of the gateway's call are the gateway's), in its SERVER
        span when it traces.

        Raises:
            ProtocolError: -32603, too many requests in flight (as its connection answers).
        """
        registry = self._registry
        if self._in_flight >= registry.max_concurrent_requests:
            raise ProtocolError(INTERNAL_ERROR, "Too many requests in flight")
        self._in_flight += 1
        tokens = current_identity.set(None), SESSION_ID.set(None), call_deadline.set(None)
        try:
            telemetry = registry.telemetry
            if telemetry is None:
                return await self._handle(incoming)
            message = {"jsonrpc": "2.0", "id": incoming.id, "method": "tools/call", "params": incoming.params}
            span = telemetry.serve(message, incoming.state.version, INPROC_NETWORK)
            return await _in_span(span, self._handle(incoming), incoming.id)
        finally:
            self._in_flight -= 1
            call_deadline.reset(tokens[2])
            SESSION_ID.reset(tokens[1])
            current_identity.reset(tokens[0])

    async def _handle(self, incoming: Incoming) -> dict[str, Any]:
        """The upstream's `tools/call`, through its request middleware when it has some.

        Raises:
            ProtocolError: the upstream's refusal; an internal error (logged) for a failure of its own.
        """
        registry, calls = self._registry, self._calls
        if calls is None:
            calls = self._calls = ToolCalls(registry)
        try:
            if registry.middleware:
                result: dict[str, Any] = await run_method(registry, calls.answer, incoming, "tools/call")
                return result
            return await calls.answer(incoming)
        except ProtocolError:
            raise
        except Exception:
            logger.exception("internal error while handling 'tools/call'")
            raise ProtocolError(INTERNAL_ERROR, "Internal error") from None

    def context(self, incoming: Incoming, asker: Asker | None) -> Context:
        """The Context of a call served in process: the session's client, its notifications to the call's outlet."""
        registry = self._registry
        return Context(
            request_id=incoming.id,
            client_info=_CLIENT_INFO,
            protocol_version=incoming.state.version,
            progress_token=incoming.id,
            log_level=_from_info,
            notify=functools.partial(incoming.outlet.notify, related=incoming.id),
            show_error_details=registry.show_error_details,
            lifespan_context=registry.lifespan_context,
            asker=asker,
        )


async def _in_span(span: ServerSpan, handled: Any, request_id: Any) -> dict[str, Any]:
    """`handled`'s result, the SERVER span `span` ended with it (with the error's code when it is refused)."""
    result: dict[str, Any] | None = None
    text: str | None = None
    try:
        result = await handled
    except ProtocolError as exc:
        text = encode({"jsonrpc": "2.0", "id": request_id, "error": exc.to_error()})
        raise
    finally:
        span.end(result, text)
    return result


def _outlet(in_process: InProcess, downstream: Downstream) -> Outlet:
    """Where one request's messages go: to `downstream`, through the connection it is served on (`_Served`)."""
    served = _Served(in_process, downstream)
    return Outlet(served.notify, served)


def _from_info() -> LogLevel:
    return "info"


class _Served:
    """The connection one in-process call is served on, as the upstream's pipeline sees it (`ServingConnection`):
    its questions go to the downstream client, its notifications to the downstream call."""

    __slots__ = ("_downstream", "_in_process")

    def __init__(self, in_process: InProcess, downstream: Downstream) -> None:
        self._in_process = in_process
        self._downstream = downstream

    async def notify(self, method: str, params: dict[str, Any] | None, related: Any) -> None:
        await self._downstream.notified(method, params or {})

    async def request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        related: Any = None,
        timeout: float | None = None,  # noqa: ASYNC109 - the contract's signature; the wait is `fail_after(timeout)`
    ) -> Any:
        """A question of the upstream's call, answered by the downstream client.

        Raises:
            ProtocolError: it cannot be answered.
            TimeoutError: no answer within `timeout` seconds.
        """
        with anyio.fail_after(timeout):
            return await self._downstream.answer(method, params)

    def tools_changed(self) -> None:
        """Nothing: the upstream's list changes reach the gateway on its connection (`Upstream`)."""

    def elicitation_complete(self, elicitation_id: str) -> None:
        """Nothing: a URL elicitation's completion is not passed on (the protocol path drops it too)."""

    def context(self, incoming: Incoming, asker: Asker | None) -> Context:
        return self._in_process.context(incoming, asker)
