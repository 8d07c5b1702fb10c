"""Client tasks (issue 24) against a tasks server written by hand from the spec's wire format (tests/tasks_peer.py),
in both eras, in memory: the test decides when a task ends, what it asks and how it fails."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
import wire
import zygote
from servers import client_tasks
from tasks_peer import EXTENSION, QUESTION, WHEN, Job, TasksPeer, command

from toolkit import (
    Client,
    ElicitRequest,
    ElicitResult,
    ProtocolError,
    ProtocolMode,
    StreamingASGITransport,
    TaskCancelledError,
    TaskInfo,
    ToolTask,
)

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["2026-07-28", "2025-11-25"])
def era(request: pytest.FixtureRequest) -> str:
    return str(request.param)


async def created(peer: TasksPeer) -> Job:
    with anyio.fail_after(10):
        await peer.created.wait()
    return next(iter(peer.jobs.values()))


# -- starting and awaiting ---------------------------------------------------------------------------------------


async def test_a_task_is_started_then_awaited_for_its_result(era: str) -> None:
    peer = TasksPeer(era)
    async with peer.client() as client:
        task = await client.start_task("slow", {"n": 1}, ttl=60)
        first = task.info
        peer.jobs[task.id or ""].finish("done")
        with anyio.fail_after(10):
            result = await task

    assert isinstance(task, ToolTask)
    assert (task.id, result.text, result.is_error, task.done) == ("task-1", "done", False, True)
    assert first == TaskInfo("task-1", "working", None, WHEN, WHEN, 60.0, 0.01)
    (call,) = peer.sent("tools/call")
    if era == "2026-07-28":  # the extension declared on the call; the server decides, so no task params
        assert call["_meta"][wire.CAPABILITIES_KEY] == {"extensions": {EXTENSION: {}}}
        assert "task" not in call
        assert peer.sent("tasks/result") == []
    else:  # asked for, with the ttl in milliseconds; the result taken with tasks/result
        assert call["task"] == {"ttl": 60000}
        assert peer.sent("tasks/result") == [{"taskId": "task-1"}]


async def test_status_polls_the_task_once_and_watch_follows_it_to_its_end(era: str) -> None:
    peer = TasksPeer(era)
    async with peer.client() as client:
        task = await client.start_task("slow")
        job = peer.jobs["task-1"]
        job.message = "step 1 of 2"
        now = await task.status()
        seen: list[tuple[str, str | None]] = []
        with anyio.fail_after(10):
            async for info in task.watch():
                seen.append((info.status, info.status_message))
                if len(seen) == 1:
                    job.message = "step 2 of 2"
                elif info.status == "working" and info.status_message == "step 2 of 2":
                    job.finish("all done")
            result = await task.result()

    assert (now.status, now.status_message) == ("working", "step 1 of 2")
    assert seen == [("working", "step 1 of 2"), ("working", "step 2 of 2"), ("completed", "step 2 of 2")]
    assert result.text == "all done"
    gets = peer.sent("tasks/get")
    assert gets[0] == {"taskId": "task-1"} if era == "2025-11-25" else gets[0]["taskId"] == "task-1"


async def test_every_2026_request_on_a_task_declares_the_extension() -> None:
    peer = TasksPeer("2026-07-28")
    async with peer.client() as client:
        task = await client.start_task("slow")
        peer.jobs["task-1"].finish("ok")
        with anyio.fail_after(10):
            await task

    for params in peer.sent("tasks/get"):
        assert params["_meta"][wire.CAPABILITIES_KEY]["extensions"] == {EXTENSION: {}}
        assert params["_meta"][wire.VERSION_KEY] == "2026-07-28"


# -- questions ---------------------------------------------------------------------------------------------------


async def asking(client: Client, peer: TasksPeer) -> tuple[ToolTask, Job]:
    """A task started, then waiting for the user's name."""
    task = await client.start_task("slow")
    job = peer.jobs["task-1"]
    job.status, job.questions = "input_required", {"name": QUESTION}
    return task, job


