"""Context: what a running tool can ask of the request it serves."""

from __future__ import annotations

import logging
import threading
from collections.abc import Awaitable, Callable, Coroutine, Generator, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Generic, Literal, TypedDict, overload

import anyio.from_thread
import anyio.lowlevel
from typing_extensions import TypeVar, Unpack

from toolkit._asking.asking import Asker, CallThread, confirm_call
from toolkit._asking.elicitation import empty_form
from toolkit._asking.mrtr import Suspend
from toolkit._identity import Identity, current_identity
from toolkit._markers import ContextMarker
from toolkit._protocol.types import LOG_LEVELS, Implementation, LogLevel

if TYPE_CHECKING:
    from types import TracebackType

    from toolkit._asking.answer import ElicitResult, Roots, SampleResult
    from toolkit._asking.elicitation import Form
    from toolkit._asking.sampling import MessagesInput, SampleOptions

__all__ = [
    "LOG_LEVELS",
    "PY_LEVELS",
    "Context",
    "LogLevel",
    "Notify",
    "ServedRequest",
    "Together",
    "bind_to_loop",
    "confirm",
    "mark_cancelled",
]

_RANK = {level: rank for rank, level in enumerate(LOG_LEVELS)}
PY_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "notice": logging.INFO, "warning": logging.WARNING}

Notify = Callable[[str, dict[str, Any]], Awaitable[None]]


class ServedRequest(TypedDict, total=False):
    """What the connection tells a Context of the request it serves (a detached Context has none of it)."""

    request_id: str | int | None
    client_info: Implementation | Callable[[], Implementation | None] | None
    """The client's self-description, or how to read it (from the request, once a tool asks for it)."""
    protocol_version: str | None
    progress_token: str | int | None
    log_level: Callable[[], LogLevel | None] | None
    notify: Notify | None
    close_stream: Callable[[], Coroutine[Any, Any, None]] | None
    show_error_details: bool
    asker: Asker | None


_logger = logging.getLogger("toolkit.tools")  # a detached Context's log messages (a task's too)

#: The type of the lifespan's value; a bare `Context` is `Context[Any]`.
StateT = TypeVar("StateT", default=Any)
FormT = TypeVar("FormT")
_NO_STATE: Any = object()
_NO_CAPABILITIES: Mapping[str, Any] = MappingProxyType({})


