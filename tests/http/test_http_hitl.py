"""Questions to the client over Streamable HTTP (2025-11-25 sessions): the server's request goes out on the call's
SSE stream, and the client's answer comes back in a POST of its own, which must reach the call that asked.

The tool bodies are those of tests/servers/hitl_server.py, which tests/asking/test_hitl.py also runs over HTTP; here are
the cases only HTTP has: several calls of one session asking at once, answers from the wrong session or for no
request, and an answer that reached a process that did not ask. Every server message is validated against the
schema. Each test runs on asyncio and trio.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing, asynccontextmanager
from typing import Any, cast

import anyio
import httpx
import pytest
import servers
import wire
from pydantic import BaseModel
from test_session_store import DictStore

from toolkit import (
    Client,
    Context,
    ElicitRequest,
    ElicitResult,
    ProtocolError,
    Server,
    StreamingASGITransport,
    TextContent,
    tool,
)

pytestmark = pytest.mark.anyio

build_server = servers.hitl  # tests/servers/hitl_server.py, fresh

BASE = "http://127.0.0.1:8000"
URL = f"{BASE}/mcp"
ACCEPT = "application/json, text/event-stream"
CAPABILITIES: dict[str, Any] = {"elicitation": {"form": {}}, "sampling": {}}


@asynccontextmanager
async def http_client() -> AsyncIterator[httpx.AsyncClient]:
    app = build_server().http_app()
    async with httpx.AsyncClient(transport=StreamingASGITransport(app), base_url="http://127.0.0.1:8000") as client:
        yield client


async def test_calls_of_one_session_asking_at_once_each_get_their_own_answer() -> None:
    asked: list[str] = []
    everyone_asked = anyio.Event()
    count = 5

    async def answer(request: ElicitRequest) -> ElicitResult[Any]:
        asked.append(request.message)
        if len(asked) == count:
            everyone_asked.set()
        await everyone_asked.wait()  # all five questions are pending at once before any is answered
        return ElicitResult.accept({"username": request.message, "email": f"{request.message}@example.com"})

    results: dict[int, str] = {}
    async with (
        http_client() as http,
        Client.http(URL, http_client=http, protocol="handshake", elicitation_handler=answer) as client,
    ):

        async def call(i: int) -> None:
            results[i] = (await client.call_tool("test_elicitation", {"message": f"user{i}"})).text

        with anyio.fail_after(wire.TIMEOUT):
            async with anyio.create_task_group() as tg:
                for i in range(count):
                    tg.start_soon(call, i)
    assert sorted(asked) == [f"user{i}" for i in range(count)]
    assert results == {
        i: f"User response: accept, {{'username': 'user{i}', 'email': 'user{i}@example.com'}}" for i in range(count)
    }


async def initialize(client: httpx.AsyncClient, capabilities: dict[str, Any] = CAPABILITIES) -> str:
    message = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {"protocolVersion": wire.LATEST, "capabilities": capabilities, "clientInfo": {"name": "t"}},
    }
    headers = {"accept": ACCEPT, "content-type": "application/json"}
    response = await client.post("/mcp", content=json.dumps(message), headers=headers)
    assert response.status_code == 200
    wire.check_server_message(response.json(), wire.LATEST, "initialize")
    session: str = response.headers["mcp-session-id"]
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    done = await client.post("/mcp", content=json.dumps(initialized), headers=session_headers(session))
    assert done.status_code == 202
    return session


def session_headers(session: str) -> dict[str, str]:
    return {
        "accept": ACCEPT,
        "content-type": "application/json",
        "mcp-session-id": session,
        "mcp-protocol-version": wire.LATEST,
    }


@asynccontextmanager
async def streamed(
    client: httpx.AsyncClient, session: str, call: dict[str, Any]
) -> AsyncIterator[AsyncIterator[dict[str, Any]]]:
    """POST `call` in `session`: the messages of its SSE stream, each validated against the schema, up to and
    including the call's answer."""
    headers = session_headers(session)
    async with (
        client.stream("POST", "/mcp", content=json.dumps(call), headers=headers) as stream,
        aclosing(cast(AsyncGenerator[str, None], stream.aiter_lines())) as lines,
    ):
        assert stream.headers["content-type"] == "text/event-stream"
        yield _messages(lines)