async def test_a_task_that_asks_is_answered_by_the_clients_elicitation_handler(era: str) -> None:
    asked: list[ElicitRequest] = []
    peer = TasksPeer(era)

    def handler(request: ElicitRequest) -> ElicitResult[Any]:
        asked.append(request)
        peer.jobs["task-1"].finish("hello Ada")  # the task goes on once answered
        return ElicitResult.accept({"name": "Ada"})

    async with peer.client(elicitation_handler=handler) as client:
        task, job = await asking(client, peer)
        with anyio.fail_after(10):
            result = await task

    assert result.text == "hello Ada"
    assert [(a.message, a.mode) for a in asked] == [("Your name?", "form")]
    assert job.answers == {"name": {"action": "accept", "content": {"name": "Ada"}}}
    if era == "2026-07-28":
        (update,) = peer.sent("tasks/update")
        assert (update["taskId"], update["inputResponses"]) == ("task-1", job.answers)
        assert asked[0].key == "name"
    else:  # asked as a server request while tasks/result waits, with the related-task _meta
        assert peer.sent("tasks/update") == []


async def test_a_question_seen_in_several_polls_is_answered_once() -> None:
    asked: list[str] = []
    peer = TasksPeer("2026-07-28")

    async def handler(request: ElicitRequest) -> ElicitResult[Any]:
        asked.append(request.message)
        return ElicitResult.accept({"name": "Ada"})

    async with peer.client(elicitation_handler=handler) as client:
        task, job = await asking(client, peer)
        with anyio.fail_after(10):
            async for info in task.watch():
                if info.status == "working" and job.answers:
                    # the server is slow to take the answer in: it still shows the question answered
                    job.status, job.questions = "input_required", {"name": QUESTION}
                    job.message = "still asking"
                elif info.status_message == "still asking":
                    job.finish("done")

    assert asked == ["Your name?"]
    assert len(peer.sent("tasks/update")) == 1


# -- ends other than a result ------------------------------------------------------------------------------------


async def test_a_cancelled_task_raises_task_cancelled_error(era: str) -> None:
    peer = TasksPeer(era)
    async with peer.client() as client:
        task = await client.start_task("slow")
        await task.cancel()
        with anyio.fail_after(10), pytest.raises(TaskCancelledError) as caught:
            await task

    assert caught.value.task_id == "task-1"
    assert [params["taskId"] for params in peer.sent("tasks/cancel")] == ["task-1"]
    assert peer.jobs["task-1"].status == "cancelled"


async def test_cancelling_an_ended_task_is_refused_in_2025_11_25_and_the_result_stays() -> None:
    peer = TasksPeer("2025-11-25")
    async with peer.client() as client:
        task = await client.start_task("slow")
        peer.jobs["task-1"].finish("first")
        with anyio.fail_after(10):
            result = await task
        with pytest.raises(ProtocolError) as caught:
            await task.cancel()

    assert (result.text, caught.value.code) == ("first", -32602)


async def test_a_task_that_fails_with_a_json_rpc_error_raises_it(era: str) -> None:
    peer = TasksPeer(era)
    async with peer.client() as client:
        task = await client.start_task("slow")
        peer.jobs["task-1"].fail(-32603, "API rate limit exceeded")
        with anyio.fail_after(10), pytest.raises(ProtocolError) as caught:
            await task

    assert (caught.value.code, caught.value.message) == (-32603, "API rate limit exceeded")


async def test_a_tool_error_is_a_result_with_is_error(era: str) -> None:
    peer = TasksPeer(era)
    async with peer.client() as client:
        task = await client.start_task("slow")
        peer.jobs["task-1"].finish("no such city", is_error=True)
        with anyio.fail_after(10):
            result = await task

    assert (result.is_error, result.text) == (True, "no such city")


async def test_an_unknown_task_is_the_servers_error(era: str) -> None:
    peer = TasksPeer(era)
    async with peer.client() as client:
        with anyio.fail_after(10), pytest.raises(ProtocolError) as caught:
            await client.task("no-such-task")

    assert caught.value.code == -32602


# -- servers that answer at once ---------------------------------------------------------------------------------


async def test_a_server_without_tasks_answers_at_once_and_the_handle_is_done(era: str) -> None:
    peer = TasksPeer(era, tasks=False)
    async with peer.client() as client:
        task = await client.start_task("slow", {"n": 2})
        with anyio.fail_after(10):
            result = await task

    assert (task.id, task.done, task.info, result.text) == (None, True, None, "at once: {'n': 2}")
    (call,) = peer.sent("tools/call")
    assert "task" not in call  # 2025-11-25: a server without tasks.requests.tools.call is not asked for one


