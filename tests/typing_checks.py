"""Static checks, run by `mypy --strict`: `@tool` keeps the decorated function's type.

Not collected by pytest (the name does not start with `test_`), and the `check_*` functions are never called:
they hold deliberately wrong calls. `mypy --strict tests` checks the file. Each `# type: ignore[...]` pins a call
that must be rejected: were the type lost, the ignore would be unused and `--strict` (warn_unused_ignores) fails.
"""

import sqlite3
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from typing_extensions import assert_type

from toolkit import (
    AuditLog,
    CallNext,
    CallToolResult,
    Client,
    ClientOptions,
    Context,
    DocstringStyle,
    ElicitRequest,
    ElicitResult,
    Form,
    LogLevel,
    ProgressCallback,
    ProtocolMode,
    Request,
    SampleRequest,
    SampleResult,
    Server,
    TaskInfo,
    Tool,
    ToolDefinition,
    ToolkitError,
    ToolTask,
    tool,
)
from toolkit.testing import ToolTester


@tool
def bare(a: int, b: str = "x") -> list[str]:
    return [b] * a


@tool(name="configured", read_only=True, structured=True)
def configured(a: int, *, flag: bool = False) -> dict[str, int]:
    return {"a": a, "flag": int(flag)}


@tool(run_in_thread=False)
def on_loop(a: int) -> int:
    return a


@tool
async def bare_async(query: str) -> int:
    return len(query)


@tool(description="An async tool with options.")
async def configured_async(query: str, limit: int = 10) -> list[str]:
    return [query][:limit]


class Shelf:
    def __init__(self) -> None:
        self.items: list[str] = []

    @tool
    def put(self, item: str) -> int:
        self.items.append(item)
        return len(self.items)

    @tool(idempotent=True)
    async def count(self) -> int:
        return len(self.items)


def check_sync_tools() -> None:
    assert_type(bare(2), list[str])
    assert_type(bare(2, b="y"), list[str])
    assert_type(configured(1, flag=True), dict[str, int])
    as_callable: Callable[[int, str], list[str]] = bare
    assert isinstance(bare, Tool)
    bare("two")  # type: ignore[arg-type]
    configured(1, True)  # type: ignore[call-arg]
    assert_type(as_callable(1, "z"), list[str])
    assert_type(on_loop(1), int)
    on_loop("one")  # type: ignore[arg-type]


async def check_async_tools() -> None:
    coroutine: Coroutine[Any, Any, int] = bare_async("q")
    assert_type(await coroutine, int)
    assert_type(await bare_async("q"), int)
    assert_type(await configured_async("q", limit=1), list[str])
    await configured_async(limit=1)  # type: ignore[call-arg]


async def check_methods() -> None:
    shelf = Shelf()
    assert_type(shelf.put("book"), int)
    assert_type(await shelf.count(), int)
    bound: Tool[[str], int] = shelf.put
    counted: Tool[[], Coroutine[Any, Any, int]] = shelf.count
    unbound: Tool[[Shelf, str], int] = Shelf.put
    assert_type(unbound(shelf, "x"), int)
    shelf.put(3)  # type: ignore[arg-type]
    assert_type(await bound.run({"item": "x"}), CallToolResult)
    assert_type(await counted.run(), CallToolResult)


def check_tool_api() -> None:
    assert_type(bare.definition, ToolDefinition)
    assert_type(bare.name, str)
    assert_type(bare.output_schema, dict[str, Any] | None)


async def check_context_in_async_tools(ctx: Context) -> None:
    assert_type(ctx.report_progress(1, total=2, message="half"), Awaitable[None])
    assert_type(await ctx.info("x"), None)
    await ctx.log("warning", {"any": "json"}, logger="mine")
    await ctx.log("loud", "x")  # type: ignore[arg-type]
    assert_type(ctx.cancelled, bool)


def check_context_in_sync_tools(ctx: Context) -> None:
    ctx.report_progress(1)  # a sync tool calls without await: sent before the call returns
    ctx.debug("x")
    ctx.warning("x")
    ctx.error("x")
    if ctx.cancelled:
        return


@dataclass
class AppState:
    db: sqlite3.Connection


@asynccontextmanager
async def lifespan(server: Server) -> AsyncIterator[AppState]:
    yield AppState(sqlite3.connect(":memory:"))


@asynccontextmanager
async def no_server() -> AsyncIterator[AppState]:
    yield AppState(sqlite3.connect(":memory:"))


stateful = Server("stateful", lifespan=lifespan)
Server("wrong", lifespan=no_server)  # type: ignore[arg-type]


@stateful.tool
def count_rows(table: str, ctx: Context[AppState]) -> int:
    return int(ctx.lifespan_context.db.execute(f"SELECT count(*) FROM {table}").fetchone()[0])


