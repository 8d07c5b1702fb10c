"""`Server.mount`: another server's tools served as the mounting server's own, in memory, over stdio and over HTTP,
through the mounting server's own call path (middleware, the filter, timeouts), with one upstream connection."""

from __future__ import annotations

import logging
import sys
import threading
from typing import Any

import anyio
import pytest
from servers import GATEWAY_UPSTREAM, gateway_upstream

from toolkit import (
    Client,
    Context,
    LogMessage,
    ProtocolError,
    Request,
    Server,
    TaskCancelledError,
    ToolDefinition,
    tool,
)

pytestmark = pytest.mark.anyio

UPSTREAM_COMMAND = [sys.executable, str(GATEWAY_UPSTREAM)]


def wire(result: Any) -> dict[str, Any]:
    dumped: dict[str, Any] = result.model_dump(mode="json", by_alias=True, exclude_none=True)
    return dumped


def gateway(upstream: Any, **options: Any) -> Server:
    server = Server("gateway")
    server.mount(upstream, **options)
    return server


@pytest.fixture(params=["memory", "stdio"])
def upstream(request: pytest.FixtureRequest) -> Any:
    return gateway_upstream() if request.param == "memory" else UPSTREAM_COMMAND


async def test_mounted_tools_are_listed_beside_local_ones_under_the_prefix_as_the_upstream_defines_them() -> None:
    server = gateway(gateway_upstream(), prefix="up")

    @server.tool
    def local() -> str:
        return "here"

    async with Client(server) as client, Client(gateway_upstream()) as direct:
        listed = {t.name: t for t in await client.list_tools()}
        originals = await direct.list_tools()
    assert list(listed) == ["local", *(f"up_{t.name}" for t in originals)]
    for original in originals:
        assert listed[f"up_{original.name}"] == original.model_copy(update={"name": f"up_{original.name}"})


@pytest.mark.parametrize("protocol", ["2026-07-28", "handshake"])
async def test_results_come_back_as_the_upstream_sent_them_in_either_era(upstream: Any, protocol: Any) -> None:
    calls: list[tuple[str, dict[str, Any]]] = [
        ("add", {"a": 2, "b": 3}),
        ("picture", {}),
        ("weather", {"city": "Oslo"}),
        ("fail", {"reason": "no"}),
    ]
    async with (
        Client(gateway(upstream), protocol=protocol) as client,
        Client(gateway_upstream(), protocol=protocol) as direct,
    ):
        for name, arguments in calls:
            assert wire(await client.call_tool(name, arguments)) == wire(await direct.call_tool(name, arguments))
        bad = await client.call_tool("add", {"a": "x", "b": 1})
    assert bad.is_error
    assert "Invalid arguments for tool 'add'" in bad.text


async def test_tools_selects_the_upstreams_tools_by_name_or_by_a_predicate() -> None:
    def read_only(definition: ToolDefinition) -> bool:
        return definition.annotations is not None and definition.annotations.read_only_hint is True

    server = Server("gateway")
    server.mount(gateway_upstream(), prefix="named", tools=["add", "pid"])
    server.mount(gateway_upstream(), prefix="safe", tools=read_only)
    async with Client(server) as client:
        names = [t.name for t in await client.list_tools()]
    assert names == ["named_add", "named_pid", "safe_add"]


async def test_several_mounts_clashing_names_keep_the_first_and_log_the_rest(caplog: pytest.LogCaptureFixture) -> None:
    server = Server("gateway")

    @server.tool
    def add(a: int, b: int) -> int:
        return a - b

    server.mount(gateway_upstream(), tools=["add", "pid"])
    with caplog.at_level(logging.ERROR, logger="toolkit.gateway"):
        async with Client(server) as client:
            names = [t.name for t in await client.list_tools()]
            result = await client.call_tool("add", {"a": 5, "b": 3})
    assert names == ["add", "pid"]
    assert result.text == "2"  # the local tool
    assert "its tool 'add' is not served: the name is taken" in caplog.text


async def test_progress_of_the_upstreams_call_reaches_the_downstream_client(upstream: Any) -> None:
    seen: list[tuple[float, float | None, str | None]] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        seen.append((done, total, message))

    async with Client(gateway(upstream)) as client:
        result = await client.call_tool("ticks", {"count": 3}, progress=progress)
    assert result.text == "3 ticks"
    assert seen == [(1, 3, "tick 1"), (2, 3, "tick 2"), (3, 3, "tick 3")]


@pytest.mark.parametrize("protocol", ["2026-07-28", "handshake"])
async def test_log_messages_of_the_upstreams_call_reach_the_downstream_client_at_its_level(
    upstream: Any, protocol: Any, caplog: pytest.LogCaptureFixture
) -> None:
    received: list[LogMessage] = []
    async with Client(gateway(upstream), protocol=protocol, on_log=received.append) as client:
        await client.set_logging_level("warning")
        with caplog.at_level(logging.INFO, logger="toolkit.gateway"), anyio.fail_after(10):
            result = await client.call_tool("chatty", {"text": "hello"})
    assert result.text == "logged"
    assert received == [LogMessage("warning", "warning: hello")]  # the info message is under the client's level
    assert "info: hello" in caplog.text  # the gateway's own log has both
    assert "warning: hello" in caplog.text