async def _messages(lines: AsyncIterator[str]) -> AsyncIterator[dict[str, Any]]:
    async for line in lines:
        if not line.startswith("data: "):
            continue
        message = json.loads(line[6:])
        wire.check_server_message(message, wire.LATEST, None if "method" in message else "tools/call")
        yield message
        if "result" in message:
            return


async def answer(client: httpx.AsyncClient, session: str, ask_id: Any, name: str) -> None:
    result = {"action": "accept", "content": {"username": name, "email": f"{name}@example.com"}}
    message = {"jsonrpc": "2.0", "id": ask_id, "result": result}
    response = await client.post("/mcp", content=json.dumps(message), headers=session_headers(session))
    assert (response.status_code, response.content) == (202, b"")  # accepted, whoever it reaches


async def test_an_answer_reaches_the_call_only_from_its_own_session_and_for_its_own_request(
    caplog: pytest.LogCaptureFixture,
) -> None:
    params = {"name": "test_elicitation", "arguments": {"message": "Who?"}}
    call = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params}
    caplog.set_level(logging.DEBUG, "toolkit.http")
    async with http_client() as client:
        mine, other = await initialize(client), await initialize(client)
        messages: list[dict[str, Any]] = []
        with anyio.fail_after(wire.TIMEOUT):
            async with streamed(client, mine, call) as stream:
                async for message in stream:
                    messages.append(message)
                    if len(messages) == 1:
                        ask = message
                        assert ask["method"] == "elicitation/create"
                        assert ask["params"]["message"] == "Who?"
                        await answer(client, other, ask["id"], "intruder")  # another session: not delivered
                        await answer(client, mine, "no-such-request", "nobody")  # no such request
                        await answer(client, mine, ask["id"] + "0", "nobody")  # a near miss
                        await answer(client, mine, ask["id"], "me")
    assert [m.get("method") for m in messages] == ["elicitation/create", None]
    assert messages[1]["id"] == 7
    assert messages[1]["result"]["content"][0]["text"] == (
        "User response: accept, {'username': 'me', 'email': 'me@example.com'}"
    )
    assert "skipped an answer to no request in flight: id 'no-such-request'" in caplog.text


async def test_an_answer_that_reached_another_process_is_refused_saying_how_to_route_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """transports: input the server cannot accept gets an HTTP error (400), with a JSON-RPC error and no id."""
    result = {"action": "accept", "content": {}}
    message = {"jsonrpc": "2.0", "id": "0badf00d-1", "result": result}  # the tag of another worker's requests
    async with http_client() as client:
        session = await initialize(client)
        response = await client.post("/mcp", content=json.dumps(message), headers=session_headers(session))
        assert response.status_code == 400
        assert response.json() == wire.error(None, -32603)
        for part in ("Mcp-Session-Id", "2026-07-28", "docs/deploy.md"):
            assert part in response.json()["error"]["message"]
        message["id"] = "0badf00d-x"  # not a request of ours: accepted and skipped, as JSON-RPC lets it be
        response = await client.post("/mcp", content=json.dumps(message), headers=session_headers(session))
        assert response.status_code == 202
    [warning] = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert "reached a process that did not make it" in warning.getMessage()
    assert "docs/deploy.md" in warning.getMessage()


class RoundRobin(httpx.AsyncBaseTransport):
    """Each request to the next of several apps: workers behind a load balancer with no stickiness at all."""

    def __init__(self, *apps: Any) -> None:
        self.transports = [StreamingASGITransport(app) for app in apps]
        self.sent = 0

    async def __aenter__(self) -> RoundRobin:
        for transport in self.transports:
            await transport.__aenter__()
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        for transport in reversed(self.transports):
            await transport.__aexit__(*exc_info)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        transport = self.transports[self.sent % len(self.transports)]
        self.sent += 1
        return await transport.handle_async_request(request)


