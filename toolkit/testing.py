"""Test your tools: a synchronous `ToolTester`, short result assertions, schema snapshots, and a pytest plugin.

Everything here works without pytest. The pytest fixtures (`toolkit_client`, `toolkit_tester`,
`toolkit_snapshot`, ...) live in a private module that this one registers when pytest loads it through the
`pytest11` entry point, so installing toolkit adds them to every test run, and importing `toolkit.testing`
in a script costs no pytest import.
"""

from __future__ import annotations

import re
from contextlib import AbstractContextManager, ExitStack
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from . import _snapshots
from ._client import Client, LogMessage
from ._snapshots import Snapshot, Tools, as_server, assert_tools_snapshot, tools_payload
from ._stdio_launch import stdio_command, stdio_environment
from ._types import CallToolResult, ToolDefinition

if TYPE_CHECKING:
    import pytest
    from anyio.from_thread import BlockingPortal

    from ._client import ProtocolMode as ProtocolChoice
    from ._context import LogLevel
    from ._server import Lifespan

__all__ = [
    "Progress",
    "Snapshot",
    "ToolTester",
    "assert_error",
    "assert_ok",
    "assert_portable",
    "assert_tools_snapshot",
    "stdio_command",
    "stdio_environment",
    "structured",
    "text",
    "tools_payload",
]

# The helpers defined in private modules say they come from here, where users import them.
for _obj in (Snapshot, assert_tools_snapshot, stdio_command, stdio_environment, tools_payload):
    _obj.__module__ = __name__
del _obj

# Not public: what the fixtures in toolkit._pytest_plugin import from here.
Definitions = _snapshots.Definitions
_compare_snapshot = _snapshots.compare_snapshot


class Progress(NamedTuple):
    """One progress notification: compares equal to a plain `(progress, total, message)` tuple."""

    progress: float
    total: float | None
    message: str | None


class ToolTester(AbstractContextManager["ToolTester"]):
    """Call a server's tools from plain synchronous code, through the real protocol, in memory.

    Like Starlette's `TestClient`: an event loop runs in a background thread (an anyio blocking portal) and
    an in-memory [`Client`][toolkit.Client] talks to the server over it, with the same JSON encoding and
    handshake as stdio. Log messages (all levels) and progress notifications each call produces are kept in
    [`logs`][toolkit.testing.ToolTester.logs] and [`progress`][toolkit.testing.ToolTester.progress].

    Args:
        target: A `Server`, a `Tool`, or several tools (served by a server named `"test"`).
        protocol: `"auto"`, `"2026-07-28"` or `"handshake"`, as for `Client`.
        backend: The event loop to run the server on: `"asyncio"` or `"trio"`.
        timeout: Seconds any one call may take before it fails with `TimeoutError`, so a hanging tool fails
            the test instead of hanging it.
        log_level: The least severe log level to receive.
        lifespan: Run this lifespan instead of the server's own, for example one that yields a fake state. The
            lifespan (this one or the server's) starts on entering `with` and shuts down on leaving it.

    Example:
        ```python
        from toolkit import tool
        from toolkit.testing import ToolTester

        @tool
        def add(a: int, b: int) -> int:
            return a + b

        with ToolTester(add) as tester:
            assert tester.call("add", a=1, b=2).text == "3"
        ```
    """

    def __init__(
        self,
        target: Tools,
        *,
        protocol: ProtocolChoice = "auto",
        backend: Literal["asyncio", "trio"] = "asyncio",
        timeout: float = 30.0,
        log_level: LogLevel = "debug",
        lifespan: Lifespan | None = None,
    ) -> None:
        self.server = as_server(target)
        """The server under test."""
        self.timeout = timeout
        self.logs: list[LogMessage] = []
        """Log messages the last call produced."""
        self.progress: list[Progress] = []
        """Progress notifications the last call produced."""
        self._protocol: ProtocolChoice = protocol
        self._backend = backend
        self._log_level: LogLevel = log_level
        self._lifespan = lifespan
        self._stack = ExitStack()
        self._portal: BlockingPortal | None = None
        self._client: Client | None = None

    def __enter__(self) -> ToolTester:
        from anyio.from_thread import start_blocking_portal

        with ExitStack() as stack:
            portal = stack.enter_context(start_blocking_portal(self._backend))
            # Made on the portal's event loop: anyio primitives bind to the event loop running where they are made,
            # which, in a fixture of an async test, is the test's (perhaps trio), not the portal's.
            client = portal.call(
                lambda: Client(self.server, protocol=self._protocol, on_log=self.logs.append, lifespan=self._lifespan)
            )
            stack.enter_context(portal.wrap_async_context_manager(client))
            portal.call(client.set_logging_level, self._log_level)
            self._stack, self._portal, self._client = stack.pop_all(), portal, client
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        stack, self._stack, self._portal, self._client = self._stack, ExitStack(), None, None
        # The client closes as if all went well: an exception from the `with` body (a failed assertion) passed into
        # its task group would come back wrapped in an ExceptionGroup. It propagates unchanged instead.
        stack.close()

    @property
    def client(self) -> Client:
        """The connected client, for what the tester does not wrap (run its coroutines with `portal.call`)."""
        if self._client is None:
            raise RuntimeError("use the ToolTester inside `with`")
        return self._client

    @property
    def portal(self) -> BlockingPortal:
        """The blocking portal running the event loop: `tester.portal.call(tester.client.ping)`."""
        if self._portal is None:
            raise RuntimeError("use the ToolTester inside `with`")
        return self._portal

    def list_tools(self) -> list[ToolDefinition]:
        """Every tool the server offers, as the client sees them."""
        return self.portal.call(self.client.list_tools)

    def tool(self, name: str) -> ToolDefinition:
        """The definition of the tool called `name`, as the client sees it.

        Raises:
            LookupError: the server has no such tool.
        """
        tools = self.list_tools()
        for definition in tools:
            if definition.name == name:
                return definition
        names = ", ".join(repr(t.name) for t in tools) or "none"
        raise LookupError(f"no tool named {name!r}; the server has: {names}")

    def call(self, name: str, /, **arguments: Any) -> CallToolResult:
        """Call the tool `name` with keyword arguments and return its result.

        A tool that fails gives a result with `is_error=True` (see
        [`assert_error`][toolkit.testing.assert_error]); its log and progress notifications replace
        [`logs`][toolkit.testing.ToolTester.logs] and [`progress`][toolkit.testing.ToolTester.progress].

        Raises:
            ProtocolError: the server refused the call (unknown tool, for example).
            TimeoutError: the call took longer than the tester's `timeout`.
        """
        client = self.client
        self.logs.clear()
        self.progress.clear()

        def on_progress(progress: float, total: float | None, message: str | None) -> None:
            self.progress.append(Progress(progress, total, message))

        async def call() -> CallToolResult:
            return await client.call_tool(name, arguments, progress=on_progress, timeout=self.timeout)

        try:
            return self.portal.call(call)
        except TimeoutError:
            raise TimeoutError(
                f"tool {name!r} gave no result within {self.timeout:g} seconds (ToolTester timeout={self.timeout:g})"
            ) from None


