"""`ToolTester`: a server's tools called from synchronous code, through the real client, in memory."""

from __future__ import annotations

from contextlib import AbstractContextManager, ExitStack
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

import anyio

from toolkit import (
    CallToolResult,
    Client,
    ElicitRequest,
    Lifespan,
    LogLevel,
    LogMessage,
    RootsOption,
    SampleRequest,
    TaskInfo,
    TextResourceContents,
    ToolDefinition,
)
from toolkit import ProtocolMode as ProtocolChoice
from toolkit._protocol.meta import UI_KEY

from ._scripts import ElicitationScript, SamplingScript, Scripted
from ._snapshots import Tools, as_server

if TYPE_CHECKING:
    from anyio.from_thread import BlockingPortal
    from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

__all__ = ["Progress", "ToolTester"]


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
        elicitation: The user's answers to the tools' questions: `"accept"` (each form's defaults), `"decline"`,
            `"cancel"`, a dict (accept with that content), an `ElicitResult`, a list of those (one per question of
            each call, in order), or a handler. `None` (default): the client cannot elicit at all. See
            [human in the loop](human-in-the-loop.md#testing).
        sampling: The model's replies: a `str`, a `SampleResult`, a list of those, or a handler; `None`: the
            client cannot sample.
        sampling_tools: With `sampling`, declare `sampling.tools` too (default), so that tools which offer the
            model tools can be tested; `False` tests what such a tool does with a client that lacks it.
        roots: The client's roots, listed for `ctx.list_roots()`: paths, `file://` URIs or `Root`s, or a function
            that returns them. `None` (default): the client declares no roots.
        trace: Collect each call's OpenTelemetry spans in [`spans`][toolkit.testing.ToolTester.spans] (needs
            `opentelemetry-sdk`): the server and the client trace to an in-memory exporter while the tester is open.
            See [observability](observability.md#testing).
        apps: Declare MCP Apps, as a host that renders tools' pages does (default), so that
            [`ui`][toolkit.testing.ToolTester.ui] reads a tool's page and app-only tools can be called; `False` tests
            what a text-only client gets. See [MCP Apps](apps.md#testing).

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

    def __init__(  # noqa: PLR0913 (the keywords are ToolTester's documented API, each one documented above)
        self,
        target: Tools,
        *,
        protocol: ProtocolChoice = "auto",
        backend: Literal["asyncio", "trio"] = "asyncio",
        timeout: float = 30.0,
        log_level: LogLevel = "debug",
        lifespan: Lifespan | None = None,
        elicitation: ElicitationScript | None = None,
        sampling: SamplingScript | None = None,
        sampling_tools: bool = True,
        roots: RootsOption | None = None,
        trace: bool = False,
        apps: bool = True,
    ) -> None:
        self.server = as_server(target)
        """The server under test."""
        self.timeout = timeout
        self.logs: list[LogMessage] = []
        """Log messages the last call produced."""
        self.progress: list[Progress] = []
        """Progress notifications the last call produced."""
        self.task_states: list[TaskInfo] = []
        """The states of the task the last [`call_task`][toolkit.testing.ToolTester.call_task] ran, in the order the
        client saw them (a state that did not change between polls is kept once)."""
        self.spans: list[ReadableSpan] = []
        """With `trace=True`, the OpenTelemetry spans the last call produced (the client's, the server's, the tool's
        own), in the order they ended."""
        self._trace = trace
        self._exporter: InMemorySpanExporter | None = None
        self._scripted = Scripted(elicitation, sampling)
        self._protocol: ProtocolChoice = protocol
        self._backend = backend
        self._log_level: LogLevel = log_level
        self._lifespan = lifespan
        self._sampling_tools = sampling_tools
        self._roots = roots
        self._apps = apps
        self._stack = ExitStack()
        self._portal: BlockingPortal | None = None
        self._client: Client | None = None

    def __enter__(self) -> ToolTester:
        from anyio.from_thread import start_blocking_portal

        with ExitStack() as stack:
            portal = stack.enter_context(start_blocking_portal(self._backend))
            # Made on the portal's event loop: anyio primitives bind to the event loop running where they are made,
            # which, in a fixture of an async test, is the test's (perhaps trio), not the portal's.
            scripted = self._scripted
            tracer_provider = self._traced(stack) if self._trace else None
            client = portal.call(
                lambda: Client(
                    self.server,
                    protocol=self._protocol,
                    on_log=self.logs.append,
                    lifespan=self._lifespan,
                    elicitation_handler=scripted.elicitation_handler,
                    sampling_handler=scripted.sampling_handler,
                    sampling_tools=self._sampling_tools,
                    roots=self._roots,
                    tracer_provider=tracer_provider,
                    apps=self._apps,
                )
            )
            stack.enter_context(portal.wrap_async_context_manager(client))
            portal.call(client.set_logging_level, self._log_level)
            self._stack, self._portal, self._client = stack.pop_all(), portal, client
        return self

    def _traced(self, stack: ExitStack) -> TracerProvider:
        """A tracer provider whose spans go to an in-memory exporter, the server's while the tester is open."""
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

        provider = TracerProvider()
        self._exporter = InMemorySpanExporter()
        provider.add_span_processor(SimpleSpanProcessor(self._exporter))
        registry = self.server.registry
        before, registry.tracer_provider = registry.tracer_provider, provider
        stack.callback(setattr, registry, "tracer_provider", before)
        stack.callback(provider.shutdown)
        return provider

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        stack, self._stack, self._portal, self._client = self._stack, ExitStack(), None, None
        # The client closes as if all went well: an exception from the `with` body (a failed assertion) passed into
        # its task group would come back wrapped in an ExceptionGroup. It propagates unchanged instead.
        stack.close()

    @property
    def elicitation(self) -> ElicitationScript | None:
        """The script answering elicitations; reassign it between calls (it must stay `None` if it was)."""
        return self._scripted.elicitation

    @elicitation.setter
    def elicitation(self, script: ElicitationScript | None) -> None:
        self._scripted.elicitation = self._rescript(self._scripted.elicitation, script, "elicitation")

    @property
    def sampling(self) -> SamplingScript | None:
        """The script answering sampling requests; reassign it between calls."""
        return self._scripted.sampling

    @sampling.setter
    def sampling(self, script: SamplingScript | None) -> None:
        self._scripted.sampling = self._rescript(self._scripted.sampling, script, "sampling")

    def _rescript(self, old: Any, new: Any, kind: str) -> Any:
        if (old is None) != (new is None) and self._client is not None:
            raise ValueError(
                f"the client declared its capabilities when the tester opened: {kind}= cannot change between None "
                f"and a script inside `with`; pass it to ToolTester(..., {kind}=...), or, for the toolkit_tester "
                f"fixture, give it with the toolkit_{kind} fixture (override it, or "
                f'@pytest.mark.parametrize("toolkit_{kind}", [...]))'
            )
        return new

    @property
    def elicitations(self) -> list[ElicitRequest]:
        """The questions the last call asked the user, in order (the same in both eras)."""
        return self._scripted.elicitations

    @property
    def samplings(self) -> list[SampleRequest]:
        """The completions the last call asked the model for, in order."""
        return self._scripted.samplings

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

    def ui(self, name: str) -> TextResourceContents:
        """The MCP App page of the tool called `name`, read as a host reads it: the URI its `_meta.ui.resourceUri`
        names, then `resources/read` (`text` is the HTML, `meta["ui"]` its CSP, permissions, domain and border).

        Raises:
            LookupError: the server has no such tool, or the tool has no page.
        """
        meta = self.tool(name).meta or {}
        ui = meta.get(UI_KEY)
        uri = ui.get("resourceUri") if isinstance(ui, dict) else None
        if not isinstance(uri, str):
            raise LookupError(f"the tool {name!r} has no MCP App page (no _meta.ui.resourceUri)")
        [contents] = self.portal.call(self.client.read_resource, uri)
        assert isinstance(contents, TextResourceContents), f"{uri} is not text: {contents!r}"
        return contents

    def call(self, name: str, /, **arguments: Any) -> CallToolResult:
        """Call the tool `name` with keyword arguments and return its result.

        A tool that fails gives a result with `is_error=True` (see
        [`assert_error`][toolkit.testing.assert_error]); its log and progress notifications replace
        [`logs`][toolkit.testing.ToolTester.logs] and [`progress`][toolkit.testing.ToolTester.progress].

        Raises:
            AssertionError: the tool asked something the scripts had no answer for; the message shows the question.
            ProtocolError: the server refused the call (unknown tool, for example).
            TimeoutError: the call took longer than the tester's `timeout`.
        """
        __tracebackhide__ = True
        return self._run(name, arguments, as_task=False)

    def call_task(self, name: str, /, **arguments: Any) -> CallToolResult:
        """Call the tool `name` as a task ([`Client.start_task`][toolkit.Client.start_task]) and wait for its result.

        The task's states, as the client saw them while it waited, replace
        [`task_states`][toolkit.testing.ToolTester.task_states] (empty when the server ran the call at once); its
        questions are answered by the scripts, as for [`call`][toolkit.testing.ToolTester.call], and its logs and
        progress are kept alike.

        Raises:
            AssertionError: the task asked something the scripts had no answer for.
            ProtocolError: the server refused the call, or the task failed with a JSON-RPC error.
            TaskCancelledError: the task was cancelled.
            TimeoutError: the task took longer than the tester's `timeout`.
        """
        __tracebackhide__ = True
        return self._run(name, arguments, as_task=True)

    def _run(self, name: str, arguments: dict[str, Any], *, as_task: bool) -> CallToolResult:
        __tracebackhide__ = True
        client = self.client
        self.logs.clear()
        self.progress.clear()
        self.task_states.clear()
        self._scripted.reset()
        if self._exporter is not None:
            self._exporter.clear()

        def on_progress(progress: float, total: float | None, message: str | None) -> None:
            self.progress.append(Progress(progress, total, message))

        async def call() -> CallToolResult:
            if not as_task:
                return await client.call_tool(name, arguments, progress=on_progress, timeout=self.timeout)
            with anyio.fail_after(self.timeout):
                task = await client.start_task(name, arguments, progress=on_progress)
                async for state in task.watch():
                    self.task_states.append(state)
                return await task.result()

        try:
            result = self.portal.call(call)
        except TimeoutError:
            raise TimeoutError(
                f"tool {name!r} gave no result within {self.timeout:g} seconds (ToolTester timeout={self.timeout:g})"
            ) from None
        except Exception:
            self._check_scripts(name)  # a question nobody scripted explains the failure better
            raise
        finally:
            if self._exporter is not None:
                self.spans = list(self._exporter.get_finished_spans())
        self._check_scripts(name)
        return result

    def _check_scripts(self, name: str) -> None:
        __tracebackhide__ = True
        if self._scripted.problems:
            raise AssertionError(f"tool {name!r}: " + "\n".join(self._scripted.problems))