SECRET = "one secret that all the workers share, 32+ bytes"


class AnswersElsewhere(RoundRobin):
    """Two workers: the client's answers to the server's requests go to the second, everything else to the first."""

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        await request.aread()
        message = json.loads(request.content) if request.content else {}
        answer = isinstance(message, dict) and "method" not in message and "id" in message
        return await self.transports[1 if answer else 0].handle_async_request(request)


async def test_a_client_whose_answer_reached_the_other_worker_fails_the_call_at_once() -> None:
    """Toolkit's client, told that its answer went to a worker that did not ask, fails the call that asked instead
    of waiting for a result that cannot come (tests/http/test_http_workers_asking.py: on real workers)."""

    async def accept(request: ElicitRequest) -> ElicitResult[Any]:
        return ElicitResult.accept({"username": "u", "email": "u@example.com"})

    balancer = AnswersElsewhere(build_server().http_app(secret=SECRET), build_server().http_app(secret=SECRET))
    async with (
        httpx.AsyncClient(transport=balancer, base_url="http://127.0.0.1:8000") as http,
        Client.http(URL, http_client=http, protocol="handshake", elicitation_handler=accept) as client,
    ):
        with anyio.fail_after(wire.TIMEOUT), pytest.raises(ProtocolError) as caught:
            await client.call_tool("test_elicitation", {"message": "Who?"})
    assert caught.value.code == -32603
    assert "the server refused the answer to its question (HTTP 400 Bad Request)" in caught.value.message
    assert "Mcp-Session-Id" in caught.value.message


async def test_the_call_whose_answer_reached_another_worker_ends_with_an_error_saying_how_to_route() -> None:
    """The asking worker learns it from the shared store: its question gets an error answer, and the call ends at
    once (what clients that ignore the refusal, as the official SDK's does, see)."""
    store = DictStore()  # shared by both apps, as workers share `SqliteSessionStore`
    asking, other = (build_server().http_app(secret=SECRET, session_store=store) for _ in "ab")
    params = {"name": "test_elicitation", "arguments": {"message": "Who?"}}
    call = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params}
    async with (
        httpx.AsyncClient(transport=StreamingASGITransport(asking), base_url="http://127.0.0.1:8000") as first,
        httpx.AsyncClient(transport=StreamingASGITransport(other), base_url="http://127.0.0.1:8000") as second,
    ):
        session = await initialize(first)
        messages: list[dict[str, Any]] = []
        with anyio.fail_after(wire.TIMEOUT):
            async with streamed(first, session, call) as stream:
                async for message in stream:
                    messages.append(message)
                    if message.get("method") == "elicitation/create":
                        result = {"action": "accept", "content": {"username": "u", "email": "u@example.com"}}
                        answer = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result})
                        refused = await second.post("/mcp", content=answer, headers=session_headers(session))
                        assert refused.status_code == 400
    assert [m.get("method") for m in messages] == ["elicitation/create", None]
    outcome = messages[1]["result"]
    assert outcome["isError"] is True
    for part in ("another process of this server", "Mcp-Session-Id", "2026-07-28", "docs/deploy.md"):
        assert part in outcome["content"][0]["text"]
    assert [key.split("/")[1] for key in store.ended] == [messages[0]["id"]]  # the session's nonce, then the id


class WatchedStore(DictStore):
    """A shared store that tells when a waiting question looked in it for an answer gone elsewhere."""

    def __init__(self) -> None:
        super().__init__()
        self.looked = anyio.Event()

    def is_ended(self, key: str) -> bool:
        if "/" in key:  # a question's id, not a session's nonce
            self.looked.set()
        return super().is_ended(key)


