"""Two workers of one server on one backend, behind a round-robin balancer (every request to the next worker, no
affinity): each row of issue 26 that two apps in one process can show, on `MemoryBackend` (asyncio and trio) and
on `RedisBackend` with a real Redis server (asyncio: redis.asyncio). The three-process runs are the fleet tests'.

Each worker is a `Server` of its own (as in another process) with the same tools and the same secret.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
import wire
from redis_server import RedisServer, kind_and_loop_fixture, loop_of_kind_fixture  # noqa: F401
from servers import tasks_server
from test_http import initialize, legacy_headers, modern_headers, modern_message, post

from toolkit import (
    Backend,
    Client,
    Context,
    ElicitRequest,
    ElicitResult,
    LogMessage,
    MemoryBackend,
    ProtocolMode,
    RateLimit,
    RedisBackend,
    SampleRequest,
    SampleResult,
    Server,
    StreamingASGITransport,
)
from toolkit._backend.local import LocalBackend
from toolkit._http.serve import local_hub

pytestmark = pytest.mark.anyio

SECRET = "a shared secret of at least thirty-two bytes"
BASE = "http://127.0.0.1:8000"
CALLS: dict[str, anyio.Event] = {}  # the `wait` tool says when it started and when it was cancelled


def make_server(backend: Backend | None = None) -> Server:
    server = Server("fleet", secret=SECRET, backend=backend)

    @server.tool(confirm="Really purge?")
    def purge() -> str:
        return "purged"

    @server.tool
    def add(a: int, b: int) -> int:
        return a + b

    @server.tool
    async def ask_model(ctx: Context) -> str:
        reply = await ctx.sample("Say hi", max_tokens=10)
        roots = await ctx.list_roots()
        return f"{reply.text} from {len(list(roots))} roots"

    @server.tool
    async def wait(ctx: Context) -> str:
        CALLS["started"].set()
        try:
            await anyio.sleep_forever()
        finally:
            CALLS["cancelled"].set()
        return "never"

    @server.tool
    async def polled(ctx: Context) -> str:
        await ctx.info("before")
        await ctx.close_sse_stream()  # the client resumes with GET + Last-Event-ID: on the other worker
        await ctx.info("after")
        return "resumed"

    @server.tool
    async def patient(ctx: Context) -> str:
        await ctx.info("before")
        await anyio.sleep(0.2)  # works longer than sse_close_after: its stream is resumed a few times meanwhile
        await ctx.info("after")
        return "resumed"

    @server.tool
    async def stuck(ctx: Context) -> str:
        await ctx.info("before")
        await ctx.close_sse_stream()
        await anyio.sleep_forever()  # cancelled when its worker stops
        return "never"

    @server.tool
    async def chatty(ctx: Context) -> str:
        await ctx.info("hello")
        return "said"

    return server


def _extra() -> str:
    return "added at run time"


class RoundRobin:
    """An ASGI app that hands each request to the next worker in turn (a plain round-robin balancer)."""

    def __init__(self, apps: list[Any]) -> None:
        self.apps = apps
        self.turn = 0

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        app = self.apps[self.turn % len(self.apps)]
        self.turn += 1
        await app(scope, receive, send)


async def run_lifespan(app: Any, started: anyio.Event, stop: anyio.Event) -> None:
    sent: list[str] = []

    async def receive() -> dict[str, str]:
        if not sent:
            sent.append("startup")
            return {"type": "lifespan.startup"}
        await stop.wait()
        return {"type": "lifespan.shutdown"}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "lifespan.startup.complete":
            started.set()
        assert message["type"] != "lifespan.startup.failed", message

    await app({"type": "lifespan"}, receive, send)


# A backend's round trips are bounded by its timeout (0.5 s by default, a production bound), and on a loaded machine
# (CI: coverage, six workers on two cores) a connection to Redis took longer than that: the request then failed with
# "Shared state unavailable". Here the bound is for a hang only; the test of a slow Redis gives its own, shorter one.
# (A stopped Redis or hub refuses connections at once: no timeout is waited for then.)
BACKEND_TIMEOUT = 10.0


def backends(
    kind: str, url: str, count: int = 2, events_ttl: float = 60.0, timeout: float = BACKEND_TIMEOUT
) -> list[Backend]:
    if kind.startswith("local:"):  # the workers of `toolkit serve --workers` on one machine: a hub in a thread
        return [LocalBackend(kind.removeprefix("local:"), timeout=timeout) for _ in range(count)]
    if kind == "memory":
        first = MemoryBackend(events_ttl=events_ttl)
        return [first, *(first.peer() for _ in range(count - 1))]
    return [RedisBackend(url, timeout=timeout, events_ttl=events_ttl) for _ in range(count)]


@asynccontextmanager
async def fleet(
    kind: str,
    url: str,
    *,
    on_server: bool = False,
    events_ttl: float = 60.0,
    backend_timeout: float = BACKEND_TIMEOUT,
    build: Callable[[Backend | None], Server] = make_server,
    **options: Any,
) -> AsyncIterator[tuple[httpx.AsyncClient, RoundRobin]]:
    """Two workers' apps behind a round robin, their lifespans running, and an HTTP client on them. The backend is
    given to `http_app(backend=)`, or with `on_server` to `Server(backend=)` (of the server `build` makes)."""
    made = backends(kind, url, events_ttl=events_ttl, timeout=backend_timeout)
    if on_server:
        apps = [build(backend).http_app(**options) for backend in made]
    else:
        apps = [make_server().http_app(backend=backend, **options) for backend in made]
    stop = anyio.Event()
    async with anyio.create_task_group() as tg:
        for app in apps:
            started = anyio.Event()
            tg.start_soon(run_lifespan, app, started, stop)
            with anyio.fail_after(wire.TIMEOUT):
                await started.wait()
        balancer = RoundRobin(apps)
        transport = StreamingASGITransport(balancer)
        try:
            async with httpx.AsyncClient(transport=transport, base_url=BASE, timeout=wire.TIMEOUT) as client:
                yield client, balancer
        finally:
            stop.set()


@pytest.fixture
def kind(kind_and_loop: tuple[str, str], tmp_path: Path) -> Iterator[str]:
    """memory, local or redis (tests/redis_server.py's `kind_and_loop`: Redis on asyncio only)."""
    if kind_and_loop[0] == "local":  # the hub of `toolkit serve --workers`, as its supervisor serves it
        with local_hub(str(tmp_path)) as hub:
            yield f"local:{hub.path}"
        return
    yield kind_and_loop[0]


@pytest.mark.parametrize("protocol", ["handshake", "2026-07-28"])  # a request to the client, or a second round
async def test_every_answer_to_a_question_reaches_the_worker_whose_tool_waits(
    kind: str, redis_url: str, protocol: ProtocolMode
) -> None:
    asked = 0

    async def confirm(request: ElicitRequest) -> ElicitResult[Any]:
        nonlocal asked
        asked += 1
        return ElicitResult.accept()

    async with (
        fleet(kind, redis_url) as (http, _),
        Client.http(f"{BASE}/mcp", http_client=http, protocol=protocol, elicitation_handler=confirm) as client,
    ):
        for _ in range(6):  # the answers land on either worker: half of them on the one that did not ask
            with anyio.fail_after(wire.TIMEOUT):
                result = await client.call_tool("purge")
            assert (result.is_error, result.text) == (False, "purged")
    assert asked == 6


async def test_sampling_and_roots_answers_reach_the_asking_worker(kind: str, redis_url: str) -> None:
    async def model(request: SampleRequest) -> SampleResult:
        return SampleResult.reply("hi")

    async with (
        fleet(kind, redis_url) as (http, _),
        Client.http(
            f"{BASE}/mcp", http_client=http, protocol="handshake", sampling_handler=model, roots=["/tmp"]
        ) as client,
    ):
        for _ in range(4):  # two answers per call, each to either worker
            with anyio.fail_after(wire.TIMEOUT):
                result = await client.call_tool("ask_model")
            assert (result.is_error, result.text) == (False, "hi from 1 roots")


async def test_an_answer_for_a_worker_that_is_gone_is_refused_at_once(kind: str, redis_url: str) -> None:
    async with fleet(kind, redis_url) as (http, _):
        session = await initialize(http)
        answer = {"jsonrpc": "2.0", "id": "0123456789ab-7", "result": {"action": "accept", "content": {}}}
        response, [reply] = await post(http, answer, legacy_headers(session), wire.LATEST)
        assert response.status_code == 400
        assert "gone" in reply["error"]["message"]


async def test_a_session_ended_on_one_worker_is_ended_on_every_worker(kind: str, redis_url: str) -> None:
    async with fleet(kind, redis_url) as (http, _):
        session = await initialize(http)
        with anyio.fail_after(wire.TIMEOUT):
            ended = await http.delete("/mcp", headers=legacy_headers(session))
        assert ended.status_code == 204
        listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
        for _ in range(2):  # on both workers
            response, _ = await post(http, listing, legacy_headers(session), wire.LATEST)
            assert response.status_code == 404


async def test_a_delete_on_one_worker_stops_the_sessions_calls_on_the_other(kind: str, redis_url: str) -> None:
    async with fleet(kind, redis_url) as (http, balancer):
        balancer.turn = 0
        session = await initialize(http)
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "wait", "arguments": {}}}
        CALLS["started"], CALLS["cancelled"] = anyio.Event(), anyio.Event()
        async with anyio.create_task_group() as tg:
            balancer.turn = 0  # the call on the first worker

            async def run_call() -> None:
                await http.post("/mcp", json=call, headers=legacy_headers(session))

            tg.start_soon(run_call)
            with anyio.fail_after(wire.TIMEOUT):
                await CALLS["started"].wait()
            balancer.turn = 1  # the DELETE on the second
            with anyio.fail_after(wire.TIMEOUT):
                ended = await http.delete("/mcp", headers=legacy_headers(session))
            assert ended.status_code == 204
            with anyio.fail_after(wire.TIMEOUT):
                await CALLS["cancelled"].wait()
        assert CALLS["cancelled"].is_set()


