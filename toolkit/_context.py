"""Context: what a running tool can ask of the request it serves."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any, Generic, Literal

from typing_extensions import TypeVar

from ._types import Implementation

__all__ = ["LOG_LEVELS", "Context", "LogLevel"]

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
    """What a tool can ask of the request it serves: progress, logging, who is calling, the server's state.

    Declare a parameter annotated `Context` (or `Context | None`) and toolkit passes it in; it never appears in
    the tool's schema. `Context[AppState]` says what the server's lifespan yields, so that type checkers check
    the use of [`lifespan_context`][toolkit.Context.lifespan_context]; toolkit treats it as `Context`. Outside a
    server (calling `tool.run()` directly) the context is detached: progress goes nowhere and log messages go to
    Python's `logging` (logger `toolkit.tools`).

    Example:
        ```python
        from toolkit import Context, tool

        @tool
        async def crawl(pages: int, ctx: Context) -> str:
            for done in range(1, pages + 1):
                await ctx.report_progress(done, total=pages)
            await ctx.info(f"crawled {pages} pages")
            return "done"
        ```
    """

    __slots__ = (
        "_last_progress",
        "_lifespan_context",
        "_log_level",
        "_notify",
        "_progress_token",
        "_show_error_details",
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

    async def report_progress(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        """Tell the client how far the call has got.

        Sent only when the client asked for progress (its request carried a progress token); otherwise a no-op.

        Args:
            progress: Work done so far; must increase with every report.
            total: Total work, when known.
            message: A short human-readable status.

        Raises:
            ValueError: `progress` did not increase.
        """
        if self._last_progress is not None and progress <= self._last_progress:
            raise ValueError(f"progress must increase: {progress} after {self._last_progress}")
        self._last_progress = progress
        if self._notify is None or self._progress_token is None:
            return
        params: dict[str, Any] = {"progressToken": self._progress_token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        await self._notify("notifications/progress", params)

    async def log(self, level: LogLevel, data: Any, logger: str | None = None) -> None:
        """Send a log message to the client, if it asked for messages at this level or above.

        Args:
            level: One of `debug`, `info`, `notice`, `warning`, `error`, `critical`, `alert`, `emergency`.
            data: Any JSON-serialisable value (usually a string). Never put secrets in it.
            logger: The name of the component logging.

        Raises:
            ValueError: unknown level.
        """
        rank = _RANK.get(level)
        if rank is None:
            raise ValueError(f"unknown log level {level!r}; use one of {', '.join(LOG_LEVELS)}")
        if self._notify is None:
            _logger.log(_PY_LEVELS.get(level, logging.ERROR), "%s", data)
            return
        threshold = self._log_level() if self._log_level is not None else None
        if threshold is None or rank < _RANK[threshold]:
            return
        params: dict[str, Any] = {"level": level, "data": data}
        if logger is not None:
            params["logger"] = logger
        await self._notify("notifications/message", params)

    async def debug(self, data: Any, logger: str | None = None) -> None:
        """Log at `debug` level."""
        await self.log("debug", data, logger)

    async def info(self, data: Any, logger: str | None = None) -> None:
        """Log at `info` level."""
        await self.log("info", data, logger)

    async def warning(self, data: Any, logger: str | None = None) -> None:
        """Log at `warning` level."""
        await self.log("warning", data, logger)

    async def error(self, data: Any, logger: str | None = None) -> None:
        """Log at `error` level."""
        await self.log("error", data, logger)
