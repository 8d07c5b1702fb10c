"""Issue 26: every request on any process, both eras, behind a plain round-robin proxy with no affinity at all.

Two fleets (tests/fleet.py): three uvicorn processes sharing one real Redis (`RedisBackend`), and `toolkit serve
--http --workers 3` with no Redis (its workers share the machine's own backend). Each row of docs/deploy.md's table
is run through the proxy, whose every request goes to the next process: tools that confirm, fill forms, sample,
report progress, are cancelled, close their stream and are resumed elsewhere; `logging/setLevel` and
`tools/list_changed` across processes; toolkit's `Client.http` in both eras, the official SDK's client and the
TypeScript SDK's in 2025-11-25. Every call is answered exactly once (a tool that ran twice, or an answer lost, fails
its assertion); the proxy validates every server message against the official schema.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any

import anyio
import mcp
import mcp_types as t
import pytest
from fleet import Fleet
from mcp.client.session import ClientRequestContext
from mcp.client.streamable_http import streamable_http_client
from served import TIMEOUT, run_node_script

from toolkit import Client, ElicitRequest, ElicitResult, LogMessage, ProtocolError, ProtocolMode, SampleRequest

pytestmark = pytest.mark.anyio
PROCESSES = 3
ERAS = pytest.mark.parametrize("protocol", ["2026-07-28", "handshake"])
ASYNCIO = pytest.mark.parametrize("anyio_backend", ["asyncio"])  # the servers are the subject


@pytest.fixture(scope="module", params=["redis", "workers"])
def fleet(request: pytest.FixtureRequest) -> Iterator[Fleet]:
    with Fleet.running(request.param, PROCESSES) as fleet:
        yield fleet


async def accept(request: ElicitRequest) -> ElicitResult[Any]:
    return ElicitResult.accept({"name": "Ada"} if "name" in request.message else {})  # `Your name?` asks one


def sample(request: SampleRequest) -> str:
    return "short"


def client(fleet: Fleet, protocol: ProtocolMode, **options: Any) -> Client:
    return Client.http(fleet.url, protocol=protocol, elicitation_handler=accept, sampling_handler=sample, **options)


async def with_progress(session: Client, name: str, arguments: dict[str, Any]) -> tuple[str | None, list[float]]:
    """Call `name` with a progress callback: its answer, and the progress it reported."""
    seen: list[float] = []
    with anyio.fail_after(TIMEOUT):
        result = await session.call_tool(name, arguments, progress=lambda done, total, message: seen.append(done))
    return result.text, seen


@ERAS
async def test_every_row_of_a_tool_answers_once_on_any_process(fleet: Fleet, protocol: ProtocolMode) -> None:
    async with client(fleet, protocol) as session:
        pids: set[str | None] = set()
        for _ in range(2 * PROCESSES):
            with anyio.fail_after(TIMEOUT):
                pids.add((await session.call_tool("worker")).text)
                assert (await session.call_tool("purge")).text == "purged"
                assert (await session.call_tool("greet")).text == "hello Ada"
                assert (await session.call_tool("summarize", {"text": "a long text"})).text == "summary: short"
            assert await with_progress(session, "ticks", {"count": 3}) == ("3 ticks", [1, 2, 3])
        if fleet.redis is not None:  # separate processes behind the proxy's round robin: spread, strictly
            assert len(pids) > 1
        # Behind `--workers` the kernel hands each fresh connection to whichever worker accepts it first, and
        # nothing spreads a few sequential ones (docs/deploy.md): calls at once do reach other workers, and the
        # session's requests must be answered there too.
        with anyio.fail_after(TIMEOUT):
            while len(pids) < 2:
                pids.update(await at_once(session, "worker", PROCESSES))


async def at_once(session: Client, name: str, count: int) -> set[str | None]:
    """Call `name` `count` times at once in one session: the texts of the answers."""
    texts: set[str | None] = set()

    async def one() -> None:
        texts.add((await session.call_tool(name)).text)

    async with anyio.create_task_group() as group:
        for _ in range(count):
            group.start_soon(one)
    return texts


@ERAS
async def test_a_task_started_on_one_process_is_answered_and_awaited_on_any(
    fleet: Fleet, protocol: ProtocolMode
) -> None:
    async with client(fleet, protocol) as session:
        with anyio.fail_after(TIMEOUT):
            task = await session.start_task("report", {"weeks": 4})
            assert task.id is not None  # a task, polled (and its question answered) through the round robin
            result = await task
    assert (result.text or "").startswith("report of 4 weeks for Ada by ")
    async with client(fleet, protocol) as later:  # another client, another process
        with anyio.fail_after(TIMEOUT):
            if protocol == "2026-07-28":  # the same task, done: its id is the capability
                assert (await later.task(task.id).result()).text == result.text
            else:  # an anonymous 2025-11-25 task is its session's, whichever process serves the other session
                with pytest.raises(ProtocolError) as refused:
                    await later.task(task.id).result()
                assert refused.value.code == -32602


@ASYNCIO
async def test_a_closed_stream_resumes_on_another_process(fleet: Fleet) -> None:
    async with client(fleet, "handshake") as session:
        for _ in range(PROCESSES):
            assert await with_progress(session, "poll", {"count": 3}) == ("polled", [1, 2, 3])


@ASYNCIO
async def test_a_dropped_connection_resumes_on_another_process(fleet: Fleet) -> None:
    async with client(fleet, "handshake") as session:
        for _ in range(PROCESSES):
            assert await with_progress(session, "dropped", {}) == ("resumed after a drop", [1, 2, 3])
    with anyio.fail_after(TIMEOUT):  # the proxy said so on its stderr, which a thread reads: a moment later at most
        while fleet.said.count("dropped a connection, as asked\n") < PROCESSES:
            await anyio.wait_all_tasks_blocked()


def listening() -> tuple[socket.socket, int]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    sock.setblocking(False)
    return sock, sock.getsockname()[1]


@ASYNCIO
async def test_a_cancellation_reaches_the_process_that_runs_the_call(fleet: Fleet) -> None:
    sock, port = listening()
    with sock:
        async with client(fleet, "handshake") as session:
            for _ in range(PROCESSES):
                with anyio.fail_after(TIMEOUT):
                    await cancel_once(session, port)
                    await anyio.wait_readable(sock)  # the tool was cancelled: it said so
                    conn, _ = sock.accept()
                    with conn:
                        assert conn.recv(64).startswith(b"cancelled")


async def cancel_once(session: Client, port: int) -> None:
    """Call `wait`, and cancel the call once it has reported progress (so once it runs, on some process)."""
    started = anyio.Event()
    scope = anyio.CancelScope()

    async def call() -> None:
        with scope:
            await session.call_tool("wait", {"port": port}, progress=lambda *_: started.set())

    async with anyio.create_task_group() as tg:
        tg.start_soon(call)
        await started.wait()
        scope.cancel()  # the client sends notifications/cancelled, to the next process


@ASYNCIO
async def test_set_level_holds_on_every_process(fleet: Fleet) -> None:
    logs: list[LogMessage] = []
    async with client(fleet, "handshake", on_log=logs.append) as session:
        await session.set_logging_level("error")
        for _ in range(PROCESSES):
            with anyio.fail_after(TIMEOUT):
                assert (await session.call_tool("chatty")).text == "said"
    assert [log.data for log in logs] == ["an error"] * PROCESSES


@ASYNCIO
async def test_tools_list_changed_reaches_the_listeners_of_every_process(fleet: Fleet) -> None:
    for _ in range(PROCESSES):
        changed = anyio.Event()
        async with client(fleet, "handshake", on_tools_changed=changed.set) as session:
            with anyio.fail_after(TIMEOUT):
                # The client opens its GET stream beside its first requests: a change made before that stream
                # listens is not for it (a GET stream replays nothing), so change until one is heard.
                while not changed.is_set():
                    assert (await session.call_tool("change")).text == "changed"  # on the next process
                    with anyio.move_on_after(1):
                        await changed.wait()


class SdkCallbacks:
    async def elicit(self, context: ClientRequestContext, params: t.ElicitRequestParams) -> t.ElicitResult:
        return t.ElicitResult(action="accept", content={"name": "Ada"} if "name" in params.message else {})

    async def sample(
        self, context: ClientRequestContext, params: t.CreateMessageRequestParams
    ) -> t.CreateMessageResult:
        content = t.TextContent(type="text", text="short")
        return t.CreateMessageResult(role="assistant", content=content, model="m", stop_reason="endTurn")


def text(result: Any) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, t.TextContent))


@ASYNCIO
async def test_the_official_sdk_client_in_2025_11_25(fleet: Fleet) -> None:
    callbacks = SdkCallbacks()
    seen: list[float] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append(progress)

    with anyio.fail_after(TIMEOUT * 2):
        async with mcp.Client(
            streamable_http_client(fleet.url),
            mode="legacy",
            elicitation_callback=callbacks.elicit,
            sampling_callback=callbacks.sample,
        ) as session:
            for _ in range(PROCESSES):
                assert text(await session.call_tool("purge", {})) == "purged"
                assert text(await session.call_tool("greet", {})) == "hello Ada"
                assert text(await session.call_tool("summarize", {"text": "x"})) == "summary: short"
                result = await session.call_tool("ticks", {"count": 2}, progress_callback=on_progress)
            assert (text(result), seen) == ("2 ticks", [1, 2] * PROCESSES)


def test_the_typescript_sdk_client_in_2025_11_25(fleet: Fleet) -> None:
    printed = run_node_script("fleet_client.mjs", fleet.url, str(PROCESSES), timeout=TIMEOUT * 2)
    rounds = [
        {
            "purge": "purged",
            "greet": "hello Ada",
            "summarize": "summary: short",
            "ticks": "2 ticks",
            "progress": [1, 2],
        }
    ] * PROCESSES
    assert printed == {"protocolVersion": "2025-11-25", "rounds": rounds}
