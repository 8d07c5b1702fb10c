"""`Upstream`: one mounted server's connection, made with toolkit's own `Client`, supervised.

One connection per upstream (one `initialize`, or one `server/discover`), shared by every call: the client multiplexes
concurrent calls by request id. It is opened when the mounting server starts running and closed when it stops. A
connection that is lost (the process died, the HTTP endpoint went away) fails the calls it was running with a tool
error that says so; a process is started again by the next call, an HTTP endpoint is tried again with backoff. While
an upstream is down the mounting server keeps listing the tools it last knew, and its log says which one is down.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import logging
import math
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import Any, Literal, TypeVar

import anyio
import anyio.abc
import anyio.from_thread
import anyio.lowlevel
import anyio.to_thread
from anyio.lowlevel import EventLoopToken
from typing_extensions import NotRequired, TypedDict, Unpack

from toolkit._asking.answer import ElicitResult, SampleResult
from toolkit._asking.handlers import ElicitRequest, Handlers, SampleRequest
from toolkit._asking.mrtr import Suspend
from toolkit._call.context import PY_LEVELS, Context
from toolkit._client.client import Client, ClientOptions, LogMessage
from toolkit._errors import (
    ClientRequestError,
    ConnectionClosedError,
    MessageError,
    ProtocolError,
    ToolError,
    ToolkitError,
)
from toolkit._protocol.jsonrpc import INTERNAL_ERROR
from toolkit._protocol.types import LOG_LEVELS, Root, ToolDefinition
from toolkit._transports.base import UNREACHABLE

from .inprocess import InProcess

__all__ = ["Reconnect", "Upstream", "UpstreamOptions", "upstream_label"]

logger = logging.getLogger("toolkit.gateway")

Reconnect = Literal["on_call", "backoff"]
"""When a lost connection is made again: on the next call (a process), or at once and then with backoff (HTTP)."""

#: Backoff between attempts to reach an HTTP upstream: doubling from the first to the last, in seconds.
FIRST_RETRY, LAST_RETRY = 0.25, 30.0

#: Seconds a 2025-11-25 upstream's call is given to end by itself once its question was declined (its round went to a
#: 2026-07-28 client); one still running then is cancelled.
DECLINED_GRACE = 5.0

# What a failed attempt to connect raises: the process cannot start (OSError), the server answers wrongly or not at
# all (toolkit's errors, a timeout), or an HTTP error of httpx's (an Exception we do not import here).
_CONNECT_ERRORS = (Exception,)

T = TypeVar("T")

ROUND_OF_ITS_OWN = "the question goes to the client in a round of its own"


def _refuse() -> Any:
    """How the upstream's question (an elicitation's is `cancel`) that went to the client in a round is answered.

    Raises:
        ClientRequestError: always.
    """
    raise ClientRequestError(INTERNAL_ERROR, ROUND_OF_ITS_OWN)


class _UpstreamCall:
    """One call in flight upstream: the downstream call's Context (which answers the upstream's questions), and what
    ends it early when a question must go back to a 2026-07-28 client as an input-required round.

    A call may come from another event loop than the one holding the connection: a task of the mounting server's runs
    on the task engine's loop, in a thread of its own. The call is then made on the connection's loop (`Upstream.call`)
    and what it does with the Context (progress, log messages, questions) goes back to the loop it came from (`use`).

    It is also what a call served in process reaches of the downstream (`inprocess.Downstream`): the upstream's
    questions and notifications come to it directly, not through the connection."""

    __slots__ = ("away", "ctx", "live", "scope", "suspended", "upstream")

    def __init__(self, upstream: Upstream, ctx: Context, away: EventLoopToken | None) -> None:
        self.upstream = upstream
        self.ctx = ctx
        self.away = away  # the loop the call came from, when it is not the connection's
        self.scope = anyio.CancelScope()
        self.suspended: Suspend | None = None
        self.live = False
        """Its questions are live requests of a 2025-11-25 session on the connection: one that must go to the
        client in a round is declined, and the call left to end by itself (`Upstream._ask`)."""

    async def progress(self, done: float, total: float | None, message: str | None) -> None:
        """The upstream's progress of this call, reported on the downstream call's Context."""
        with contextlib.suppress(ValueError):  # an upstream's progress that does not increase is dropped
            await self.use(lambda ctx: ctx.report_progress(done, total, message))

    async def answer(self, method: str, params: Any, key: str | None = None) -> dict[str, Any]:
        """A question of the upstream's call served in process, answered as the connection's are (`Upstream._ask`)."""
        token = _calling.set(self)
        try:
            return await self.upstream.questions.answer(method, params, key)
        finally:
            _calling.reset(token)

    async def notified(self, method: str, params: Mapping[str, Any]) -> None:
        """A notification of the upstream's call served in process: its progress, or a log message."""
        if method == "notifications/progress":
            await self.progress(params.get("progress", 0), params.get("total"), params.get("message"))
        elif method == "notifications/message":
            message = LogMessage(params.get("level", "info"), params.get("data"), params.get("logger"))
            await self.upstream.record(self, message)

    async def use(self, act: Callable[[Context], Awaitable[T]]) -> T:
        """`act(ctx)`, on the loop the call came from (through a worker thread of this loop when that is another)."""
        if self.away is None:
            return await act(self.ctx)
        ctx = self.ctx

        async def acted() -> T:
            return await act(ctx)

        return await anyio.to_thread.run_sync(functools.partial(anyio.from_thread.run, acted, token=self.away))


