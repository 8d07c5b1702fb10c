"""A toolkit server mounted in memory is called through its own `tools/call` pipeline, in process (no second protocol
hop): it must behave exactly as when a client calls it. Each test compares the mounted call with a direct one, or
shows what the upstream's own options do, in both downstream eras (and both upstream eras where they differ)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from toolkit import (
    CallNext,
    Client,
    Context,
    ElicitRequest,
    ElicitResult,
    Identity,
    ProtocolError,
    Request,
    SampleRequest,
    SampleResult,
    Server,
    StaticTokenVerifier,
    StreamingASGITransport,
    TaskCancelledError,
    ToolDefinition,
)

pytestmark = pytest.mark.anyio

ERAS = ["2026-07-28", "handshake"]
NAME = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


def wire(result: Any) -> dict[str, Any]:
    dumped: dict[str, Any] = result.model_dump(mode="json", by_alias=True, exclude_none=True)
    return dumped


def mounted(upstream: Server, **options: Any) -> Server:
    gateway = Server("gateway")
    gateway.mount(upstream, **options)
    return gateway


def failing_upstream() -> Server:
    upstream = Server("failing")

    @upstream.tool
    def broken(x: int) -> int:
        """Raises an exception of its own."""
        raise ValueError(f"no {x}")

    @upstream.tool
    async def broken_async() -> str:
        """Raises from an async tool."""
        raise RuntimeError("gone")

    return upstream


@pytest.mark.parametrize("client_era", ERAS)
async def test_an_upstream_tool_that_raises_ends_the_call_as_a_direct_call_ends(client_era: Any) -> None:
    async with (
        Client(mounted(failing_upstream()), protocol=client_era) as client,
        Client(failing_upstream(), protocol=client_era) as direct,
    ):
        calls: list[tuple[str, dict[str, Any]]] = [("broken", {"x": 1}), ("broken_async", {}), ("broken", {"x": "one"})]
        for name, arguments in calls:
            got, expected = await client.call_tool(name, arguments), await direct.call_tool(name, arguments)
            assert got.is_error
            assert wire(got) == wire(expected)


def asking_upstream(runs: list[str]) -> Server:
    upstream = Server("asking")

    @upstream.tool
    def interview(ctx: Context) -> str:
        """A sync tool (on a worker thread) that asks a name, the model, and the roots."""
        runs.append("interview")
        name = ctx.elicit("Your name?", NAME)
        if not name.accepted or name.data is None:
            return f"no name ({name.action})"
        sampled = ctx.sample(f"A greeting for {name.data['name']}", max_tokens=20)
        return f"{sampled.text} ({len(list(ctx.list_roots()))} root)"

    return upstream


@pytest.mark.parametrize("upstream_era", ["auto", *ERAS])
@pytest.mark.parametrize("client_era", ERAS)
async def test_a_sync_upstream_tools_questions_are_answered_by_the_downstream_client(
    client_era: Any, upstream_era: Any, tmp_path: Path
) -> None:
    asked: list[str] = []
    runs: list[str] = []

    def elicit(request: ElicitRequest) -> ElicitResult[Any]:
        asked.append(request.message)
        return ElicitResult.accept({"name": "Ada"}) if len(asked) == 1 else ElicitResult.decline()

    def sample(request: SampleRequest) -> SampleResult:
        asked.append("sample")
        return SampleResult.reply("Hello, Ada")

    async with Client(
        mounted(asking_upstream(runs), protocol=upstream_era),
        protocol=client_era,
        elicitation_handler=elicit,
        sampling_handler=sample,
        roots=[tmp_path],
    ) as client:
        with anyio.fail_after(20):
            first = await client.call_tool("interview")
            asked.clear()
            asked.append("answered before")  # the next elicitation is declined
            second = await client.call_tool("interview")
    assert first.text == "Hello, Ada (1 root)"
    assert second.text == "no name (decline)"
    assert runs


@pytest.mark.parametrize("client_era", ERAS)
async def test_an_upstream_question_the_downstream_client_cannot_answer_fails_the_call(client_era: Any) -> None:
    upstream = Server("asking")

    @upstream.tool
    async def ask(ctx: Context) -> str:
        """Asks a name."""
        answer = await ctx.elicit("Your name?", NAME)
        return str(answer.action)

    async with Client(mounted(upstream), protocol=client_era) as client:  # no elicitation handler
        if client_era == "handshake":  # the upstream's question fails, and so does its call: a tool error
            result = await client.call_tool("ask")
            assert result.is_error
            assert "elicitation" in result.text
        else:  # 2026-07-28: the gateway's call needs a capability the client did not declare (-32021)
            with pytest.raises(ProtocolError, match=r"requires the elicitation\.form capability"):
                await client.call_tool("ask")


@pytest.mark.parametrize("client_era", ERAS)
async def test_a_sync_upstream_tools_progress_reaches_the_downstream_client(client_era: Any) -> None:
    upstream = Server("progress")

    @upstream.tool
    def steps(count: int, ctx: Context) -> str:
        """Reports progress from its worker thread."""
        for done in range(1, count + 1):
            ctx.report_progress(done, total=count, message=f"step {done}")
        return "done"

    seen: list[tuple[float, float | None, str | None]] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        seen.append((done, total, message))

    async with Client(mounted(upstream), protocol=client_era) as client:
        result = await client.call_tool("steps", {"count": 3}, progress=progress)
    assert result.text == "done"
    assert seen == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]


async def test_a_cancelled_downstream_call_tells_a_sync_upstream_tool_it_is_cancelled() -> None:
    upstream = Server("slow")
    started, stopped = threading.Event(), threading.Event()

    @upstream.tool
    def slow(ctx: Context) -> str:
        """Works until it is told the call is cancelled."""
        started.set()
        while not ctx.cancelled:
            stopped.wait(0.01)
        stopped.set()
        return "stopped"

    async with Client(mounted(upstream)) as client:
        async with anyio.create_task_group() as tg:
            tg.start_soon(client.call_tool, "slow")
            assert await anyio.to_thread.run_sync(started.wait, 10)
            tg.cancel_scope.cancel()
        assert await anyio.to_thread.run_sync(stopped.wait, 10)
        assert [t.name for t in await client.list_tools()] == ["slow"]  # still serving


@pytest.mark.parametrize("client_era", ERAS)
async def test_a_gateway_task_of_an_in_process_call_cancelled_cancels_the_upstream_call(client_era: Any) -> None:
    upstream = Server("upstream")
    started, ended = threading.Event(), threading.Event()

    @upstream.tool(task="optional")
    async def long() -> str:
        """Waits until cancelled: called plainly, it runs in process, from the gateway's task loop."""
        started.set()
        try:
            await anyio.sleep_forever()
        finally:
            ended.set()
        return "never"

    async with Client(mounted(upstream, protocol="handshake"), protocol=client_era) as client:
        task = await client.start_task("long")
        assert task.id is not None
        assert await anyio.to_thread.run_sync(started.wait, 10)
        await task.cancel()
        assert await anyio.to_thread.run_sync(ended.wait, 10)
        with anyio.fail_after(10), pytest.raises(TaskCancelledError):
            await task