async def test_the_rate_limit_holds_for_the_workers_together(kind: str, redis_url: str) -> None:
    limit = RateLimit(calls=2, per=3600.0)
    async with fleet(kind, redis_url, on_server=True, rate_limit=limit) as (http, _):
        statuses = []
        for i in range(4):
            message = modern_message("tools/call", {"name": "add", "arguments": {"a": i, "b": 0}}, request_id=i)
            response, _ = await post(http, message, modern_headers(message))
            statuses.append(response.status_code)
        assert statuses == [200, 200, 429, 429]  # per worker it would be 4 x 200


async def test_a_log_level_set_on_one_worker_holds_on_the_other(kind: str, redis_url: str) -> None:
    async with fleet(kind, redis_url) as (http, _):
        session = await initialize(http)
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "chatty", "arguments": {}}}

        async def logged() -> list[str]:
            _, messages = await post(http, call, legacy_headers(session), wire.LATEST)
            return [m.get("method", "answer") for m in messages]

        assert await logged() == ["notifications/message", "answer"]  # info, by default
        level = {"jsonrpc": "2.0", "id": 1, "method": "logging/setLevel", "params": {"level": "error"}}
        response, [reply] = await post(http, level, legacy_headers(session), wire.LATEST)
        assert (response.status_code, reply["result"]) == (200, {})
        assert [await logged(), await logged()] == [["answer"], ["answer"]]  # on both workers