def check_lifespan_context(typed: Context[AppState], bare: Context, stateless: Context[None]) -> None:
    assert_type(typed.lifespan_context, AppState)
    assert_type(typed.lifespan_context.db, sqlite3.Connection)
    typed.lifespan_context.cache  # type: ignore[attr-defined]
    assert_type(bare.lifespan_context, Any)
    assert_type(stateless.lifespan_context, None)
    assert_type(Context(lifespan_context=AppState(sqlite3.connect(":memory:"))), Context[AppState])
    assert_type(count_rows("t", typed), int)
    count_rows("t", stateless)  # type: ignore[arg-type]


async def check_running() -> None:
    async with stateful.running() as state:
        assert_type(state, Any)
    async with stateful.running(lifespan=lifespan), Client(stateful, lifespan=lifespan):
        pass
    with ToolTester(stateful, lifespan=lifespan):
        pass
    Client(stateful, lifespan=no_server)  # type: ignore[arg-type]


async def check_exported_aliases(
    level: LogLevel, style: DocstringStyle, mode: ProtocolMode, progress: ProgressCallback, ctx: Context
) -> None:
    """The aliases in public signatures are importable from `toolkit` and are what those signatures take."""
    await ctx.log(level, "message")
    styled = tool(docstring_style=style)(lambda: None)
    assert_type(styled, Tool[[], None])
    async with Client(Server("aliases"), protocol=mode) as client:
        await client.call_tool("x", progress=progress)
        task = await client.start_task("x", {"n": 1}, progress=progress, ttl=60)
        assert_type(task, ToolTask)
        assert_type(await task, CallToolResult)
        assert_type(await client.task("id").status(), TaskInfo)
        assert_type(task.id, str | None)
    checked: ProtocolMode = "handshake"
    assert_type(checked, ProtocolMode)
    options: ClientOptions = {"protocol": mode, "max_message_size": 1 << 20}
    async with Client(Server("aliases"), **options), Client.http("http://127.0.0.1:1/mcp", **options):
        pass
    wrong: ClientOptions = {"protocol": "auto", "max_message_siz": 1}  # type: ignore[typeddict-unknown-key]
    assert wrong
    try:
        pass
    except ToolkitError as exc:
        assert_type(exc, ToolkitError)


# -- asking the client: the answers keep the form's type, in async tools (awaited) and sync ones (not) --------


@dataclass
class Contact:
    name: str
    age: int = 0


@tool(confirm="Delete {path}?")
async def asks_async(path: str, ctx: Context) -> str:
    answer = await ctx.elicit("Who?", Contact)
    assert_type(answer, ElicitResult[Contact])
    assert_type(answer.data, Contact | None)
    raw = await ctx.elicit("Who?", {"type": "object", "properties": {}})
    assert_type(raw.data, dict[str, Any] | None)
    form = Form(Contact)
    assert_type((await ctx.elicit("Who?", form)).data, Contact | None)
    reply = await ctx.sample("Hi", max_tokens=5)
    assert_type(reply, SampleResult)
    assert_type(reply.text, str)
    url = await ctx.elicit_url("Sign in", "https://example.com")
    assert_type(url, ElicitResult[None])
    return path


@tool
def asks_sync(ctx: Context) -> str:
    answer = ctx.elicit("Who?", Contact)
    assert_type(answer.data, Contact | None)
    return ctx.sample("Hi", max_tokens=5).text


def check_handlers() -> None:
    def answer(request: ElicitRequest) -> ElicitResult[Any]:
        return ElicitResult.accept({"name": request.message})

    async def reply(request: SampleRequest) -> str:
        return "hi"

    Client(Server("s"), elicitation_handler=answer, sampling_handler=reply)
    ToolTester(Server("s"), elicitation=["accept", {"name": "Ada"}], sampling=[SampleResult.reply("x")])
    Client(Server("s"), elicitation_handler="accept")  # type: ignore[arg-type]


def check_middleware() -> None:
    async def audit(request: Request, call_next: CallNext) -> dict[str, Any]:
        assert_type(request.method, str)
        return await call_next(request)

    def sync_hook(request: Request, call_next: CallNext) -> dict[str, Any]:
        return {}

    async def wrong_result(request: Request, call_next: CallNext) -> str:
        return "x"

    def visible(definition: ToolDefinition, request: Request) -> bool:
        return definition.name != "secret"

    Server("s", middleware=[audit, AuditLog()], tool_middleware=[audit], tool_filter=visible)
    Server("s", middleware=[sync_hook])  # type: ignore[list-item]
    Server("s", tool_middleware=[wrong_result])  # type: ignore[list-item]
    Server("s", tool_filter=audit)  # type: ignore[arg-type]

    @tool(middleware=[audit], timeout=5, max_result_bytes=1000)
    def guarded(a: int) -> int:
        return a

    assert_type(guarded(1), int)

    @tool(middleware=[sync_hook])  # type: ignore[list-item]
    def unguarded(a: int) -> int:
        return a