def guarded_upstream(seen: list[str]) -> Server:
    async def record(request: Request, call_next: CallNext) -> dict[str, Any]:
        seen.append(f"{request.method} {request.tool.name if request.tool is not None else None}")
        return await call_next(request)

    async def stamp(request: Request, call_next: CallNext) -> dict[str, Any]:
        result = await call_next(request)
        result["content"] = [*result["content"], {"type": "text", "text": "checked upstream"}]
        return result

    def hide_secret(definition: ToolDefinition, request: Request) -> bool:  # listed, but never called
        return definition.name != "secret" or request.method != "tools/call"

    # A timeout of 1 s, not 0.2: `add` (a worker thread) must beat it on a loaded machine; `hang` shows it applies.
    upstream = Server("guarded", middleware=[record], tool_middleware=[stamp], tool_filter=hide_secret, tool_timeout=1)

    @upstream.tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @upstream.tool
    async def hang() -> str:
        """Never answers."""
        await anyio.sleep_forever()
        return "never"

    @upstream.tool
    def secret() -> str:
        """Hidden by the upstream's filter."""
        return "secret"

    return upstream


@pytest.mark.parametrize("client_era", ERAS)
async def test_the_upstreams_middleware_filter_and_timeout_apply_to_its_mounted_calls(client_era: Any) -> None:
    seen: list[str] = []
    async with (
        Client(mounted(guarded_upstream(seen), prefix="up"), protocol=client_era) as client,
        Client(guarded_upstream([]), protocol=client_era) as direct,
    ):
        names = [t.name for t in await client.list_tools()]
        added = await client.call_tool("up_add", {"a": 1, "b": 2})
        hung = await client.call_tool("up_hang")
        expected = await direct.call_tool("hang")
        refused = await client.call_tool("up_secret")
        with pytest.raises(ProtocolError, match="Unknown tool: secret"):
            await direct.call_tool("secret")
    assert names == ["up_add", "up_hang", "up_secret"]
    assert refused.is_error
    assert "refused the call: Unknown tool: secret" in refused.text
    assert [block.text for block in added.content] == ["3", "checked upstream"]  # type: ignore[union-attr]
    assert wire(hung) == wire(expected)  # the upstream's own timeout, as it answers a client
    assert hung.is_error
    assert seen.count("tools/call add") == 1
    assert seen.count("tools/call hang") == 1
    assert seen.count("tools/call None") == 1  # the hidden tool's call: the middleware does not see the tool


