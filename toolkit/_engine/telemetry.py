"""OpenTelemetry: the spans and metrics of the OpenTelemetry semantic conventions for MCP, and trace context in `_meta`.

On only when the application configured OpenTelemetry: a tracer or meter provider given to the `Server` or `Client`,
or OpenTelemetry's global one. Whether it is on is worked out when a server starts running (`Registry.running`: each
`Client(server)`, `serve`, and the HTTP app's lifespan startup) and when a client connects, never per call; the
call path then reads one attribute (`registry.telemetry`, `None` when off). The global provider is looked for only
if `opentelemetry.trace` (or `.metrics`) is already imported: an application that set a provider imported it, so a
process without OpenTelemetry never imports it here. A provider whose class is the API's own (its proxy, before
anything was set, or its no-op) counts as none.

The conventions (`docs/gen-ai/mcp.md` of open-telemetry/semantic-conventions-genai): a SERVER span per request and
notification received, named `{mcp.method.name} {gen_ai.tool.name}` for a tool call, else `{mcp.method.name}`; a
CLIENT span per request sent (by `Client`, and by the server when it asks its client); the context propagated in
`params._meta` (`traceparent`, `tracestate`, `baggage`, SEP-414), the receiver's span a child of the sender's. Every
attribute and metric name written here is a constant below: a test checks them against the conventions' own list.
"""

from __future__ import annotations

import contextvars
import sys
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import anyio

from toolkit._errors import ProtocolError
from toolkit._protocol.jsonrpc import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    RESOURCE_NOT_FOUND,
    decode,
    encode,
)
from toolkit._protocol.meta import TRACE_KEYS, VERSION_KEY
from toolkit._transports.base import HTTP_NETWORK, Network

__all__ = [
    "ATTRIBUTES",
    "HTTP_NETWORK",
    "METRICS",
    "SESSION_ID",
    "Sending",
    "ServerSpan",
    "Telemetry",
    "find",
    "network_attributes",
    "network_of",
    "sender_attributes",
]

# -- the conventions' names, each written once -------------------------------------------------------------------

MCP_METHOD_NAME = "mcp.method.name"
MCP_PROTOCOL_VERSION = "mcp.protocol.version"
MCP_SESSION_ID = "mcp.session.id"
GEN_AI_TOOL_NAME = "gen_ai.tool.name"
GEN_AI_OPERATION_NAME = "gen_ai.operation.name"
JSONRPC_REQUEST_ID = "jsonrpc.request.id"
RPC_RESPONSE_STATUS_CODE = "rpc.response.status_code"
ERROR_TYPE = "error.type"
NETWORK_TRANSPORT = "network.transport"
NETWORK_PROTOCOL_NAME = "network.protocol.name"

#: Every attribute name toolkit writes on a span or a metric point.
ATTRIBUTES = frozenset(
    {
        MCP_METHOD_NAME,
        MCP_PROTOCOL_VERSION,
        MCP_SESSION_ID,
        GEN_AI_TOOL_NAME,
        GEN_AI_OPERATION_NAME,
        JSONRPC_REQUEST_ID,
        RPC_RESPONSE_STATUS_CODE,
        ERROR_TYPE,
        NETWORK_TRANSPORT,
        NETWORK_PROTOCOL_NAME,
    }
)

SERVER_OPERATION_DURATION = "mcp.server.operation.duration"
CLIENT_OPERATION_DURATION = "mcp.client.operation.duration"
SERVER_SESSION_DURATION = "mcp.server.session.duration"
CLIENT_SESSION_DURATION = "mcp.client.session.duration"
#: Every metric toolkit records (histograms, in seconds).
METRICS = (SERVER_OPERATION_DURATION, CLIENT_OPERATION_DURATION, SERVER_SESSION_DURATION, CLIENT_SESSION_DURATION)

EXECUTE_TOOL = "execute_tool"  # gen_ai.operation.name of a tool call
TOOL_ERROR = "tool_error"  # error.type of a CallToolResult with isError: true
CANCELLED = "cancelled"  # error.type of a request cancelled before its answer (no JSON-RPC code: a custom value)
# The conventions' advice for the operation histograms (seconds).
_BUCKETS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300)
# Codes that say the caller sent a request the receiver could not serve: on the server's side they are not errors
# of the server (the conventions' mcp.server.status.attributes); the client counts every code as an error.
_CALLER_ERRORS = frozenset({PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, RESOURCE_NOT_FOUND})
_INSTRUMENTATION = "toolkit"
_SPAN_ONLY = frozenset({JSONRPC_REQUEST_ID, MCP_SESSION_ID})  # one value per request or session: not on metrics