async def test_cancelling_a_downstream_call_cancels_the_upstream_call() -> None:
    upstream = Server("upstream")
    started, cancelled = anyio.Event(), anyio.Event()

    @upstream.tool
    async def wait() -> str:
        started.set()
        try:
            await anyio.sleep_forever()
        finally:
            cancelled.set()
        return "never"

    async with Client(gateway(upstream)) as client:
        with anyio.move_on_after(10) as scope:
            async with anyio.create_task_group() as tg:
                tg.start_soon(client.call_tool, "wait")
                await started.wait()
                tg.cancel_scope.cancel()
            await cancelled.wait()
        assert not scope.cancelled_caught
        assert [t.name for t in await client.list_tools()] == ["wait"]  # still serving


async def test_the_gateways_middleware_filter_and_timeout_apply_to_mounted_tools() -> None:
    seen: list[tuple[str, Any]] = []

    async def record(request: Request, call_next: Any) -> dict[str, Any]:
        seen.append((request.method, request.tool.name if request.tool is not None else None))
        result: dict[str, Any] = await call_next(request)
        return result

    def hide_pid(definition: ToolDefinition, request: Request) -> bool:
        return definition.name != "up_pid"

    # A timeout of 2 s: the call of `up_add` must beat it through a process of its own (under coverage, on a loaded
    # machine, a round trip may take a good part of a second); `up_hang` shows it applies.
    server = Server("gateway", tool_middleware=[record], tool_filter=hide_pid, tool_timeout=2)
    server.mount(gateway_upstream(), prefix="up")
    async with Client(server) as client:
        names = [t.name for t in await client.list_tools()]
        added = await client.call_tool("up_add", {"a": 1, "b": 2})
        hung = await client.call_tool("up_hang")
        with pytest.raises(ProtocolError, match="Unknown tool: up_pid"):
            await client.call_tool("up_pid")
    assert "up_pid" not in names
    assert added.text == "3"
    assert hung.is_error
    assert "timed out" in hung.text or "2 s" in hung.text
    assert seen == [("tools/call", "up_add"), ("tools/call", "up_hang")]


async def test_one_upstream_connection_serves_every_call_many_at_once(upstream: Any) -> None:
    methods: list[str] = []

    async def count(request: Request, call_next: Any) -> dict[str, Any]:
        methods.append(request.method)
        result: dict[str, Any] = await call_next(request)
        return result

    target = Server("upstream", middleware=[count]) if upstream != UPSTREAM_COMMAND else None
    if target is not None:

        @target.tool
        async def echo(text: str, ctx: Context) -> str:
            await anyio.lowlevel.checkpoint()
            return text

    async with Client(gateway(target if target is not None else upstream)) as client:
        name = "echo" if target is not None else "add"
        arguments: list[dict[str, Any]] = (
            [{"text": str(i)} for i in range(50)] if target is not None else [{"a": i, "b": 0} for i in range(50)]
        )
        results: list[str] = [""] * 50

        async def one(i: int) -> None:
            results[i] = (await client.call_tool(name, arguments[i])).text

        async with anyio.create_task_group() as tg:
            for i in range(50):
                tg.start_soon(one, i)
    assert results == [str(i) for i in range(50)]
    if target is not None:
        assert methods.count("server/discover") + methods.count("initialize") == 1
        assert methods.count("tools/call") == 50


@pytest.mark.parametrize("protocol", ["2026-07-28", "handshake"])
async def test_tool_search_finds_and_calls_mounted_tools(upstream: Any, protocol: Any) -> None:
    server = Server("gateway", tool_search=True)
    server.mount(upstream, prefix="up")
    async with Client(server, protocol=protocol) as client, Client(gateway_upstream(), protocol=protocol) as direct:
        listed = [definition.name for definition in await client.list_tools()]
        found = await client.call_tool("search_tools", {"query": "add two integers"})
        called = await client.call_tool("call_tool", {"name": "up_add", "arguments": {"a": 2, "b": 3}})
        expected = await direct.call_tool("add", {"a": 2, "b": 3})
    assert listed == ["search_tools", "call_tool"]
    assert found.structured_content is not None
    assert found.structured_content["tools"][0]["name"] == "up_add"
    assert wire(called) == wire(expected)