class Context(ContextMarker, Generic[StateT]):
    """What a tool can ask of the request it serves: progress, logging, cancellation, who is calling, the server's
    state.

    Declare a parameter annotated `Context` (or `Context | None`) and toolkit passes it in; it never appears in
    the tool's schema. `Context[AppState]` says what the server's lifespan yields, so that type checkers check
    the use of [`lifespan_context`][toolkit.Context.lifespan_context]; toolkit treats it as `Context`. Outside a
    server (calling `tool.run()` directly) the context is detached: progress goes nowhere and log messages go to
    Python's `logging` (logger `toolkit.tools`).

    An async tool awaits the methods. A sync tool, which runs on a worker thread, calls them without `await`: each
    call is sent on the event loop's thread and returns once it is sent. A sync tool made with
    `run_in_thread=False` runs on the event loop itself and cannot wait for anything, so its calls raise
    `RuntimeError`.

    Example:
        ```python
        from toolkit import Context, tool

        @tool
        async def crawl(pages: int, ctx: Context) -> str:
            for done in range(1, pages + 1):
                await ctx.report_progress(done, total=pages)
            await ctx.info(f"crawled {pages} pages")
            return "done"

        @tool
        def scan(files: int, ctx: Context) -> str:
            for done in range(1, files + 1):
                if ctx.cancelled:
                    return "stopped"
                ctx.report_progress(done, total=files)
            ctx.info(f"scanned {files} files")
            return "done"
        ```
    """

    __slots__ = (
        "_asker",
        "_cancelled",
        "_client_info",
        "_close_stream",
        "_last_progress",
        "_lifespan_context",
        "_log_level",
        "_loop_thread",
        "_notify",
        "_progress_token",
        "_show_error_details",
        "_sync_on_loop",
        "_token",
        "protocol_version",
        "request_id",
    )

    def __init__(self, *, lifespan_context: StateT = _NO_STATE, **served: Unpack[ServedRequest]) -> None:
        self.request_id = served.get("request_id")
        """The JSON-RPC id of the request being served (`None` when detached)."""
        self._client_info = served.get("client_info")
        self.protocol_version = served.get("protocol_version")
        """The protocol revision of this request."""
        self._progress_token = served.get("progress_token")
        self._log_level = served.get("log_level")
        self._notify = served.get("notify")
        # How the call ends its HTTP response early (2025-11-25 Streamable HTTP, SEP-1699); None elsewhere.
        self._close_stream = served.get("close_stream")
        # The server's opt-in: exception details reach the client.
        self._show_error_details = served.get("show_error_details", False)
        self._last_progress: float | None = None
        self._loop_thread = threading.get_ident()  # where the event loop runs: elsewhere, calls are sent from there
        self._token: anyio.lowlevel.EventLoopToken | None = None  # the way back to the loop, for sync tools
        self._sync_on_loop = False  # a sync tool running on the loop itself (run_in_thread=False)
        self._cancelled = False
        self._lifespan_context = lifespan_context
        self._asker = served.get("asker")  # how this call asks the client; None when detached

    @property
    def client_info(self) -> Implementation | None:
        """The client's name and version, as it reported them (read from the request when a tool first asks)."""
        info = self._client_info
        if callable(info):
            info = self._client_info = info()
        return info

    @property
    def lifespan_context(self) -> StateT:
        """What the server's lifespan yielded (`None` for a server without one), shared by every call.

        A plain attribute read, so sync tools on worker threads use it as async tools do. In a unit test that
        calls `tool.run(arguments, Context(lifespan_context=fake))`, it is the value given.

        Raises:
            RuntimeError: the context is detached and was given no `lifespan_context`.
        """
        if self._lifespan_context is _NO_STATE:
            raise RuntimeError(
                "this Context has no lifespan state: the tool is not running in a server; pass "
                "Context(lifespan_context=...) to tool.run() to give it one"
            )
        return self._lifespan_context

    @property
    def identity(self) -> Identity | None:
        """Who is calling: the [`Identity`][toolkit.Identity] the HTTP app's `auth=` verifier gave the request's
        bearer token; `None` over stdio and in memory, and over HTTP without `auth=`."""
        return current_identity.get()

    @property
    def cancelled(self) -> bool:
        """True once the call is cancelled (by the client, by `tool_timeout`, or because the server is closing).

        Python cannot interrupt a thread, so a sync tool goes on running after its call is cancelled; its result
        is dropped, and from then on its progress and log messages are too. A long sync tool should check this and
        return early. An async tool is cancelled at its next `await` instead, by the event loop.
        """
        return self._cancelled

    def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> Awaitable[None]:
        """Tell the client how far the call has got: `await` it in an async tool, call it in a sync one.

        Sent only when the client asked for progress (its request carried a progress token); otherwise a no-op.

        Args:
            progress: Work done so far; must increase with every report.
            total: Total work, when known.
            message: A short human-readable status.

        Raises:
            ValueError: `progress` did not increase.
            RuntimeError: called from a sync tool made with `run_in_thread=False`.
        """
        if self._last_progress is not None and progress <= self._last_progress:
            raise ValueError(f"progress must increase: {progress} after {self._last_progress}")
        self._last_progress = progress
        if self._notify is None or self._progress_token is None:
            return self._deliver(None, _NO_PARAMS)
        params: dict[str, Any] = {"progressToken": self._progress_token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        return self._deliver("notifications/progress", params)

    def log(self, level: LogLevel, data: Any, logger: str | None = None) -> Awaitable[None]:
        """Send a log message to the client, if it asked for messages at this level or above.

        `await` it in an async tool; call it in a sync one.

        Args:
            level: One of `debug`, `info`, `notice`, `warning`, `error`, `critical`, `alert`, `emergency`.
            data: Any JSON-serialisable value (usually a string). Never put secrets in it.
            logger: The name of the component logging.

        Raises:
            ValueError: unknown level.
            RuntimeError: called from a sync tool made with `run_in_thread=False`.
        """
        rank = _RANK.get(level)
        if rank is None:
            raise ValueError(f"unknown log level {level!r}; use one of {', '.join(LOG_LEVELS)}")
        if self._notify is None:
            _logger.log(PY_LEVELS.get(level, logging.ERROR), "%s", data)
            return self._deliver(None, _NO_PARAMS)
        threshold = self._log_level() if self._log_level is not None else None
        if threshold is None or rank < _RANK[threshold]:
            return self._deliver(None, _NO_PARAMS)
        params: dict[str, Any] = {"level": level, "data": data}
        if logger is not None:
            params["logger"] = logger
        return self._deliver("notifications/message", params)

    def debug(self, data: Any, logger: str | None = None) -> Awaitable[None]:
        """Log at `debug` level."""
        return self.log("debug", data, logger)

    def info(self, data: Any, logger: str | None = None) -> Awaitable[None]:
        """Log at `info` level."""
        return self.log("info", data, logger)

    def warning(self, data: Any, logger: str | None = None) -> Awaitable[None]:
        """Log at `warning` level."""
        return self.log("warning", data, logger)

    def error(self, data: Any, logger: str | None = None) -> Awaitable[None]:
        """Log at `error` level."""
        return self.log("error", data, logger)

    def close_sse_stream(self) -> Awaitable[None]:
        """End this call's HTTP response now; the call goes on, and the client gets the rest by reconnecting.

        2025-11-25 Streamable HTTP (SEP-1699 polling): the server may close the connection of a call's SSE stream
        without ending the stream. The client reconnects with GET and `Last-Event-ID` after the `retry` delay and
        receives what the call sent meanwhile, up to its result. A long call thus holds no connection (and no proxy
        timeout) while it works. A no-op everywhere else: stdio, memory, 2026-07-28 requests, sessions of older
        revisions, and clients that take only JSON. `await` it in an async tool; call it in a sync one.
        See [resumption](http.md#resumption).
        """
        closer = self._close_stream
        if closer is None:
            return self._deliver(None, _NO_PARAMS)
        if threading.get_ident() != self._loop_thread:
            anyio.from_thread.run(closer, token=self._token)
            return _SENT
        if self._sync_on_loop:
            return self._deliver(None, _NO_PARAMS)  # raises: such a tool cannot wait for the loop
        return closer()

    # -- asking the client (docs/human-in-the-loop.md) -------------------------------------------------

    @property
    def client_capabilities(self) -> Mapping[str, Any]:
        """What the client declared it can do (at `initialize`, or in this request's `_meta`), read-only."""
        if self._asker is None:
            return _NO_CAPABILITIES
        return MappingProxyType(dict(self._asker.capabilities))

    def can_elicit(self, mode: Literal["form", "url"] = "form") -> bool:
        """Whether [`elicit`][toolkit.Context.elicit] (`"form"`) or [`elicit_url`][toolkit.Context.elicit_url]
        (`"url"`) can reach the user: the client declared the mode, and the revision has it."""
        return self._asker is not None and self._asker.can_elicit(mode)

    def can_sample(self, *, tools: bool = False) -> bool:
        """Whether [`sample`][toolkit.Context.sample] can reach the client's model (with `tools`, too)."""
        return self._asker is not None and self._asker.can_sample(tools=tools)

    @overload
    def elicit(
        self, message: str, schema: type[FormT] | Form[FormT], *, key: str | None = None, timeout: float | None = None
    ) -> ElicitResult[FormT]: ...
    @overload
    def elicit(
        self, message: str, schema: Mapping[str, Any], *, key: str | None = None, timeout: float | None = None
    ) -> ElicitResult[dict[str, Any]]: ...
    def elicit(self, message: str, schema: Any, *, key: str | None = None, timeout: float | None = None) -> Any:
        """Ask the user to fill in a form, and wait for the answer: `await` it in an async tool, call it in a sync one.

        Args:
            message: The question, shown with the form.
            schema: The form: a pydantic model, a dataclass or a TypedDict of flat fields, a
                [`Form`][toolkit.Form], or a raw `requestedSchema` dict.
            key: The question's key in 2026-07-28 input requests (default: `elicitation<n>`, by position).
            timeout: Seconds to wait for the answer (handshake era); default `Server(client_request_timeout=...)`.

        Returns:
            An [`ElicitResult`][toolkit.ElicitResult]: `action` and, on accept, `data` validated into the form's type.

        Raises:
            ClientCapabilityError: the client cannot elicit in form mode (check with `can_elicit()`).
            ClientRequestError: the client answered with an error.
            ElicitationError: the accepted answer does not fit the form.
            ElicitationSchemaError: the schema is outside the spec's subset.
            TimeoutError: no answer within `timeout`.
            concurrent.futures.CancelledError: (sync tools) the call was cancelled while, or before, it asked.
        """
        return self._require_asker().elicit(self._thread(), message, schema, key, timeout)

    def elicit_url(
        self, message: str, url: str, *, key: str | None = None, timeout: float | None = None
    ) -> ElicitResult[None]:
        """Ask the user to go to `url` (sign-in, payment, anything that must not pass through the client).

        `accept` means the user agreed to open the page, not that the flow there is complete. Needs a client that
        declared URL-mode elicitation (2025-11-25 and later).

        Raises:
            ValueError: `url` is not an absolute URL.
            ClientCapabilityError: the client cannot elicit in URL mode.
            ClientRequestError: the client answered with an error.
            TimeoutError: no answer within `timeout`.
        """
        return self._require_asker().elicit_url(self._thread(), message, url, key, timeout)

    def sample(
        self,
        messages: MessagesInput,
        *,
        key: str | None = None,
        timeout: float | None = None,
        **options: Unpack[SampleOptions],
    ) -> SampleResult:
        """Ask the client's model for a completion: `await` it in an async tool, call it in a sync one.

        **Deprecated in 2026-07-28** (SEP-2577): the protocol keeps sampling working but advises new servers to
        call a model provider's API directly. toolkit supports it in every revision.

        Args:
            messages: A string (one user message), or a list of strings, `SamplingMessage`s or their dicts.
            key: The request's key in 2026-07-28 input requests (default: `sampling<n>`).
            timeout: Seconds to wait (handshake era); default `Server(client_request_timeout=...)`.
            **options: What to ask of the model ([`SampleOptions`][toolkit.SampleOptions]): `max_tokens`
                (required), `system_prompt`, `temperature`, `stop_sequences`, `model_preferences`, `metadata`,
                `include_context`, and `tools` with `tool_choice` (2025-11-25 and later, for clients that declare
                `sampling.tools`; see [tools in sampling](human-in-the-loop.md#tools-in-sampling)).

        Raises:
            ClientCapabilityError: the client cannot sample (or cannot with tools).
            ClientRequestError: the client answered with an error (`-1`: the user rejected the request).
            ValueError: malformed messages, or content the revision cannot carry.
            TypeError: an option that is not one of `SampleOptions`.
            TimeoutError: no answer within `timeout`.
            concurrent.futures.CancelledError: (sync tools) the call was cancelled while, or before, it asked.
        """
        return self._require_asker().sample(self._thread(), messages, key, timeout, options)

    def confirm(self, message: str, *, key: str | None = None, timeout: float | None = None) -> ElicitResult[Any]:
        """Ask the user a yes-or-no question (an elicitation with an empty form): `accepted` means yes. `await` it in
        an async tool, call it in a sync one. Raises as [`elicit`][toolkit.Context.elicit] does."""
        return self._require_asker().elicit(self._thread(), message, empty_form(), key, timeout)

    def can_list_roots(self) -> bool:
        """Whether [`list_roots`][toolkit.Context.list_roots] can reach the client: it declared `roots`."""
        return self._asker is not None and self._asker.can_list_roots()

    def list_roots(self, *, key: str | None = None, timeout: float | None = None) -> Roots:
        """Ask the client for its roots, the directories and files it lets the server work on: `await` it in an
        async tool, call it in a sync one.

        A `roots/list` request in the handshake era; an input request (`roots/list`) of the round in 2026-07-28.

        Args:
            key: The request's key in 2026-07-28 input requests (default: `roots<n>`).
            timeout: Seconds to wait (handshake era); default `Server(client_request_timeout=...)`.

        Returns:
            [`Roots`][toolkit.Roots]: iterate for each [`Root`][toolkit.Root]; `.paths` for the local paths.

        Raises:
            ClientCapabilityError: the client did not declare `roots` (check with `can_list_roots()`).
            ClientRequestError: the client answered with an error, or with a malformed list.
            TimeoutError: no answer within `timeout`.
            concurrent.futures.CancelledError: (sync tools) the call was cancelled while, or before, it asked.
        """
        return self._require_asker().list_roots(self._thread(), key, timeout)

    async def begin_task(self) -> None:
        """Make the call a task from here on (a `task=` tool, 2026-07-28): the questions asked before are answered
        in the `tools/call`'s own rounds (multi-round-trip), as the tasks extension advises, and the client gets
        the task once they are; the questions after are the task's (`input_required`). Anywhere else (a plain call,
        2025-11-25, inside the task) it does nothing. Call it in the tool's own body: toolkit looks for it there
        when the tool is defined (docs/tasks.md).
        """
        asker = self._asker
        if asker is not None and asker.task == "before":
            asker.task = "begun"
            raise Suspend

    def together(self) -> Together:
        """Ask several questions at once: `async with ctx.together():` in an async tool, `with ctx.together():` in
        a sync one.

        Inside the block each question (`elicit`, `confirm`, `sample`, `list_roots`, not awaited) is only noted;
        when the block ends they are asked together: sent as requests at once and answered in any order (handshake
        era), or one 2026-07-28 round with an input request each. Read the answers after the block.

        Example:
            ```python
            from toolkit import Context, tool

            @tool
            async def deploy(ctx: Context) -> str:
                async with ctx.together():
                    ok = ctx.confirm("Deploy to production?")
                    roots = ctx.list_roots()
                return f"deploying {roots.paths}" if ok.accepted else "not deployed"
            ```

        Raises:
            RuntimeError: (at the start) the blocks are nested, or the context is detached.
        """
        return Together(self)

    def _require_asker(self) -> Asker:
        if self._asker is None:
            raise RuntimeError(
                "this Context is detached (the tool is not running in a server): there is no client to ask"
            )
        return self._asker

    def _thread(self) -> CallThread:
        return CallThread(self._loop_thread, self._token, self._sync_on_loop)

    # -- delivery ------------------------------------------------------------------------------------

    def _deliver(self, method: str | None, params: dict[str, Any]) -> Awaitable[None]:
        """Send a notification (`method` None: nothing to send) the way the calling thread allows.

        On the event loop's thread: a coroutine for the tool to await. Even when there is nothing to send it is a
        coroutine, so that a forgotten `await` always draws Python's "coroutine ... was never awaited" warning, not
        only when the client happens to want the message. On any other thread (a sync tool's worker): sent now,
        through the loop, and an awaitable that is already done comes back.
        """
        if threading.get_ident() != self._loop_thread:
            if method is not None and not self._cancelled:  # after cancellation nobody is listening
                anyio.from_thread.run(self._send, method, params, token=self._token)
            return _SENT
        if self._sync_on_loop:
            raise RuntimeError(
                "a sync tool made with run_in_thread=False runs on the event loop and cannot wait for the Context: "
                "make the tool async (and await the call), or let it run in a worker thread"
            )
        return self._send(method, params)

    async def _send(self, method: str | None, params: dict[str, Any]) -> None:
        if method is not None and self._notify is not None:
            await self._notify(method, params)

    @property
    def show_error_details(self) -> bool:
        """Whether the server sends the exception types and messages of this call's failures to the client."""
        return self._show_error_details


def bind_to_loop(context: Context[Any], *, in_thread: bool) -> None:
    """Called on the event loop as a sync tool's call starts: where the loop is, and how to get back to it."""
    context._loop_thread = threading.get_ident()
    context._token = anyio.lowlevel.current_token() if in_thread else None
    context._sync_on_loop = not in_thread


def mark_cancelled(context: Context[Any]) -> None:
    """The call was cancelled: a sync tool still running on its thread sees `cancelled` and may stop."""
    context._cancelled = True
    if context._asker is not None:
        context._asker.cancel()  # a sync tool's question waits on the loop, outside the call's cancel scope


async def confirm(context: Context[Any] | None, message: str, name: str, *, destructive: bool) -> str | None:
    """`@tool(confirm=...)`: None to run the call, else the error text (detached: nobody to ask, so it runs)."""
    if context is None or context._asker is None:
        return None
    return await confirm_call(context._asker, context._thread(), message, name, destructive=destructive)


class Together:
    """A `ctx.together()` block: its questions are asked at once when it ends (see `Context.together`)."""

    __slots__ = ("_context",)

    def __init__(self, context: Context[Any]) -> None:
        self._context = context

    def __enter__(self) -> None:
        self._context._require_asker().begin_together()

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        context = self._context
        asker = context._require_asker()
        if kind is not None:
            asker.drop_together()
            return
        if threading.get_ident() == context._loop_thread and not context._sync_on_loop:
            asker.drop_together()  # an async tool must wait for the answers, which `with` cannot (in every era)
            raise RuntimeError("in an async tool, ask together with `async with ctx.together():`")
        pending = asker.end_together(context._thread())
        assert pending is None, "a sync tool's questions are answered before end_together returns"

    async def __aenter__(self) -> None:
        self.__enter__()

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        asker = self._context._require_asker()
        if kind is not None:
            asker.drop_together()
            return
        pending = asker.end_together(self._context._thread())
        if pending is not None:
            await pending


class _Delivered:
    """What a Context method returns on a worker thread: the message is already sent; awaiting this is a no-op."""

    __slots__ = ()

    def __await__(self) -> Generator[Any, None, None]:
        return
        yield  # a generator that finishes at once


_SENT = _Delivered()
_NO_PARAMS: dict[str, Any] = {}