#: The 2025-11-25 HTTP session id of the request being served (set by the HTTP app only while telemetry is on).
SESSION_ID: contextvars.ContextVar[str | None] = contextvars.ContextVar("toolkit_mcp_session_id", default=None)

#: network.transport of each kind of transport: stdio is a pipe, HTTP runs on TCP; in memory, `inproc` (the older
#: conventions' value for in-process communication: the conventions allow a custom value where none applies).
PIPE, TCP, INPROC = "pipe", "tcp", "inproc"


def _configured(provider: Any) -> bool:
    """Whether a provider is one the application set: not the API's own proxy or no-op (their classes live in the
    API's package; an SDK's, or any other implementation's, do not)."""
    return not type(provider).__module__.startswith(("opentelemetry.trace", "opentelemetry.metrics"))


def find(tracer_provider: Any, meter_provider: Any, known: Telemetry | None = None) -> Telemetry | None:
    """The telemetry to use, or None when OpenTelemetry is not configured (`known`: the one in use, kept if its
    providers are still the ones to use, so that its tracer and instruments are made once)."""
    trace = sys.modules.get("opentelemetry.trace")
    if tracer_provider is None and trace is not None:
        provider = trace.get_tracer_provider()
        tracer_provider = provider if _configured(provider) else None
    metrics = sys.modules.get("opentelemetry.metrics")
    if meter_provider is None and metrics is not None:
        provider = metrics.get_meter_provider()
        meter_provider = provider if _configured(provider) else None
    if tracer_provider is None and meter_provider is None:
        return None
    if known is not None and known.providers == (tracer_provider, meter_provider):
        return known
    return Telemetry(tracer_provider, meter_provider)


_UNKNOWN: Network = (None, None)


def network_of(transport: Any) -> Network:
    """(network.transport, network.protocol.name) of a server connection's transport: what it declares (its
    `network`: stdio's streams, the in-memory pair, the HTTP app's exchanges), else unknown."""
    transport = getattr(transport, "wrapped", transport)  # `run()`'s stdio, which SIGTERM can end
    network: Network = getattr(transport, "network", _UNKNOWN)
    return network