async def test_a_tool_that_is_not_run_as_a_task_answers_at_once(era: str) -> None:
    # 2026-07-28: the server decides (this one runs echo at once); 2025-11-25: echo's taskSupport is "forbidden",
    # so the client does not ask for a task (tools/list tells it, listed once).
    peer = TasksPeer(era)
    async with peer.client() as client:
        task = await client.start_task("echo", {"x": 1})
        result = await task

    assert (task.id, result.text) == (None, "at once: {'x': 1}")
    assert [("task" in call) for call in peer.sent("tools/call")] == [False]
    methods = [m["method"] for m in peer.received if m.get("method", "").startswith("tools/")]
    assert methods[0] == ("tools/call" if era == "2026-07-28" else "tools/list")  # then the output check lists them


async def test_call_tool_runs_a_tool_the_server_runs_only_as_a_task(era: str) -> None:
    peer = TasksPeer(era)
    async with peer.client() as client, anyio.create_task_group() as tg:

        async def finish() -> None:
            (await created(peer)).finish("the report")

        tg.start_soon(finish)
        with anyio.fail_after(10):
            result = await client.call_tool("only_task", {"q": 1})

    assert result.text == "the report"
    first, second = peer.sent("tools/call")
    if era == "2026-07-28":  # a plain call first, refused with -32021; then the extension declared
        assert EXTENSION not in first["_meta"][wire.CAPABILITIES_KEY].get("extensions", {})
        assert second["_meta"][wire.CAPABILITIES_KEY]["extensions"] == {EXTENSION: {}}
    else:  # a plain call first, refused with -32601; the tools listed say taskSupport "required"; a task asked for
        assert ("task" in first, second["task"]) == (False, {})


async def test_cancelling_call_tool_of_a_tool_run_only_as_a_task_cancels_the_task(era: str) -> None:
    peer = TasksPeer(era)
    async with peer.client() as client:
        with anyio.CancelScope() as scope:
            async with anyio.create_task_group() as tg:

                async def cancel_once_followed() -> None:
                    with anyio.fail_after(10):
                        await peer.polled.wait()
                    scope.cancel()

                tg.start_soon(cancel_once_followed)
                await client.call_tool("only_task", {"q": 1})

    assert scope.cancelled_caught
    assert [params["taskId"] for params in peer.sent("tasks/cancel")] == list(peer.jobs)


async def test_a_2026_status_notification_wakes_the_wait_before_the_next_poll() -> None:
    peer = TasksPeer("2026-07-28")
    peer.poll_ms, peer.notifies = 3_600_000, True  # an hour between polls: only the notification can end the wait
    async with peer.client() as client, anyio.create_task_group() as tg:
        task = await client.start_task("slow")

        async def finish_once_listening() -> None:
            # the first poll answered (still working) and the listening opened: only the notification is left (a
            # poll only received may still be answered after the job finished: then no notification was needed)
            while not (peer.sent("subscriptions/listen") and "tasks/get" in peer.answered):
                await anyio.wait_all_tasks_blocked()
            peer.jobs["task-1"].finish("heard")

        tg.start_soon(finish_once_listening)
        with anyio.fail_after(10):
            result = await task

    (listen,) = peer.sent("subscriptions/listen")
    assert listen["notifications"] == {"taskIds": ["task-1"]}
    assert listen["_meta"][wire.CAPABILITIES_KEY]["extensions"] == {EXTENSION: {}}
    assert (result.text, len(peer.sent("tasks/get"))) == ("heard", 2)  # the first poll, and the one it woke


# -- picking a task up again -------------------------------------------------------------------------------------


async def test_a_new_client_picks_a_task_up_by_its_id(era: str) -> None:
    peer = TasksPeer(era)
    async with peer.client() as client:
        task_id = (await client.start_task("slow", {"n": 3})).id
    assert task_id is not None
    peer.jobs[task_id].finish("finished while nobody was connected")
    async with peer.client() as again:
        task = again.task(task_id)
        unseen = (task.id, task.info, task.done)
        with anyio.fail_after(10):
            state = await task.status()
            result = await task

    assert unseen == (task_id, None, False)  # nothing known before the first poll
    assert (state.status, result.text) == ("completed", "finished while nobody was connected")