# -- result assertions -------------------------------------------------------------------------------------


def text(result: CallToolResult) -> str:
    """The text of every text block of `result`, joined by newlines."""
    return result.text


def assert_ok(result: CallToolResult) -> CallToolResult:
    """Check that the call succeeded and return the result.

    Raises:
        AssertionError: the result is an error; the message includes the error text.
    """
    __tracebackhide__ = True
    if result.is_error:
        raise AssertionError(f"the tool call failed: {result.text}")
    return result


def structured(result: CallToolResult) -> Any:
    """The structured content of a successful call (`structuredContent`).

    Raises:
        AssertionError: the result is an error, or has no structured content.
    """
    __tracebackhide__ = True
    assert_ok(result)
    if result.structured_content is None:
        raise AssertionError(f"the result has no structured content; its text is: {result.text!r}")
    return result.structured_content


def assert_error(result: CallToolResult, match: str | re.Pattern[str] | None = None) -> str:
    """Check that the call failed (`isError`), and return its message.

    Args:
        result: The call's result.
        match: A regular expression the message must contain (`re.search`), as `pytest.raises(match=...)`.

    Raises:
        AssertionError: the result is not an error, or its message does not match.
    """
    __tracebackhide__ = True
    message = result.text
    if not result.is_error:
        raise AssertionError(f"expected the tool call to fail, but it succeeded with: {message!r}")
    if match is not None and re.search(match, message) is None:
        pattern = match.pattern if isinstance(match, re.Pattern) else match
        raise AssertionError(f"the error message {message!r} does not match {pattern!r}")
    return message


# -- provider profiles -------------------------------------------------------------------------------------


def assert_portable(target: Definitions, *profiles: str, adapted: bool = False) -> None:
    """Check that no provider of `profiles` would reject the tools (problems it only mishandles pass).

    Args:
        target: A server, a tool, several tools, or tool definitions, checked as a client receives them (a
            server with `schema_profile` serves adapted schemas).
        profiles: Profile names (`"gemini"`, `"openai-strict"`, ...), or `"all"`.
        adapted: Check what toolkit's adaptation leaves (what `tool.definition_for(profile)` and
            `Server(schema_profile=...)` send), instead of the definitions as they are.

    Raises:
        AssertionError: a tool would be rejected; the message lists every problem, one line each.
    """
    __tracebackhide__ = True
    from ._portability import check_tools

    problems = check_tools(tools_payload(target)["tools"], profiles or ("all",))
    failing = [p for p in problems if p.rejects and not (adapted and p.fixable)]
    if failing:
        raise AssertionError(
            f"{len(failing)} problem{'' if len(failing) == 1 else 's'} a provider would reject:\n"
            + "\n".join(f"- {p}" for p in failing)
        )


# -- pytest hooks (the fixtures are in toolkit._pytest_plugin, imported only under pytest) ------------------


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("toolkit")
    group.addoption(
        "--toolkit-update-snapshots",
        action="store_true",
        default=False,
        help="toolkit: rewrite tool-definition snapshots that differ, instead of failing.",
    )


def pytest_configure(config: pytest.Config) -> None:
    from . import _pytest_plugin

    config.pluginmanager.register(_pytest_plugin.Plugin(config), "toolkit-fixtures")