class Telemetry:
    """A tracer and the four histograms of one pair of providers, made once; the spans of requests and sessions."""

    def __init__(self, tracer_provider: Any, meter_provider: Any) -> None:
        from opentelemetry import context, propagate, trace

        from toolkit._version import __version__

        self.providers = (tracer_provider, meter_provider)
        self._trace = trace
        self._context = context
        self._propagate = propagate
        self.tracer = (
            tracer_provider.get_tracer(_INSTRUMENTATION, __version__)
            if tracer_provider is not None
            else trace.NoOpTracer()
        )
        self._histograms: dict[str, Any] = {}
        if meter_provider is not None:
            meter = meter_provider.get_meter(_INSTRUMENTATION, __version__)
            for name in METRICS:
                advice = _BUCKETS if name.endswith("operation.duration") else None
                self._histograms[name] = meter.create_histogram(
                    name, unit="s", description=_DESCRIPTIONS[name], explicit_bucket_boundaries_advisory=advice
                )

    # -- the server's side -------------------------------------------------------------------------------------

    def serve(
        self, message: Mapping[str, Any], version: str | None, network: tuple[str | None, str | None]
    ) -> ServerSpan:
        """Start the SERVER span of one request or notification received, current until `ServerSpan.end`."""
        method: str = message["method"]
        params = message.get("params")
        params = params if isinstance(params, dict) else {}
        meta = params.get("_meta")
        meta = meta if isinstance(meta, dict) else {}
        if version is None and isinstance(meta.get(VERSION_KEY), str):
            version = meta[VERSION_KEY]
        attributes = _request_attributes(method, params, version, network)
        request_id = message.get("id")
        if request_id is not None:
            attributes[JSONRPC_REQUEST_ID] = str(request_id)
        session_id = SESSION_ID.get()
        if session_id is not None:
            attributes[MCP_SESSION_ID] = session_id
        parent = self._extract(meta)
        ambient = self._trace.get_current_span().get_span_context()
        links = [self._trace.Link(ambient)] if ambient.is_valid and parent is not None else None
        span = self.tracer.start_span(
            _span_name(method, attributes), parent, self._trace.SpanKind.SERVER, attributes, links
        )
        token = self._context.attach(self._trace.set_span_in_context(span, parent))
        return ServerSpan(self, span, token, attributes)

    def notified(self, message: Mapping[str, Any], version: str | None, network: tuple[str | None, str | None]) -> None:
        """The SERVER span of a notification received, handled at once (nothing runs inside it)."""
        self.serve(message, version, network).end({}, None)

    async def answering(
        self,
        answer: Callable[[str, Any], Awaitable[dict[str, Any]]],
        method: str,
        params: Any,
        version: str | None,
        network: tuple[str | None, str | None],
    ) -> dict[str, Any]:
        """A client answering its server's request (a question a tool asks, 2025-11-25): `answer(method, params)`
        inside a SERVER span, the child of the server's CLIENT span for it (the conventions: the receiver's side)."""
        served = self.serve({"method": method, "params": params}, version, network)
        result: dict[str, Any] | None = None
        error: str | None = None
        try:
            result = await answer(method, params)
            return result
        except ProtocolError as exc:
            error = encode({"error": exc.to_error()})
            raise
        finally:
            served.end(result, error)

    def _extract(self, meta: Mapping[str, Any]) -> Any:
        """The context sent in `_meta`, or None when it carries none (the span then has the ambient parent)."""
        carrier = {key: meta[key] for key in TRACE_KEYS if isinstance(meta.get(key), str)}
        if not carrier:
            return None
        extracted = self._propagate.extract(carrier)
        return extracted if self._trace.get_current_span(extracted).get_span_context().is_valid else None

    def record(self, name: str, seconds: float, attributes: Mapping[str, Any]) -> None:
        histogram = self._histograms.get(name)
        if histogram is not None:
            histogram.record(seconds, {k: v for k, v in attributes.items() if k not in _SPAN_ONLY})

    def session_ended(
        self, name: str, seconds: float, version: str | None, network: tuple[str | None, str | None]
    ) -> None:
        """Record the duration of a session (the handshake era's: `initialize` to the end of the connection)."""
        attributes: dict[str, Any] = {}
        if version is not None:
            attributes[MCP_PROTOCOL_VERSION] = version
        if network[1] is not None:  # the session metrics have network.protocol.name, not network.transport
            attributes[NETWORK_PROTOCOL_NAME] = network[1]
        self.record(name, seconds, attributes)

    # -- the sender's side (toolkit's Client, and a server asking its client) ------------------------------------

    @contextmanager
    def sending(self, method: str, params: dict[str, Any], attributes: dict[str, Any]) -> Iterator[Sending]:
        """The CLIENT span of a request sent, current inside: yields what to send it with (`Sending`); a
        `ProtocolError` raised inside sets the error attributes, and so does a result with `isError: true`."""
        attributes = {**_request_attributes(method, params, None, None), **attributes}
        started = time.perf_counter()
        with self.tracer.start_as_current_span(
            _span_name(method, attributes),
            kind=self._trace.SpanKind.CLIENT,
            attributes=attributes,
            record_exception=False,
            set_status_on_exception=False,
        ) as span:
            meta = dict(params.get("_meta") or {})
            self._propagate.inject(meta)
            sending = Sending({**params, "_meta": meta} if meta else params, span)
            try:
                yield sending
            except ProtocolError as exc:
                _failed(span, attributes, str(exc.code), exc.message, str(exc.code))
                raise
            except BaseException as exc:
                _failed(span, attributes, _error_name(exc), str(exc), None)
                raise
            else:
                result = sending.result
                if isinstance(result, dict) and result.get("isError") is True:
                    _failed(span, attributes, TOOL_ERROR, None, None)
            finally:
                self.record(CLIENT_OPERATION_DURATION, time.perf_counter() - started, attributes)


class Sending:
    """A request being sent inside its CLIENT span: its params (the trace context in their `_meta`), a wrapper of
    the function that sends it (which records the request's id, given only when it is sent), and its result."""

    __slots__ = ("_span", "params", "result")

    def __init__(self, params: dict[str, Any], span: Any) -> None:
        self.params = params
        self._span = span
        self.result: Any = None

    def stamped(self, send: Callable[[dict[str, Any]], Awaitable[None]]) -> Callable[[dict[str, Any]], Awaitable[None]]:
        """`send`, recording the id the request goes out with (jsonrpc.request.id) on the span."""

        async def stamp(message: dict[str, Any]) -> None:
            request_id = message.get("id")
            if request_id is not None:
                self._span.set_attribute(JSONRPC_REQUEST_ID, str(request_id))
            await send(message)

        return stamp