# The call whose upstream request is being made, in its own task: a 2026-07-28 upstream's input requests are
# answered there. A 2025-11-25 upstream's requests come in the client's reader task instead (see `_asking`).
_calling: contextvars.ContextVar[_UpstreamCall | None] = contextvars.ContextVar("toolkit_gateway_call", default=None)


class UpstreamOptions(TypedDict):
    """How an upstream is connected (`Mount` gives them)."""

    reconnect: Reconnect
    """When a lost connection is made again."""
    connect_timeout: float
    """Seconds to wait for a connection, at start and after one was lost."""
    in_process: NotRequired[Callable[[dict[str, Any]], InProcess] | None]
    """For a toolkit server in memory: how to serve its calls in process, given the capabilities the gateway's
    answers declare (`inprocess.py`)."""


class Upstream:
    """A mounted server's one connection: opened by `running()`, shared by `call()`, made again when lost."""

    def __init__(
        self,
        make_client: Callable[[ClientOptions], Client],
        label: str,
        on_tools: Callable[[list[ToolDefinition]], None],
        **options: Unpack[UpstreamOptions],
    ) -> None:
        self._make_client = make_client
        self.label = label
        """How the log and tool errors name the upstream (its server's name, its command, its URL without secrets)."""
        self._reconnect = options["reconnect"]
        self._connect_timeout = options["connect_timeout"]
        self._on_tools = on_tools
        self._client: Client | None = None
        self._down: str | None = None  # why the last attempt to connect failed
        self._attempted = anyio.Event()  # set when an attempt to connect ends, made anew before the next
        self._wanted = anyio.Event()  # a call waits for a connection
        self._lost = anyio.Event()  # the connection in use was lost
        self._tg: anyio.abc.TaskGroup | None = None
        self._calls: set[_UpstreamCall] = set()
        self._listed = False  # the upstream listed its tools once
        self._home: EventLoopToken | None = None  # the event loop that holds the connection (`running`)
        self.questions = Handlers(self._elicit, self._sample, roots=self._roots)
        """How the upstream's questions are answered (by asking the downstream client), and what they declare."""
        # A toolkit server in memory: its calls served by its own pipeline (`inprocess.py`), given what we answer.
        in_process = options.get("in_process")
        self._in_process = in_process(self.questions.capabilities()) if in_process is not None else None

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Connect (the first attempt is waited for, up to the connect timeout) and keep the connection until the
        block ends. An upstream that cannot be reached is logged, not raised: its tools come when it does."""
        self._home = anyio.lowlevel.current_token()
        async with anyio.create_task_group() as tg:
            self._tg = tg
            self._attempted = anyio.Event()
            tg.start_soon(self._supervise)
            await self._attempted.wait()  # bounded: an attempt ends by the connect timeout
            try:
                yield
            finally:
                self._tg = None
                tg.cancel_scope.cancel()

    async def _supervise(self) -> None:
        delay = FIRST_RETRY
        while True:
            self._lost = anyio.Event()
            connected = await self._connect_once()
            if connected:
                delay = FIRST_RETRY
                continue
            self._attempted = anyio.Event()  # the next attempt's: the calls that come from now on wait for it
            # A process is started again by the next call of one of its tools: until it has listed some, no call can
            # come, so it is tried again with backoff as a URL is.
            if self._reconnect == "backoff" or not self._listed:
                await self._until_wanted(delay)
                delay = min(delay * 2, LAST_RETRY)
            else:
                await self._until_wanted(math.inf)

    async def _until_wanted(self, delay: float) -> None:
        """Wait `delay` seconds (the backoff; forever for a process, started by a call) before the next attempt, or
        until a call waits for the connection (it is tried then, once per call that waits: a server back up is reached
        by the first call after it)."""
        self._wanted = anyio.Event()
        with anyio.move_on_after(delay):
            await self._wanted.wait()

    async def _connect_once(self) -> bool:
        """Open one connection and hold it until it is lost: whether it was made."""
        questions = self.questions
        client = self._make_client(
            {
                "on_tools_changed": self._tools_changed,
                "validate_output": False,
                "elicitation_handler": questions.elicitation,
                "sampling_handler": questions.sampling,
                "roots": questions.roots,
                "on_log": self._log,
            }
        )
        made = False
        # The deadline covers connecting and the first listing only (lifted once they are done); a scope around the
        # whole block, since the client's task group must be left inside the scope it was entered in.
        with anyio.CancelScope(deadline=anyio.current_time() + self._connect_timeout) as scope:
            try:
                async with client:
                    # Its messages from `info` up, for this process's log: asked per request in 2026-07-28 (no request
                    # is sent now), with logging/setLevel before, where the server declares logging.
                    if client.era.logs_per_request or "logging" in client.capabilities:
                        await client.set_logging_level("info")
                    definitions = await client.list_tools()
                    scope.deadline = math.inf
                    made = self._listed = True
                    self._on_tools(definitions)
                    await self._hold(client)
            except _CONNECT_ERRORS as exc:
                if not made:
                    self._fail(f"cannot connect: {_reason(exc)}")
                else:
                    logger.debug("upstream %s: closing its lost connection failed", self.label, exc_info=exc)
        if scope.cancelled_caught and not made:
            self._fail(f"no answer within {self._connect_timeout:g} s")
        return made

    async def _hold(self, client: Client) -> None:
        """Serve calls on `client` until it is lost."""
        self._client, self._down = client, None
        logger.info("upstream %s: connected (%s)", self.label, client.protocol_version)
        self._attempted.set()
        try:
            await self._lost.wait()
        finally:
            self._client = None
            self._attempted = anyio.Event()

    def _fail(self, why: str) -> None:
        self._down = why
        logger.error("upstream %s is down: %s; the tools it last listed are still listed", self.label, why)
        self._attempted.set()

    def _tools_changed(self) -> None:
        """The upstream's `list_changed`: list its tools again (in a task of the supervisor's: the client's reader
        is the one that would read the answer)."""
        client, tg = self._client, self._tg
        if client is not None and tg is not None:
            tg.start_soon(self._relist, client)

    async def _relist(self, client: Client) -> None:
        try:
            self._on_tools(await client.list_tools())
        except ToolkitError as exc:
            logger.warning("upstream %s: cannot list its changed tools: %s", self.label, _reason(exc))

    async def _connection(self) -> Client:
        """The connection, made again if it was lost (waited for up to the connect timeout)."""
        client = self._client
        if client is not None:
            return client
        with anyio.move_on_after(self._connect_timeout):
            while self._client is None:
                attempted = self._attempted
                self._wanted.set()
                await attempted.wait()
                if self._client is None:
                    break
        if self._client is None:
            raise ToolError(f"the upstream server {self.label} is down: {self._down or 'not connected yet'}")
        return self._client

    async def call(self, name: str, arguments: Mapping[str, Any], ctx: Context) -> dict[str, Any]:
        """Call the upstream's tool `name`: its wire result; its progress reported on `ctx`, its questions asked
        with `ctx` (of the downstream client, in that client's era).

        Raises:
            ToolError: the upstream cannot be reached, lost its connection during the call, or refused the call.
            Suspend: a question for a 2026-07-28 downstream client (the call ends with an input-required round and
                is made again, the answers replayed, when the client retries).
        """
        home, here = self._home, anyio.lowlevel.current_token()
        if home is None or _loop_of(here) is _loop_of(home):
            return await self._call(name, arguments, _UpstreamCall(self, ctx, None))
        return await self._call_from_away(name, arguments, _UpstreamCall(self, ctx, here), home)

    async def _call_from_away(
        self, name: str, arguments: Mapping[str, Any], call: _UpstreamCall, home: EventLoopToken
    ) -> dict[str, Any]:
        """A call from another event loop (a task's): made on the connection's loop, through a worker thread of this
        one; cancelled there when it is cancelled here."""
        there = functools.partial(anyio.from_thread.run, self._call, name, arguments, call, token=home)
        try:
            return await anyio.to_thread.run_sync(there, abandon_on_cancel=True)
        except anyio.get_cancelled_exc_class():
            with anyio.CancelScope(shield=True):
                cancel = functools.partial(anyio.from_thread.run_sync, call.scope.cancel, token=home)
                await anyio.to_thread.run_sync(cancel)
            raise

    async def _call(self, name: str, arguments: Mapping[str, Any], call: _UpstreamCall) -> dict[str, Any]:
        """`call`, on the connection's loop: served in process when the upstream is a toolkit server in memory
        (`inprocess.py`), else sent on the connection."""
        client = await self._connection()
        in_process = self._in_process
        wire: dict[str, Any] = {}
        try:
            with call.scope:
                if in_process is not None and in_process.serves(name):
                    wire = await in_process.call(name, arguments, call, client.protocol_version or "")
                else:
                    wire = await self._send(client, name, arguments, call)
        except (ProtocolError, MessageError) as exc:
            raise self._failure(call, client, exc) from None
        if call.suspended is not None:
            raise call.suspended
        if call.scope.cancelled_caught:  # cancelled from the loop the call came from
            raise ToolError(f"the call of {name} upstream was cancelled")
        return wire

    async def _send(
        self, client: Client, name: str, arguments: Mapping[str, Any], call: _UpstreamCall
    ) -> dict[str, Any]:
        """The call sent on the connection: its wire result."""
        call.live = not client.era.questions_are_results
        token = _calling.set(call)
        self._calls.add(call)
        try:
            result = await client.call_tool(name, arguments, progress=call.progress)
        finally:
            self._calls.discard(call)
            _calling.reset(token)
        return result.model_dump(mode="json", by_alias=True, exclude_none=True)

    def _failure(self, call: _UpstreamCall, client: Client, exc: ToolkitError) -> BaseException:
        """What a failed upstream request ends the call with: the question it stopped for, or a tool error (the
        connection given up for a new one when the upstream is gone, whether or not the call stopped for a question)."""
        closed = isinstance(exc, ConnectionClosedError)
        down = isinstance(exc, ProtocolError) and exc.data == UNREACHABLE  # over HTTP: down, or its session gone
        if closed or down:
            self._lose(client)
        if call.suspended is not None:
            return call.suspended
        if closed:
            return ToolError(
                f"the upstream server {self.label} closed its connection during the call ({_reason(exc)}); "
                "it is connected again on the next call"
            )
        if down:
            return ToolError(f"the upstream server {self.label} is down: {_reason(exc)}; it is tried again")
        return ToolError(f"the upstream server {self.label} refused the call: {_reason(exc)}")

    async def _log(self, message: LogMessage) -> None:
        """A log message of the upstream's connection, for the call it belongs to (see `_call_in_flight`)."""
        await self.record(self._call_in_flight(), message)

    async def record(self, call: _UpstreamCall | None, message: LogMessage) -> None:
        """A log message of the upstream's: to this process's log, and to the client of `call` (None: of no call
        known), at the level that client asked for."""
        where = f"{self.label} ({message.logger})" if message.logger else self.label
        logger.log(PY_LEVELS.get(message.level, logging.ERROR), "upstream %s: %s", where, message.data)
        if call is not None and message.level in LOG_LEVELS:
            level = message.level
            await call.use(lambda ctx: ctx.log(level, message.data, message.logger))

    # -- the upstream's questions, asked of the downstream client --------------------------------------------------

    def _call_in_flight(self) -> _UpstreamCall | None:
        """The call a message of the upstream's belongs to: the one in whose task it comes (a 2026-07-28 upstream, or
        any over HTTP, sends a call's messages on its response), else the one call in flight (a 2025-11-25 session
        over stdio says nothing of the call a message is for); None when several are in flight."""
        call = _calling.get()
        if call is not None:
            return call
        if len(self._calls) == 1:
            return next(iter(self._calls))
        return None

    def _asking(self) -> _UpstreamCall:
        """The call a question of the upstream's belongs to (`_call_in_flight`).

        Raises:
            ClientRequestError: several calls are in flight and nothing says which one asks.
        """
        call = self._call_in_flight()
        if call is not None:
            return call
        raise ClientRequestError(
            INTERNAL_ERROR,
            f"the gateway cannot tell which of its {len(self._calls)} calls in flight this question belongs to",
        )

    async def _ask(self, question: Callable[[Context], Awaitable[T]], decline: Callable[[], T] = _refuse) -> T:
        """The downstream client's answer to a question of the upstream's, asked with the calling Context.

        A 2026-07-28 client answers in a round of its own (the Context raises `Suspend`), which ends this attempt at
        the call. A call served in process, or a 2026-07-28 upstream's (whose round is already over), is cancelled. A
        2025-11-25 upstream's call on the connection is still running, waiting for the answer: its question is
        declined (`decline`: an elicitation's `cancel`, else an error), and so is any it asks after, and the call is
        left to end by itself, its result dropped; cancelled only if it has not ended `DECLINED_GRACE` seconds later.
        Not cancelled at once: an answer and a cancellation sent together may cross the end of the call they name,
        which some servers do not survive (docs/gateway.md, "What a 2026-07-28 client sees of an upstream's questions").

        Raises:
            ClientRequestError: the question cannot be answered (the error the upstream's request gets).
        """
        call = self._asking()
        if call.live and call.suspended is not None:  # its round went to the client already
            return decline()
        try:
            return await call.use(question)
        except Suspend as suspend:
            call.suspended = suspend
            if call.live:
                call.scope.deadline = min(call.scope.deadline, anyio.current_time() + DECLINED_GRACE)
                return decline()
            call.scope.cancel()
            raise ClientRequestError(INTERNAL_ERROR, ROUND_OF_ITS_OWN) from None
        except ToolkitError as exc:
            if isinstance(exc, ClientRequestError):
                raise
            raise ClientRequestError(INTERNAL_ERROR, _reason(exc)) from None

    async def _elicit(self, request: ElicitRequest) -> ElicitResult[Any]:
        if request.mode == "url":
            url = request.url or ""
            return await self._ask(lambda ctx: ctx.elicit_url(request.message, url), ElicitResult.cancel)
        # The spec's form keys only: the Python SDK 1.x also sends its model's `title` (pydantic's JSON Schema).
        given = request.requested_schema or {"type": "object", "properties": {}}
        schema = {key: value for key, value in given.items() if key in ("$schema", "type", "properties", "required")}
        return await self._ask(lambda ctx: ctx.elicit(request.message, schema), ElicitResult.cancel)

    async def _sample(self, request: SampleRequest) -> SampleResult:
        options: dict[str, Any] = {
            "max_tokens": request.max_tokens,
            "system_prompt": request.system_prompt,
            "temperature": request.temperature,
            "stop_sequences": request.stop_sequences,
            "model_preferences": request.model_preferences,
            "metadata": request.metadata,
            "include_context": request.include_context,
            "tools": request.tools,
            "tool_choice": (request.tool_choice or {}).get("mode"),
        }
        given = {name: value for name, value in options.items() if value is not None}
        return await self._ask(lambda ctx: ctx.sample(list(request.messages), **given))

    async def _roots(self) -> list[Root]:
        roots = await self._ask(lambda ctx: ctx.list_roots())
        return list(roots)

    def _lose(self, client: Client) -> None:
        if self._client is client:
            self._client = None
            self._down = "its connection was lost"
            logger.error("upstream %s is down: its connection was lost", self.label)
            self._lost.set()


def _loop_of(token: EventLoopToken) -> object:
    """The event loop a token stands for (two tokens of one loop are two objects)."""
    return token.native_token


def _reason(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.partition("\n")[0][:300]


def upstream_label(target: object) -> str:
    """A name for the log and for errors: a server's name, a command's words, a URL without credentials or query."""
    if isinstance(target, str):
        from urllib.parse import urlsplit

        parts = urlsplit(target)
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
        return f"{parts.scheme}://{host}{port}{parts.path}"
    if isinstance(target, Sequence):
        return " ".join(str(word) for word in target)
    return repr(getattr(target, "name", target))