async def test_a_cancellation_reaches_the_worker_that_runs_the_call(kind: str, redis_url: str) -> None:
    async with (
        fleet(kind, redis_url) as (http, _),
        Client.http(f"{BASE}/mcp", http_client=http, protocol="handshake") as client,
    ):
        for _ in range(2):  # the notification lands on either worker, the call's or the other
            CALLS["started"], CALLS["cancelled"] = anyio.Event(), anyio.Event()
            async with anyio.create_task_group() as tg:
                tg.start_soon(client.call_tool, "wait")
                with anyio.fail_after(wire.TIMEOUT):
                    await CALLS["started"].wait()
                tg.cancel_scope.cancel()  # the client sends notifications/cancelled
            with anyio.fail_after(wire.TIMEOUT):
                await CALLS["cancelled"].wait()
            assert CALLS["cancelled"].is_set()


async def test_a_closed_stream_resumes_on_any_worker(kind: str, redis_url: str) -> None:
    logged: list[str] = []

    async def log(message: LogMessage) -> None:
        logged.append(str(message.data))

    async with (
        fleet(kind, redis_url, sse_retry=0.0) as (http, _),
        Client.http(f"{BASE}/mcp", http_client=http, protocol="handshake", on_log=log) as client,
    ):
        for _ in range(2):  # the resumption lands on either worker
            with anyio.fail_after(wire.TIMEOUT):
                result = await client.call_tool("polled")
            assert (result.is_error, result.text) == (False, "resumed")
    assert logged == ["before", "after"] * 2


