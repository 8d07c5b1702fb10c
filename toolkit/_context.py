"""Context: what a running tool can ask of the request it serves."""

from __future__ import annotations

import logging
import threading
from collections.abc import Awaitable, Callable, Generator
from typing import Any, Generic, Literal

import anyio.from_thread
import anyio.lowlevel
from typing_extensions import TypeVar

from ._types import Implementation

__all__ = ["LOG_LEVELS", "Context", "LogLevel", "Notify", "bind_to_loop", "mark_cancelled"]

LogLevel = Literal["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]
#: RFC 5424 severities, least severe first, as MCP names them.
LOG_LEVELS: tuple[LogLevel, ...] = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
_RANK = {level: rank for rank, level in enumerate(LOG_LEVELS)}
_PY_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "notice": logging.INFO, "warning": logging.WARNING}

Notify = Callable[[str, dict[str, Any]], Awaitable[None]]

_logger = logging.getLogger("toolkit.tools")

#: The type of the lifespan's value; a bare `Context` is `Context[Any]`.
StateT = TypeVar("StateT", default=Any)
_NO_STATE: Any = object()


class Context(Generic[StateT]):
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
        "_cancelled",
        "_last_progress",
        "_lifespan_context",
        "_log_level",
        "_loop_thread",
        "_notify",
        "_progress_token",
        "_show_error_details",
        "_sync_on_loop",
        "_token",
        "client_info",
        "protocol_version",
        "request_id",
    )

    def __init__(
        self,
        *,
        request_id: str | int | None = None,
        client_info: Implementation | None = None,
        protocol_version: str | None = None,
        progress_token: str | int | None = None,
        log_level: Callable[[], LogLevel | None] | None = None,
        notify: Notify | None = None,
        show_error_details: bool = False,
        lifespan_context: StateT = _NO_STATE,
    ) -> None:
        self.request_id = request_id
        """The JSON-RPC id of the request being served (`None` when detached)."""
        self.client_info = client_info
        """The client's name and version, as it reported them."""
        self.protocol_version = protocol_version
        """The protocol revision of this request."""
        self._progress_token = progress_token
        self._log_level = log_level
        self._notify = notify
        self._show_error_details = show_error_details  # the server's opt-in: exception details reach the client
        self._last_progress: float | None = None
        self._loop_thread = threading.get_ident()  # where the event loop runs: elsewhere, calls are sent from there
        self._token: anyio.lowlevel.EventLoopToken | None = None  # the way back to the loop, for sync tools
        self._sync_on_loop = False  # a sync tool running on the loop itself (run_in_thread=False)
        self._cancelled = False
        self._lifespan_context = lifespan_context

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
            _logger.log(_PY_LEVELS.get(level, logging.ERROR), "%s", data)
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


class _Sent:
    """What a Context method returns on a worker thread: the message is already sent; awaiting this is a no-op."""

    __slots__ = ()

    def __await__(self) -> Generator[Any, None, None]:
        return
        yield  # a generator that finishes at once


_SENT = _Sent()
_NO_PARAMS: dict[str, Any] = {}