async def answered_once_looked(store: WatchedStore, *messages: str) -> list[str]:
    """Call `test_elicitation` with each message over a session kept in `store`, answering each question only once
    the waiting call has looked in the store for an answer gone elsewhere: the calls' texts."""

    async def answer(request: ElicitRequest) -> ElicitResult[Any]:
        await store.looked.wait()
        return ElicitResult.accept({"username": "late", "email": "late@example.com"})

    app = build_server().http_app(secret=SECRET, session_store=store)
    async with (
        httpx.AsyncClient(transport=StreamingASGITransport(app), base_url="http://127.0.0.1:8000") as http,
        Client.http(URL, http_client=http, protocol="handshake", elicitation_handler=answer) as client,
    ):
        with anyio.fail_after(wire.TIMEOUT):
            return [(await client.call_tool("test_elicitation", {"message": m})).text for m in messages]


LATE = "User response: accept, {'username': 'late', 'email': 'late@example.com'}"


async def test_with_a_shared_store_a_question_that_waits_is_answered_as_usual() -> None:
    store = WatchedStore()
    texts = await answered_once_looked(store, "Who?", "Who else?")  # the second asks again: it looks again
    assert texts == [LATE, LATE]
    assert [key for key in store.ended if "/" in key] == []  # no answer went elsewhere (the session was DELETEd)


class DownStore(WatchedStore):
    """A shared store that fails every look-up of a question (Redis down, SQLite locked past its timeout)."""

    def is_ended(self, key: str) -> bool:
        if "/" in key:
            self.looked.set()
            raise ConnectionError("the store is down")
        return super().is_ended(key)


async def test_a_store_that_fails_while_a_question_waits_ends_no_call(caplog: pytest.LogCaptureFixture) -> None:
    store = DownStore()
    assert await answered_once_looked(store, "Who?") == [LATE]  # answered once the call failed to look
    assert "could not look up a question in the session store" in caplog.text


@pytest.mark.parametrize("where", ["http_app", "Server"])
async def test_one_secret_lets_any_worker_serve_every_round_of_a_2026_question(where: str) -> None:
    """`http_app(secret=)` alone, or `Server(secret=)` alone, signs both the session ids and the requestState."""

    def worker() -> Any:
        if where == "http_app":
            return build_server().http_app(secret=SECRET)
        server = build_server()
        return Server(server.name, tools=server.tools.values(), secret=SECRET).http_app()

    async def answer(request: ElicitRequest) -> ElicitResult[Any]:
        return ElicitResult.accept({"name": "Ada"} if "name" in request.message else {"color": "blue"})

    balancer = RoundRobin(worker(), worker())
    async with httpx.AsyncClient(transport=balancer, base_url="http://127.0.0.1:8000") as http:
        async with Client.http(URL, http_client=http, elicitation_handler=answer) as client:
            with anyio.fail_after(wire.TIMEOUT):
                results = [(await client.call_tool("test_input_required_result_multi_round")).text for _ in "abc"]
        assert results == ["Ada likes blue"] * 3
        sent = balancer.sent
        async with Client.http(URL, http_client=http, protocol="handshake") as client:  # a session, on both workers
            with anyio.fail_after(wire.TIMEOUT):
                listed = [len(await client.list_tools()) for _ in "abc"]
        assert listed == [len(build_server().tools)] * 3
    assert sent >= 9  # three rounds per call


async def test_a_request_state_from_a_process_with_another_key_says_how_to_fix_it() -> None:
    async def answer(request: ElicitRequest) -> ElicitResult[Any]:
        return ElicitResult.accept({"name": "Ada"} if "name" in request.message else {"color": "blue"})

    balancer = RoundRobin(build_server().http_app(), build_server().http_app())  # each worker its own random key
    async with (
        httpx.AsyncClient(transport=balancer, base_url="http://127.0.0.1:8000") as http,
        Client.http(URL, http_client=http, elicitation_handler=answer) as client,
    ):
        with anyio.fail_after(wire.TIMEOUT), pytest.raises(ProtocolError) as caught:
            await client.call_tool("test_input_required_result_multi_round")
    assert caught.value.code == -32602
    assert "signed with another key" in str(caught.value)
    assert "Server(secret=...)" in str(caught.value)