async def test_the_upstreams_limit_of_requests_in_flight_holds_for_its_mounted_calls() -> None:
    upstream = Server("narrow", max_concurrent_requests=1)
    started, release = anyio.Event(), anyio.Event()

    @upstream.tool
    async def hold() -> str:
        """Holds its call until released."""
        started.set()
        await release.wait()
        return "released"

    async with Client(mounted(upstream)) as client:
        held: list[str] = []

        async def first() -> None:
            held.append((await client.call_tool("hold")).text)

        async with anyio.create_task_group() as tg:
            tg.start_soon(first)
            with anyio.fail_after(10):
                await started.wait()
            refused = await client.call_tool("hold")  # a second call while one is in flight: one too many
            release.set()
    assert held == ["released"]
    assert refused.is_error
    assert "Too many requests in flight" in refused.text


@pytest.mark.parametrize("client_era", ERAS)
async def test_the_upstream_sees_no_caller_identity_as_over_an_in_memory_connection(client_era: Any) -> None:
    upstream = Server("who")

    @upstream.tool
    def whoami(ctx: Context) -> str:
        """Who the upstream sees calling."""
        return repr(ctx.identity)

    gateway = mounted(upstream, prefix="up")

    @gateway.tool
    def gateway_whoami(ctx: Context) -> str:
        """Who the gateway sees calling."""
        return ctx.identity.subject if ctx.identity is not None else "nobody"

    token = "user-token-0123456789abcdef"
    verifier = StaticTokenVerifier({token: Identity("user", frozenset())})
    app = gateway.http_app(auth=verifier, authorization_servers=["https://auth.example.com"])
    async with (
        app.running(),
        httpx.AsyncClient(transport=StreamingASGITransport(app)) as http,
        Client.http(
            "http://127.0.0.1:8000/mcp",
            http_client=http,
            headers={"Authorization": f"Bearer {token}"},
            protocol=client_era,
        ) as client,
    ):
        assert (await client.call_tool("gateway_whoami")).text == "user"
        assert (await client.call_tool("up_whoami")).text == "None"  # the gateway's auth decides, not the upstream


async def test_a_2026_client_gets_an_upstreams_questions_asked_together_one_round_each_under_the_gateways_keys() -> (
    None
):
    # docs/gateway.md, "What a 2026-07-28 client sees of an upstream's questions": replayed, not passed through.
    upstream = Server("together")
    runs: list[str] = []

    @upstream.tool
    async def both(ctx: Context) -> str:
        """Asks two questions at once, under keys of its own."""
        runs.append("both")
        async with ctx.together():
            first = ctx.confirm("First?", key="first")
            second = ctx.confirm("Second?", key="second")
        return f"{first.accepted} {second.accepted}"

    keys: list[str | None] = []

    def elicit(request: ElicitRequest) -> ElicitResult[Any]:
        keys.append(request.key)
        return ElicitResult.accept({})

    async with Client(mounted(upstream), protocol="2026-07-28", elicitation_handler=elicit) as client:
        result = await client.call_tool("both")
    assert result.text == "True True"
    assert keys == ["elicitation1", "elicitation2"]  # one round each, under the gateway's keys
    # The upstream's round of two asked in each downstream round's run, and once more with both answers.
    assert len(runs) == 4