async def test_a_client_picks_up_a_task_of_its_own_connection_while_it_runs(era: str) -> None:
    peer = TasksPeer(era)
    async with peer.client() as client:
        started = await client.start_task("slow")
        other = client.task(started.id or "")
        assert (await other.status()).status == "working"
        peer.jobs["task-1"].finish("one result for both")
        with anyio.fail_after(10):
            results = [(await started).text, (await other).text]

    assert results == ["one result for both", "one result for both"]


# -- over HTTP (2026-07-28) --------------------------------------------------------------------------------------


async def test_over_http_task_requests_name_the_task_in_mcp_name_and_another_client_picks_it_up() -> None:
    asked: list[str] = []
    peer = TasksPeer("2026-07-28")

    def handler(request: ElicitRequest) -> ElicitResult[Any]:
        asked.append(request.message)
        return ElicitResult.accept({"name": "Ada"})

    async with peer.http_client() as client:
        task = await client.start_task("slow", {"n": 1})
        assert (await task.status()).status == "working"
    job = peer.jobs["task-1"]
    job.status, job.questions = "input_required", {"name": QUESTION}
    async with peer.http_client(elicitation_handler=handler) as other:
        again = other.task("task-1")
        with anyio.fail_after(10):
            async for info in again.watch():
                if info.status == "working" and job.answers:
                    job.finish("finished for another client")
            result = await again

    assert (result.text, asked) == ("finished for another client", ["Your name?"])
    for method in ("tasks/get", "tasks/update"):
        for headers in peer.headers[method]:
            assert (headers["mcp-method"], headers["mcp-name"]) == (method, "task-1")
            assert headers["mcp-protocol-version"] == "2026-07-28"
    assert peer.headers["tools/call"][0]["mcp-name"] == "slow"


async def test_over_http_a_cancel_names_the_task_too() -> None:
    peer = TasksPeer("2026-07-28")
    async with peer.http_client() as client:
        task = await client.start_task("slow")
        await task.cancel()
        with anyio.fail_after(10), pytest.raises(TaskCancelledError):
            await task

    (headers,) = peer.headers["tasks/cancel"]
    assert (headers["mcp-method"], headers["mcp-name"]) == ("tasks/cancel", "task-1")


# -- over stdio, the peer's tasks moving on by themselves --------------------------------------------------------


async def test_over_stdio_a_task_is_followed_to_its_result_and_its_question_answered(era: str) -> None:
    protocol: ProtocolMode = "2026-07-28" if era == "2026-07-28" else "handshake"

    def handler(request: ElicitRequest) -> ElicitResult[Any]:
        return ElicitResult.accept({"name": "Grace"})

    async with Client.stdio(command(), protocol=protocol, elicitation_handler=handler) as client:
        with anyio.fail_after(30):
            slow = await client.start_task("slow", {"n": 5})
            states = [(info.status, info.status_message) async for info in slow.watch()]
            result = await slow
            greeting = await (await client.start_task("ask")).result()

    assert states == [("working", "step 1 of 2"), ("working", "step 2 of 2"), ("completed", "step 2 of 2")]
    assert (result.text, greeting.text) == ('slow done: {"n": 5}', "hello Grace")


# -- against a toolkit server (@tool(task=...)): memory, stdio and HTTP, both eras -------------------------------

SERVER = Path(client_tasks.__file__)


@asynccontextmanager
async def toolkit_client(where: str, era: str, backend: str, **options: Any) -> AsyncIterator[Client]:
    protocol: ProtocolMode = "2026-07-28" if era == "2026-07-28" else "handshake"
    if where == "memory":
        async with Client(client_tasks.build(), protocol=protocol, **options) as client:
            yield client
    elif where == "stdio":
        async with zygote.client([sys.executable, str(SERVER)], protocol=protocol, **options) as client:
            yield client
    else:
        server = client_tasks.build()
        # Running around the app, as an ASGI server's lifespan does: the tasks outlive each request.
        async with (
            server.running(),
            httpx.AsyncClient(transport=StreamingASGITransport(server.http_app()), base_url="http://127.0.0.1") as http,
            Client.http("http://127.0.0.1/mcp", http_client=http, protocol=protocol, **options) as client,
        ):
            yield client