async def test_every_close_after_resumes_on_the_next_worker(kind: str, redis_url: str) -> None:
    logged: list[str] = []

    async def log(message: LogMessage) -> None:
        logged.append(str(message.data))

    async with (
        fleet(kind, redis_url, sse_retry=0.0, sse_close_after=0.05) as (http, _),
        Client.http(f"{BASE}/mcp", http_client=http, protocol="handshake", on_log=log) as client,
    ):
        with anyio.fail_after(wire.TIMEOUT):
            result = await client.call_tool("patient")
        assert result.text == "resumed"
    assert logged == ["before", "after"]  # each event once, whichever worker served it


@pytest.mark.parametrize("protocol", ["handshake", "2026-07-28"])  # a GET stream, or subscriptions/listen
async def test_a_tool_list_change_on_one_worker_reaches_the_listeners_on_either(
    kind: str, redis_url: str, protocol: ProtocolMode
) -> None:
    changed = anyio.Event()

    def on_changed() -> None:
        changed.set()

    async with (
        fleet(kind, redis_url) as (http, balancer),
        Client.http(f"{BASE}/mcp", http_client=http, protocol=protocol, on_tools_changed=on_changed) as client,
    ):
        with anyio.fail_after(wire.TIMEOUT):  # the client opens its stream in a task of its own
            while not any(app.registry.connections for app in balancer.apps):  # noqa: ASYNC110 - a bounded wait on the stream
                await anyio.sleep(0.01)
        for number, app in enumerate(balancer.apps):  # the GET stream is on one of them: one change is on the other
            changed = anyio.Event()
            extra = make_server().tool(name=f"extra{number}")(_extra)
            app.server.add_tool(extra)
            with anyio.fail_after(wire.TIMEOUT):
                await changed.wait()
            assert changed.is_set()
        assert {"extra0", "extra1"} & {tool.name for tool in await client.list_tools()}


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_redis_slow_answers_503_at_once_and_nothing_hangs(redis_server: RedisServer) -> None:
    async with fleet("redis", redis_server.url, backend_timeout=0.5) as (http, _):
        session = await initialize(http)
        listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
        # Every Redis command waits 4 s: far longer than the backend's bound (twice its 0.5 s timeout), so that a
        # stall of this process between the pause and the request cannot let the pause end first.
        redis_server.pause(4000)
        with anyio.fail_after(5):
            response, [reply] = await post(http, listing, legacy_headers(session), wire.LATEST)
        assert response.status_code == 503
        assert "Redis" in reply["error"]["message"]