class ServerSpan:
    """The SERVER span of one request being served: ended, with its outcome, by `end` (`Connection._respond`)."""

    __slots__ = ("_attributes", "_span", "_started", "_telemetry", "_token")

    def __init__(self, telemetry: Telemetry, span: Any, token: object, attributes: dict[str, Any]) -> None:
        self._telemetry = telemetry
        self._span = span
        self._token = token
        self._attributes = attributes
        self._started = time.perf_counter()

    def end(self, result: Any, text: str | None) -> None:
        """End the span: `result` is the handler's (None when it failed or was cancelled), `text` the reply."""
        span, attributes = self._span, self._attributes
        try:
            if result is None and text is not None:  # an error response
                error = decode(text)["error"]
                code = error["code"]
                attributes[RPC_RESPONSE_STATUS_CODE] = str(code)
                span.set_attribute(RPC_RESPONSE_STATUS_CODE, str(code))
                if code not in _CALLER_ERRORS:
                    _failed(span, attributes, str(code), error.get("message"), None)
            elif result is None:
                _failed(span, attributes, CANCELLED, "cancelled", None)
            elif isinstance(result, dict) and result.get("isError") is True:
                _failed(span, attributes, TOOL_ERROR, None, None)
        finally:
            self._telemetry._context.detach(self._token)
            span.end()
            self._telemetry.record(SERVER_OPERATION_DURATION, time.perf_counter() - self._started, attributes)


def sender_attributes(session: Any, network: tuple[str | None, str | None]) -> dict[str, Any]:
    """The attributes of a request the server sends its client: the session's revision, the transport."""
    attributes: dict[str, Any] = {}
    if session is not None:
        attributes[MCP_PROTOCOL_VERSION] = session.version
    session_id = SESSION_ID.get()
    if session_id is not None:
        attributes[MCP_SESSION_ID] = session_id
    _network(attributes, network)
    return attributes


def _request_attributes(
    method: str, params: Mapping[str, Any], version: str | None, network: tuple[str | None, str | None] | None
) -> dict[str, Any]:
    attributes: dict[str, Any] = {MCP_METHOD_NAME: method}
    if method == "tools/call":
        name = params.get("name")
        if isinstance(name, str):
            attributes[GEN_AI_TOOL_NAME] = name
        attributes[GEN_AI_OPERATION_NAME] = EXECUTE_TOOL
    if version is not None:
        attributes[MCP_PROTOCOL_VERSION] = version
    if network is not None:
        _network(attributes, network)
    return attributes


def network_attributes(network: tuple[str | None, str | None]) -> dict[str, Any]:
    """network.transport and network.protocol.name, where known."""
    attributes: dict[str, Any] = {}
    _network(attributes, network)
    return attributes


def _network(attributes: dict[str, Any], network: tuple[str | None, str | None]) -> None:
    transport, protocol = network
    if transport is not None:
        attributes[NETWORK_TRANSPORT] = transport
    if protocol is not None:
        attributes[NETWORK_PROTOCOL_NAME] = protocol


def _span_name(method: str, attributes: Mapping[str, Any]) -> str:
    """`{mcp.method.name} {target}`, the target a tool's name; else the method alone."""
    tool = attributes.get(GEN_AI_TOOL_NAME)
    return f"{method} {tool}" if tool is not None else method


def _failed(span: Any, attributes: dict[str, Any], error_type: str, description: str | None, code: str | None) -> None:
    from opentelemetry.trace import Status, StatusCode

    attributes[ERROR_TYPE] = error_type
    span.set_attribute(ERROR_TYPE, error_type)
    if code is not None:
        attributes[RPC_RESPONSE_STATUS_CODE] = code
        span.set_attribute(RPC_RESPONSE_STATUS_CODE, code)
    span.set_status(Status(StatusCode.ERROR, description))


def _error_name(exc: BaseException) -> str:
    """error.type of a failure with no JSON-RPC code: `cancelled` when the caller stopped waiting (a deadline around
    the call included: the request is cancelled, then), `timeout` for the request's own deadline, else the
    exception's qualified class name (the conventions' advice)."""
    kind = type(exc)
    if isinstance(exc, anyio.get_cancelled_exc_class()):
        return CANCELLED
    if isinstance(exc, TimeoutError):
        return "timeout"
    return kind.__qualname__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"


_DESCRIPTIONS = {
    SERVER_OPERATION_DURATION: "MCP request or notification duration as observed on the receiver.",
    CLIENT_OPERATION_DURATION: "The duration of the MCP request or notification as observed on the sender.",
    SERVER_SESSION_DURATION: "The duration of the MCP session as observed on the MCP server.",
    CLIENT_SESSION_DURATION: "The duration of the MCP session as observed on the MCP client.",
}