@pytest.mark.parametrize("where", ["memory", "stdio", "http"])
async def test_a_toolkit_task_tool_is_started_followed_and_awaited(where: str, era: str, anyio_backend: str) -> None:
    async with toolkit_client(where, era, anyio_backend) as client:
        with anyio.fail_after(30):
            task = await client.start_task("count", {"n": 3})
            states = [info.status async for info in task.watch()]
            result = await task
            plain = await client.start_task("fails")
            failed = await plain

    assert task.id is not None
    assert states[-1] == "completed"
    assert set(states) <= {"working", "completed"}
    assert result.text == "counted to 3"
    assert (failed.is_error, failed.text) == (True, "it failed")


@pytest.mark.parametrize("where", ["memory", "http"])
async def test_a_toolkit_task_is_cancelled(where: str, era: str, anyio_backend: str) -> None:
    async with toolkit_client(where, era, anyio_backend) as client:
        with anyio.fail_after(30):
            task = await client.start_task("forever")
            await task.cancel()
            with pytest.raises(TaskCancelledError):
                await task


@pytest.mark.parametrize("where", ["memory", "http"])
async def test_call_tool_waits_for_a_tool_the_toolkit_server_runs_only_as_a_task(
    where: str, era: str, anyio_backend: str
) -> None:
    async with toolkit_client(where, era, anyio_backend) as client:
        with anyio.fail_after(30):
            result = await client.call_tool("report", {"weeks": 4})

    assert result.text == "report of 4 weeks"


@pytest.mark.parametrize("where", ["memory", "stdio", "http"])
async def test_a_toolkit_tasks_question_is_answered_by_the_elicitation_handler(
    where: str, era: str, anyio_backend: str
) -> None:
    # 2026-07-28: inputRequests in tasks/get, answered with tasks/update; 2025-11-25: asked on tasks/result.
    asked: list[str] = []

    def handler(request: ElicitRequest) -> ElicitResult[Any]:
        asked.append(request.message)
        return ElicitResult.accept({})

    async with toolkit_client(where, era, anyio_backend, elicitation_handler=handler) as client:
        with anyio.fail_after(30):
            result = await (await client.start_task("rebuild", {"name": "search"})).result()

    assert (result.text, asked) == ("rebuilt search", ["Rebuild search?"])


async def picked_up(era: str, other: Client, task_id: str) -> str:
    """What a client that did not make the task gets for it: 2026-07-28, the task (its id is the capability);
    2025-11-25, an unknown task (an anonymous task belongs to its session)."""
    with anyio.fail_after(30):
        if era == "2026-07-28":
            return (await other.task(task_id)).text
        with pytest.raises(ProtocolError) as refused:
            await other.task(task_id)
        return f"refused {refused.value.code}"


async def test_a_2026_task_is_picked_up_by_id_from_a_new_connection_a_2025_one_is_its_session_s(era: str) -> None:
    server = client_tasks.build()
    protocol: ProtocolMode = "2026-07-28" if era == "2026-07-28" else "handshake"
    client_tasks.GATE.clear()
    try:
        async with server.running():  # the server runs on (as one serving many connections does) between them
            async with Client(server, protocol=protocol) as client:
                task_id = (await client.start_task("gate")).id
            assert task_id is not None
            client_tasks.GATE.set()
            async with Client(server, protocol=protocol) as again:
                seen = await picked_up(era, again, task_id)
    finally:
        client_tasks.GATE.set()

    assert seen == ("opened" if era == "2026-07-28" else "refused -32602")


async def test_over_http_another_client_picks_a_2026_task_up_by_id_not_a_2025_session_s(era: str) -> None:
    server = client_tasks.build()
    app = server.http_app()
    protocol: ProtocolMode = "2026-07-28" if era == "2026-07-28" else "handshake"

    @asynccontextmanager
    async def connected() -> AsyncIterator[Client]:
        """A new Client with its own HTTP client: a new session (2025-11-25), nothing shared but the server."""
        async with (
            httpx.AsyncClient(transport=StreamingASGITransport(app), base_url="http://127.0.0.1") as http,
            Client.http("http://127.0.0.1/mcp", http_client=http, protocol=protocol) as client,
        ):
            yield client

    client_tasks.GATE.clear()
    try:
        async with server.running():  # as an ASGI server's lifespan: the server runs on between the clients
            async with connected() as client:
                task_id = (await client.start_task("gate")).id
                assert (await client.task(task_id or "").status()).status == "working"
            client_tasks.GATE.set()
            async with connected() as other:
                seen = await picked_up(era, other, task_id or "")
    finally:
        client_tasks.GATE.set()

    assert seen == ("opened" if era == "2026-07-28" else "refused -32602")