async def test_a_stream_whose_worker_is_gone_is_refused_on_resumption(kind: str, redis_url: str) -> None:
    async with fleet(kind, redis_url, sse_retry=0.0) as (http, balancer):
        balancer.turn = 0  # every request below goes to the worker named, not in turn
        session = await initialize(http)
        balancer.turn = 0
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "stuck", "arguments": {}}}
        with anyio.fail_after(wire.TIMEOUT):
            response = await http.post("/mcp", json=call, headers=legacy_headers(session))
        ids = [line[4:] for line in response.text.splitlines() if line.startswith("id: ")]
        assert len(ids) == 2  # the priming event and "before"; then the response closed, the call waits
        worker = balancer.apps[0].fleet.backend
        await worker.stop()  # the worker dies (it no longer listens), its call with it
        balancer.turn = 1
        resume = {**legacy_headers(session), "last-event-id": ids[-1]}
        with anyio.fail_after(wire.TIMEOUT):
            resumed = await http.get("/mcp", headers=resume)
        assert resumed.status_code == 400
        assert "gone" in resumed.json()["error"]["message"]


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_every_key_in_redis_expires(redis_server: RedisServer) -> None:
    own = RedisServer()  # a server of its own: its key count is this test's alone
    own.start()
    try:
        # TTLs of seconds, not fractions: under load (CI, coverage) the count below must see the keys before they go.
        # The shortest-lived, the events and the rate bucket (its `per` and a second), last 4 s: a stall of the process
        # or a slow redis-cli start of a few seconds between the call's end and the count still sees them.
        options: dict[str, Any] = {"session_ttl": 6.0, "rate_limit": RateLimit(calls=100, per=3.0)}
        async with (
            fleet("redis", own.url, events_ttl=4.0, sse_retry=0.0, **options) as (http, _),
            Client.http(f"{BASE}/mcp", http_client=http, protocol="handshake", on_log=lambda _: None) as client,
        ):
            await client.set_logging_level("debug")  # a session's level
            assert (await client.call_tool("polled")).text == "resumed"  # a stream's events, a rate bucket
            assert int(own.command("DBSIZE")) >= 3
        # the client ended its session (DELETE): one more key, until the id would have expired
        with anyio.fail_after(wire.TIMEOUT * 3):
            while int(own.command("DBSIZE")) != 0:  # noqa: ASYNC110 - Redis expires them on its own clock
                await anyio.sleep(0.2)
    finally:
        own.stop()


async def test_a_mounted_app_runs_its_part_of_the_fleet_in_the_parents_lifespan(kind: str, redis_url: str) -> None:
    apps = [make_server().http_app(backend=backend) for backend in backends(kind, redis_url)]
    balancer = RoundRobin(apps)
    transport = StreamingASGITransport(balancer)
    async with (
        apps[0].running(),  # as a parent app's lifespan would (Starlette does not forward it to mounts)
        apps[1].running(),
        httpx.AsyncClient(transport=transport, base_url=BASE, timeout=wire.TIMEOUT) as http,
        Client.http(f"{BASE}/mcp", http_client=http, protocol="handshake", elicitation_handler=_accept) as client,
    ):
        for _ in range(2):
            with anyio.fail_after(wire.TIMEOUT):
                assert (await client.call_tool("purge")).text == "purged"


async def _accept(request: ElicitRequest) -> ElicitResult[Any]:
    return ElicitResult.accept()


