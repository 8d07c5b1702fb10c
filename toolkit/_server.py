"""Server: a registry of tools and the prepared payloads that serve them to any number of connections."""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal, TypeVar, overload

import anyio
from typing_extensions import ParamSpec, Unpack

from ._jsonrpc import encode
from ._stdio import DEFAULT_MAX_MESSAGE_SIZE, StdioTransport
from ._threads import running_calls
from ._tool import Tool, ToolOptions, _caller_locals, _Options
from ._transport import Transport
from ._types import Icon, Implementation
from ._versions import shape_implementation, shape_tool

if TYPE_CHECKING:
    from ._session import Connection

__all__ = ["Server"]

P = ParamSpec("P")
R = TypeVar("R")


class Server:
    """An MCP server: tools, plus what it tells clients about itself.

    One `Server` serves any number of connections at once, over any [`Transport`][toolkit.Transport]; each
    connection keeps its own state (negotiated revision, log level, calls in flight).

    Args:
        name: The server's name, as clients display it.
        version: The server's version.
        title: A human-readable name.
        description: What the server does, for people choosing or inspecting servers (2025-11-25 and later).
        icons: Icons a client may show for the server (2025-11-25 and later).
        website_url: The server's website (2025-11-25 and later).
        instructions: Guidance for the model on how to use the server (clients may add it to the prompt).
        tools: Tools to serve from the start.
        page_size: Tools per `tools/list` page; `None` sends all tools in one page.
        show_error_details: Send exception types and messages of failing tools to the client.
        max_message_size: Largest message (bytes) the stdio transport accepts.
        max_concurrent_requests: Calls one connection may have in flight; more are answered with an error.
        tool_timeout: Seconds a tool call may take before it is cancelled and reported as an error.
        shutdown_grace: Seconds calls still running when the client closes the connection may take to finish
            (and answer) before they are cancelled.
        ttl_ms: How long (milliseconds) 2026-07-28 clients may cache `tools/list` and `server/discover`.
        cache_scope: `"public"` (no user-specific data) or `"private"` for those cached results.

    Example:
        ```python
        from toolkit import Server

        server = Server("demo", version="1.0.0")

        @server.tool
        def add(a: int, b: int) -> int:
            \"\"\"Add two integers.\"\"\"
            return a + b
        ```
    """

    def __init__(
        self,
        name: str,
        *,
        version: str | None = None,
        title: str | None = None,
        description: str | None = None,
        icons: Sequence[Icon | Mapping[str, Any]] | None = None,
        website_url: str | None = None,
        instructions: str | None = None,
        tools: Iterable[Tool[Any, Any]] = (),
        page_size: int | None = None,
        show_error_details: bool = False,
        max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
        max_concurrent_requests: int = 1000,
        tool_timeout: float | None = None,
        shutdown_grace: float = 5.0,
        ttl_ms: int = 0,
        cache_scope: Literal["public", "private"] = "public",
    ) -> None:
        if page_size is not None and page_size < 1:
            raise ValueError("page_size must be at least 1")
        self.name = name
        self.version = version or "0.0.0"
        self.title = title
        self.instructions = instructions
        self.page_size = page_size
        self.show_error_details = show_error_details
        self.max_message_size = max_message_size
        self.max_concurrent_requests = max_concurrent_requests
        self.tool_timeout = tool_timeout
        self.shutdown_grace = shutdown_grace
        self.ttl_ms = ttl_ms
        self.cache_scope = cache_scope
        self.info = Implementation(
            name=name,
            version=self.version,
            title=title,
            description=description,
            website_url=website_url,
            icons=[icon if isinstance(icon, Icon) else Icon.model_validate(icon) for icon in icons]
            if icons is not None
            else None,
        )
        self._info_wire = self.info.model_dump(mode="json", by_alias=True, exclude_none=True)
        self._tools: dict[str, Tool[Any, Any]] = {}
        self._payloads: dict[str, list[str]] = {}
        self.connections: set[Connection] = set()
        for t in tools:
            self.add_tool(t)

    # -- registry ------------------------------------------------------------------------------------

    @property
    def tools(self) -> Mapping[str, Tool[Any, Any]]:
        """The tools served, by name, in registration order (read-only)."""
        return MappingProxyType(self._tools)

    def add_tool(self, tool: Tool[Any, Any]) -> None:
        """Serve `tool`; connected clients are told the list changed.

        Raises:
            ValueError: a tool with that name is already served.
        """
        if not isinstance(tool, Tool):
            raise TypeError(f"add_tool takes a toolkit.Tool (decorate the function with @tool), got {tool!r}")
        if tool.name in self._tools:
            raise ValueError(f"a tool named {tool.name!r} is already registered")
        self._tools[tool.name] = tool
        self._changed()

    def remove_tool(self, name: str) -> Tool[Any, Any]:
        """Stop serving the tool called `name` and return it; connected clients are told the list changed.

        Raises:
            KeyError: no tool has that name.
        """
        tool = self._tools.pop(name)
        self._changed()
        return tool

    @overload
    def tool(self, fn: Callable[P, R], /) -> Tool[P, R]: ...
    @overload
    def tool(self, **options: Unpack[ToolOptions]) -> Callable[[Callable[P, R]], Tool[P, R]]: ...
    def tool(self, fn: Callable[..., Any] | None = None, **options: Any) -> Any:
        """Decorate a function to make it a tool of this server: `@server.tool` or `@server.tool(...)`.

        Takes the same options as [`@tool`][toolkit.tool].
        """
        localns = _caller_locals()
        opts = _Options(**options)

        def decorate(func: Callable[P, R]) -> Tool[P, R]:
            made: Tool[P, R] = Tool(func, opts, localns)
            self.add_tool(made)
            return made

        return decorate(fn) if fn is not None else decorate

    def _changed(self) -> None:
        self._payloads.clear()
        for connection in list(self.connections):
            connection.tools_changed()

    def tool_payloads(self, version: str) -> list[str]:
        """Each tool's wire JSON for `version`, prepared once per revision and reused until the list changes."""
        payloads = self._payloads.get(version)
        if payloads is None:
            payloads = [
                encode(
                    shape_tool(
                        t.definition.model_dump(mode="json", by_alias=True, exclude_none=True),
                        version,
                        t.output_schema,
                    )
                )
                for t in self._tools.values()
            ]
            self._payloads[version] = payloads
        return payloads

    def info_for(self, version: str) -> dict[str, Any]:
        return shape_implementation(self._info_wire, version)

    # -- serving -------------------------------------------------------------------------------------

    async def serve(self, transport: Transport) -> None:
        """Serve one connection over `transport` until the peer closes it.

        Calls still running when the peer goes away are cancelled. The transport is closed on return.
        """
        from ._session import Connection

        connection = Connection(self, transport)
        try:
            await connection.run()
        finally:
            await transport.aclose()

    async def serve_stdio(self) -> None:
        """Serve MCP's stdio transport until stdin closes."""
        await self.serve(StdioTransport(max_message_size=self.max_message_size))

    def run(self, *, backend: Literal["asyncio", "trio"] = "asyncio") -> None:
        """Serve over stdio until stdin closes: the entry point of a server script.

        Example:
            ```python
            if __name__ == "__main__":
                server.run()
            ```
        """
        with contextlib.suppress(KeyboardInterrupt):
            anyio.run(self.serve_stdio, backend=backend)
        stuck = running_calls()
        if stuck:  # cancelled at end of input, but Python cannot stop a thread: say so rather than leave silently
            logging.getLogger("toolkit").warning(
                "exiting with %d sync tool call%s still running on a worker thread (cancelled at end of input; "
                "a thread cannot be stopped, so it is abandoned)",
                stuck,
                "" if stuck == 1 else "s",
            )
        # A sync tool still running on a worker thread (cancelled, but Python cannot stop a thread) would keep
        # the interpreter alive at exit, joining it. stdin is closed and every answer is written: the stdio
        # transport says the server should now exit, so do, without waiting for it.
        if any(t.is_alive() and not t.daemon for t in threading.enumerate() if t is not threading.main_thread()):
            logging.getLogger("toolkit").warning("exiting with tool threads still running")
            for stream in (sys.stdout, sys.stderr):
                with contextlib.suppress(Exception):
                    stream.flush()
            os._exit(0)