async def test_mount_options_say_no() -> None:
    server = Server("gateway")
    with pytest.raises(TypeError, match="did you mean 'prefix'"):
        server.mount(gateway_upstream(), prefx="up")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="env= and cwd= are for a command"):
        server.mount("http://127.0.0.1:1/mcp", env={"A": "1"})
    with pytest.raises(TypeError, match="headers= and auth= are for a URL"):
        server.mount(UPSTREAM_COMMAND, headers={"Authorization": "Bearer x"})
    with pytest.raises(ValueError, match="prefix="):
        server.mount(gateway_upstream(), prefix="bad prefix")
    with pytest.raises(ValueError, match="http:// or https://"):
        server.mount("ftp://example.com/mcp")
    with pytest.raises(TypeError, match="a toolkit Server, a command list or a URL"):
        server.mount(42)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"env= and cwd= are for a command \(stdio\), not a server"):
        server.mount(gateway_upstream(), env={"A": "1"})
    with pytest.raises(TypeError, match="a command to mount is a non-empty list of strings"):
        server.mount([])


async def test_mounting_a_running_server_is_refused() -> None:
    server = Server("gateway")
    async with Client(server):
        with pytest.raises(RuntimeError, match="is running"):
            server.mount(gateway_upstream())


@pytest.mark.parametrize("protocol", ["2026-07-28", "handshake"])
async def test_an_upstreams_list_changed_reaches_the_gateways_clients_with_the_new_tools(protocol: Any) -> None:
    upstream = gateway_upstream()
    changed = anyio.Event()

    def new() -> str:
        """A tool added while serving."""
        return "new"

    async with Client(gateway(upstream, prefix="up"), protocol=protocol, on_tools_changed=changed.set) as client:
        upstream.add_tool(tool(new))
        with anyio.fail_after(10):
            await changed.wait()
        names = [t.name for t in await client.list_tools()]
        result = await client.call_tool("up_new")
    assert names[-1] == "up_new"
    assert result.text == "new"


def task_upstream() -> Server:
    upstream = Server("upstream")

    @upstream.tool(task="required")
    async def report(ctx: Context) -> str:
        """A long report."""
        await ctx.report_progress(1, total=2, message="half the report")
        return "the report"

    @upstream.tool(task="optional")
    async def summary(topic: str) -> str:
        """A summary, as a task or not."""
        return f"about {topic}"

    @upstream.tool
    def now() -> str:
        """No task."""
        return "now"

    return upstream


@pytest.mark.parametrize("upstream_protocol", ["handshake", "auto", "2026-07-28"])
@pytest.mark.parametrize("protocol", ["2026-07-28", "handshake"])
async def test_an_upstream_task_tool_is_a_task_of_the_gateways_downstream(
    protocol: Any, upstream_protocol: Any
) -> None:
    # A 2025-11-25 upstream says which tools run as tasks (`execution.taskSupport`); a 2026-07-28 one decides per call
    # and lists nothing of tasks, but a toolkit server in memory still says it in its own tools (`task=`)
    mounted = gateway(task_upstream(), protocol=upstream_protocol)
    async with Client(mounted, protocol=protocol) as client, Client(task_upstream(), protocol=protocol) as direct:
        listed = {t.name: t.execution for t in await client.list_tools()}
        expected = {t.name: t.execution for t in await direct.list_tools()}
        report = await client.start_task("report")
        summary = await client.start_task("summary", {"topic": "tasks"})
        with anyio.fail_after(10):
            reported, summed = await report, await summary
        plain = await client.call_tool("report")  # a task-only tool called plainly: the client runs it as a task
        refused = await client.start_task("now")
    assert listed == expected
    assert report.id is not None
    assert reported.text == plain.text == "the report"
    assert summed.text == "about tasks"
    assert refused.id is None  # no task support upstream: the gateway answers at once
    assert (await refused).text == "now"


@pytest.mark.parametrize("protocol", ["2026-07-28", "handshake"])
async def test_a_task_of_the_gateways_cancelled_downstream_cancels_the_upstream_call(protocol: Any) -> None:
    upstream = Server("upstream")
    started, ended = threading.Event(), threading.Event()  # the upstream's task runs on its task loop's thread

    @upstream.tool(task="required")
    async def long() -> str:
        """Waits until cancelled."""
        started.set()
        try:
            await anyio.sleep_forever()
        finally:
            ended.set()
        return "never"

    async with Client(gateway(upstream, protocol="handshake"), protocol=protocol) as client:
        task = await client.start_task("long")
        assert await anyio.to_thread.run_sync(started.wait, 10)
        await task.cancel()
        assert await anyio.to_thread.run_sync(ended.wait, 10)
        with anyio.fail_after(10), pytest.raises(TaskCancelledError):
            await task
    assert task.id is not None


async def test_an_upstream_tool_whose_served_name_mcp_does_not_allow_is_left_out_and_the_rest_served(
    caplog: pytest.LogCaptureFixture,
) -> None:
    upstream = Server("upstream")

    @upstream.tool(name="a" * 128)
    def long() -> str:
        return "long"

    @upstream.tool
    def short() -> str:
        return "short"

    with caplog.at_level(logging.ERROR, logger="toolkit.gateway"):
        async with Client(gateway(upstream, prefix="up")) as client:
            names = [t.name for t in await client.list_tools()]
    assert names == ["up_short"]
    assert f"its tool 'up_{'a' * 128}' is not served" in caplog.text