async def test_questions_asked_together_go_out_on_the_calls_stream_at_once() -> None:
    """Issue 21 §3: a form, a completion and the roots, sent before any is answered; answered last to first."""
    call = {
        "jsonrpc": "2.0",
        "id": 9,
        "method": "tools/call",
        "params": {"name": "test_input_required_result_multiple_inputs"},
    }
    answers = {
        "roots/list": {"roots": [{"uri": "file:///srv/app"}]},
        "sampling/createMessage": {"role": "assistant", "content": {"type": "text", "text": "Hi"}, "model": "m"},
        "elicitation/create": {"action": "accept", "content": {"name": "Ada"}},
    }
    messages: list[dict[str, Any]] = []
    async with http_client() as client:
        session = await initialize(client, {**CAPABILITIES, "roots": {}})
        with anyio.fail_after(wire.TIMEOUT):
            async with streamed(client, session, call) as stream:
                async for message in stream:
                    messages.append(message)
                    if len(messages) == 3:
                        for ask in sorted(messages, key=lambda m: list(answers).index(m["method"])):
                            reply = {"jsonrpc": "2.0", "id": ask["id"], "result": answers[ask["method"]]}
                            posted = await client.post(
                                "/mcp", content=json.dumps(reply), headers=session_headers(session)
                            )
                            assert posted.status_code == 202
    assert sorted(m.get("method") or "" for m in messages) == [
        "",
        "elicitation/create",
        "roots/list",
        "sampling/createMessage",
    ]
    assert messages[-1]["result"]["content"][0]["text"] == "Hi, Ada; roots: file:///srv/app"


# -- a Context tool that only notifies, served in its request's task (no connection of its own) ----------------


class Name(BaseModel):
    name: str


async def _ask_through(ctx: Context) -> str:
    answer = await ctx.elicit("your name?", Name)
    return answer.data.name if answer.data is not None else "?"


async def passes_its_context_on(ctx: Context) -> str:
    """Hand the Context to a helper that asks."""
    return await _ask_through(ctx)


async def notifies(ctx: Context) -> str:
    """Report progress and log, and say who asked."""
    await ctx.report_progress(1, total=2)
    await ctx.info("half way")
    await ctx.report_progress(2, total=2)
    return ctx.client_info.name if ctx.client_info is not None else "?"


def test_which_tools_only_notify_is_read_from_their_source() -> None:
    assert tool(notifies).only_notifies
    assert not tool(passes_its_context_on).only_notifies  # what receives the Context might ask
    assert not tool(confirm="Sure?")(notifies).only_notifies  # confirming asks


async def test_a_session_call_that_only_notifies_gets_its_notifications_and_knows_its_client() -> None:
    server = Server("tell", tools=[tool(notifies)])
    progress: list[float] = []
    logs: list[Any] = []
    async with (
        httpx.AsyncClient(
            transport=StreamingASGITransport(server.http_app()), base_url="http://127.0.0.1:8000"
        ) as http,
        Client.http(URL, http_client=http, protocol="handshake", on_log=logs.append) as client,
    ):
        await client.set_logging_level("info")
        result = await client.call_tool("notifies", {}, progress=lambda done, total, message: progress.append(done))
    # the session's clientInfo, as a connection of its own knew it
    assert result.content == [TextContent(text="toolkit")]
    assert progress == [1, 2]
    assert len(logs) == 1


async def test_a_tool_that_hands_its_context_on_still_has_its_question_answered_over_a_session() -> None:
    server = Server("ask", tools=[tool(passes_its_context_on)])

    async def answer(request: ElicitRequest) -> ElicitResult[Any]:
        return ElicitResult.accept({"name": "ada"})

    async with (
        httpx.AsyncClient(
            transport=StreamingASGITransport(server.http_app()), base_url="http://127.0.0.1:8000"
        ) as http,
        Client.http(URL, http_client=http, protocol="handshake", elicitation_handler=answer) as client,
    ):
        result = await client.call_tool("passes_its_context_on", {})
    assert result.content == [TextContent(text="ada")]