async def test_malformed_messages_on_the_backend_stop_no_worker(kind: str, redis_url: str) -> None:
    async with (
        fleet(kind, redis_url) as (http, balancer),
        Client.http(f"{BASE}/mcp", http_client=http, protocol="handshake", elicitation_handler=_accept) as client,
    ):
        backend = balancer.apps[0].fleet.backend
        for junk in (b"junk", b'["cancel", ["x"], {}]', b'["cancel", "x", {"params": []}]', b"[1, 2, 3]"):
            await backend.broadcast(junk)
        for _ in range(2):  # both workers still listen: answers still cross
            with anyio.fail_after(wire.TIMEOUT):
                assert (await client.call_tool("purge")).text == "purged"


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_task_made_on_one_worker_is_polled_to_its_result_on_the_other(redis_url: str) -> None:
    def build(backend: Backend | None) -> Server:
        return tasks_server.build(secret=SECRET, backend=backend)

    envelope = wire.meta()
    envelope[wire.CAPABILITIES_KEY] = {"extensions": {"io.modelcontextprotocol/tasks": {}}}
    async with fleet("redis", redis_url, on_server=True, build=build) as (http, balancer):
        params = {"name": "slow", "arguments": {"seconds": 0}, "_meta": envelope}
        call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
        balancer.turn = 0
        _, [created] = await post(http, call, modern_headers(call))
        assert created["result"]["resultType"] == "task"
        poll = {"jsonrpc": "2.0", "id": 2, "method": "tasks/get"}
        poll["params"] = {"taskId": created["result"]["taskId"], "_meta": envelope}
        with anyio.fail_after(wire.TIMEOUT):
            while True:
                balancer.turn = 1  # always the worker that did not make it
                _, [got] = await post(http, poll, modern_headers(poll))
                assert "result" in got, got
                if got["result"]["status"] == "completed":
                    break
                await anyio.sleep(0.01)
        assert got["result"]["result"]["content"] == [{"type": "text", "text": "slept 0.0"}]


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_redis_down_answers_503_at_once_and_the_fleet_recovers_by_itself(redis_server: RedisServer) -> None:
    own = RedisServer()
    own.start()
    try:
        async with fleet("redis", own.url) as (http, _):
            session = await initialize(http)
            listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
            own.stop()
            for _ in range(2):
                with anyio.fail_after(5):
                    response, [reply] = await post(http, listing, legacy_headers(session), wire.LATEST)
                assert response.status_code == 503
                assert "Redis" in reply["error"]["message"]
            message = modern_message("tools/list")  # what needs no shared state goes on
            response, _ = await post(http, message, modern_headers(message))
            assert response.status_code == 200
            own.start()
            with anyio.fail_after(5):
                response, _ = await post(http, listing, legacy_headers(session), wire.LATEST)
            assert response.status_code == 200
    finally:
        own.stop()


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_redis_stopped_and_restarted_under_load_nothing_hangs_and_all_recover(
    redis_server: RedisServer,
) -> None:
    own = RedisServer()
    own.start()
    statuses: dict[int, int] = {}
    stopped, restarted = anyio.Event(), anyio.Event()
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "add", "arguments": {"a": 1, "b": 2}}}
    try:
        async with fleet("redis", own.url) as (http, _):

            async def user(sessions: list[str]) -> None:
                session = await initialize(http)
                sessions.append(session)
                while not restarted.is_set():
                    with anyio.fail_after(5):  # each request answers promptly, Redis up or down
                        response, _ = await post(http, call, legacy_headers(session), wire.LATEST)
                    statuses[response.status_code] = statuses.get(response.status_code, 0) + 1
                    if stopped.is_set() and response.status_code == 503:
                        await restarted.wait()
                with anyio.fail_after(5):  # after the restart, served again with nothing done by hand
                    response, [reply] = await post(http, call, legacy_headers(session), wire.LATEST)
                assert response.status_code == 200
                assert reply["result"]["content"][0]["text"] == "3"

            sessions: list[str] = []
            async with anyio.create_task_group() as tg:
                for _ in range(20):
                    tg.start_soon(user, sessions)
                with anyio.fail_after(wire.TIMEOUT):
                    while sum(statuses.values()) < 100:  # noqa: ASYNC110 - load is on
                        await anyio.sleep(0.01)
                own.stop()
                stopped.set()
                with anyio.fail_after(wire.TIMEOUT):
                    while statuses.get(503, 0) < 20:  # noqa: ASYNC110 - every user saw Redis down
                        await anyio.sleep(0.01)
                own.start()
                restarted.set()
        assert set(statuses) == {200, 503}
    finally:
        own.stop()
