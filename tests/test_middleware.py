"""Middleware (docs/middleware.md): around requests, around a tool's calls, around the questions a tool asks; the
tool filter and its hidden tools; the timeout, the result size limit and the audit log built on it.

Memory and stdio through the raw wire peer, HTTP through the in-process app and a real uvicorn: every message the
server sends is validated against the schema of its revision. Each test runs on asyncio and trio.
"""

from __future__ import annotations

import dataclasses
import logging
import sys
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import pytest
import servers
import wire
from pydantic import BaseModel
from served import Served

from toolkit import (
    AskNext,
    AuditLog,
    CallNext,
    Client,
    ClientRequestError,
    Context,
    ElicitationHandler,
    ElicitRequest,
    ElicitResult,
    Identity,
    ProtocolError,
    ProtocolMode,
    Question,
    Request,
    Server,
    StaticTokenVerifier,
    StreamingASGITransport,
    ToolDefinition,
    ToolDefinitionError,
    ToolError,
    tool,
)
from toolkit.testing import ToolTester

pytestmark = pytest.mark.anyio

ERAS = ("handshake", "modern")


async def call(peer: wire.Peer, era: str, name: str, arguments: dict[str, Any] | None = None) -> Any:
    """A `tools/call` in `era` (the peer initialized first for the handshake era): the whole response."""
    params: dict[str, Any] = {"name": name, "arguments": arguments or {}}
    if era == "modern":
        params["_meta"] = wire.meta()
    return await peer.request("tools/call", params)


async def list_names(peer: wire.Peer, era: str) -> list[str]:
    params = {"_meta": wire.meta()} if era == "modern" else {}
    result = await peer.result("tools/list", params)
    return [definition["name"] for definition in result["tools"]]


def app_server() -> Any:
    return servers.load(servers.MIDDLEWARE)


@asynccontextmanager
async def http_client(server: Server, protocol: ProtocolMode, elicit: ElicitationHandler) -> AsyncIterator[Client]:
    """toolkit's Client over the server's HTTP app in process (its lifespan running), answering questions with
    `elicit`."""
    transport = StreamingASGITransport(server.http_app())
    async with (
        server.running(),
        httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8000") as http,
        Client.http(
            "http://127.0.0.1:8000/mcp", http_client=http, protocol=protocol, elicitation_handler=elicit
        ) as client,
    ):
        yield client


def text(reply: dict[str, Any]) -> str:
    content: str = reply["result"]["content"][0]["text"]
    return content


# -- around requests and calls -----------------------------------------------------------------------------


@pytest.mark.parametrize("era", ERAS)
async def test_server_middleware_sees_every_request_and_tool_middleware_changes_arguments(era: str) -> None:
    module = app_server()
    async with wire.memory(module.build()) as peer:
        if era == "handshake":
            await peer.initialize()
        assert await list_names(peer, era) == ["add", "big", "ask"]
        reply = await call(peer, era, "add", {"a": 1, "b": 2})
        assert text(reply) == "4"  # a doubled by the tool's middleware
        assert reply["result"].get("isError") is not True
    expected = ["initialize", "tools/list", "tools/call"] if era == "handshake" else ["tools/list", "tools/call"]
    assert module.seen == expected


@pytest.mark.parametrize("era", ERAS)
async def test_a_hidden_tool_is_refused_exactly_as_an_unknown_one_with_no_hint_naming_it(era: str) -> None:
    async with wire.memory(app_server().build()) as peer:
        if era == "handshake":
            await peer.initialize()
        hidden = await call(peer, era, "secret")
        unknown = await call(peer, era, "nothing")
        near = await call(peer, era, "secre")  # one letter from the hidden tool: no "did you mean"
    assert hidden["error"] == {"code": -32602, "message": "Unknown tool: secret"}
    assert unknown["error"] == {"code": -32602, "message": "Unknown tool: nothing"}
    assert near["error"] == {"code": -32602, "message": "Unknown tool: secre"}


async def test_the_filter_is_per_request_and_a_visible_near_name_is_still_suggested() -> None:
    allowed: set[str] = {"alpha"}
    server = Server("f", tool_filter=lambda definition, request: definition.name in allowed)

    @server.tool
    def alpha() -> str:
        return "a"

    @server.tool
    def alpine() -> str:
        return "b"

    async with wire.memory(server) as peer:
        assert await list_names(peer, "modern") == ["alpha"]
        allowed.add("alpine")
        assert await list_names(peer, "modern") == ["alpha", "alpine"]
        assert text(await call(peer, "modern", "alpine")) == "b"
        reply = await call(peer, "modern", "alphaa")
    assert reply["error"]["message"] == "Unknown tool: alphaa; did you mean 'alpha'?"


@pytest.mark.parametrize("era", ERAS)
async def test_middleware_short_circuits_refuses_and_wraps_in_the_documented_order(era: str) -> None:
    order: list[str] = []

    def named(name: str) -> Any:
        async def hook(request: Request, call_next: CallNext) -> dict[str, Any]:
            order.append(f"{name} in")
            result = await call_next(request)
            order.append(f"{name} out")
            return result

        return hook

    async def guard(request: Request, call_next: CallNext) -> dict[str, Any]:
        arguments = request.arguments or {}
        if arguments.get("a") == 13:
            raise ToolError("13 is unlucky")
        if arguments.get("a") == -1:
            raise ProtocolError(-32602, "Invalid params: a must not be -1")
        if arguments.get("a") == 0:
            return {"content": [{"type": "text", "text": "cached"}]}
        result = await call_next(request)
        return {**result, "content": [*result["content"], {"type": "text", "text": "wrapped"}]}

    @tool(middleware=[named("tool"), guard])
    async def add(a: int, b: int) -> int:
        order.append("add")
        return a + b

    server = Server("o", tools=[add], middleware=[named("server")], tool_middleware=[named("calls")])
    async with wire.memory(server) as peer:
        if era == "handshake":
            await peer.initialize()
        order.clear()
        ok = await call(peer, era, "add", {"a": 1, "b": 2})
        assert order == ["server in", "calls in", "tool in", "add", "tool out", "calls out", "server out"]
        refused = await call(peer, era, "add", {"a": 13, "b": 0})
        invalid = await call(peer, era, "add", {"a": -1, "b": 0})
        cached = await call(peer, era, "add", {"a": 0, "b": 0})
    assert [block["text"] for block in ok["result"]["content"]] == ["3", "wrapped"]
    assert refused["result"]["isError"] is True
    assert refused["result"]["content"] == [{"type": "text", "text": "13 is unlucky"}]
    assert invalid["error"]["code"] == -32602
    assert text(cached) == "cached"


@pytest.mark.parametrize("era", ERAS)
async def test_tool_middleware_reaches_the_context_of_a_tool_that_takes_one(era: str) -> None:
    async def progress_first(request: Request, call_next: CallNext) -> dict[str, Any]:
        assert request.context is not None
        await request.context.report_progress(0, total=1)
        return await call_next(request)

    @tool(middleware=[progress_first])
    async def step(ctx: Context) -> str:
        await ctx.report_progress(1, total=1)
        return "done"

    async with wire.memory(Server("c", tools=[step])) as peer:
        if era == "handshake":
            await peer.initialize()
        meta = wire.meta(progress="p") if era == "modern" else {"progressToken": "p"}
        await peer.send({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "step", "_meta": meta}})
        messages = await peer.receive_many(3)
    assert [message.get("params", {}).get("progress") for message in messages[:2]] == [0, 1]
    assert messages[2]["result"]["content"][0]["text"] == "done"


# -- around questions, and 2026-07-28 rounds ---------------------------------------------------------------


@pytest.mark.parametrize("era", ERAS)
async def test_question_middleware_sees_a_confirmation_and_its_answer(era: str) -> None:
    module = app_server()
    protocol: ProtocolMode = "handshake" if era == "handshake" else "2026-07-28"

    async def accept(request: ElicitRequest) -> ElicitResult[Any]:
        return ElicitResult.accept({})

    with anyio.fail_after(wire.TIMEOUT):
        async with Client(module.build(), protocol=protocol, elicitation_handler=accept) as client:
            result = await client.call_tool("ask", {})
    assert result.content[0].text == "asked 1"  # type: ignore[union-attr]
    calls = [method for method in module.seen if method == "tools/call"]
    # 2026-07-28: round 1 ends with the question (the middleware sees no answer), round 2 replays it answered.
    assert module.asked == ["elicitation/create ask: accept"]
    assert calls == (["tools/call"] if era == "handshake" else ["tools/call", "tools/call"])  # once per round


async def test_question_middleware_in_2026_07_28_sees_the_round_end_unanswered() -> None:
    ends: list[str] = []

    async def watch(question: Any, call_next: Any) -> dict[str, Any]:
        try:
            answer: dict[str, Any] = await call_next(question)
        except Exception:
            ends.append("failed")
            raise
        except BaseException:  # the round ends with this question: not an error, let it through
            ends.append("round ended")
            raise
        ends.append("answered")
        return answer

    @tool(confirm=True, read_only=True)
    def go() -> str:
        return "went"

    async with wire.memory(Server("q", tools=[go], question_middleware=[watch])) as peer:
        caps: dict[str, Any] = {wire.CAPABILITIES_KEY: {"elicitation": {}}}
        first = await peer.request("tools/call", {"name": "go", "_meta": wire.meta(**caps)})
        assert first["result"]["resultType"] == "input_required"
        retry = {
            "name": "go",
            "_meta": wire.meta(**caps),
            "requestState": first["result"]["requestState"],
            "inputResponses": {"confirm": {"action": "accept", "content": {}}},
        }
        second = await peer.request("tools/call", retry)
    assert text(second) == "went"
    assert ends == ["round ended", "answered"]


@pytest.mark.parametrize("protocol", ["handshake", "2026-07-28"])
async def test_question_middleware_runs_for_a_sync_tool_asking_from_its_worker_thread(protocol: ProtocolMode) -> None:
    seen: list[tuple[str, str, str]] = []

    async def record(question: Question, call_next: AskNext) -> dict[str, Any]:
        answer = await call_next(question)
        seen.append((question.method, question.tool, answer["content"]["name"]))
        return {**answer, "content": {"name": answer["content"]["name"].upper()}}  # and change what the tool reads

    class Name(BaseModel):
        name: str

    @tool
    def greet(ctx: Context) -> str:
        answer = ctx.elicit("Your name?", Name)
        assert answer.data is not None
        return f"hello {answer.data.name}"

    async def reply(request: ElicitRequest) -> ElicitResult[Any]:
        return ElicitResult.accept({"name": "ada"})

    server = Server("q", tools=[greet], question_middleware=[record])
    with anyio.fail_after(wire.TIMEOUT):
        async with Client(server, protocol=protocol, elicitation_handler=reply) as client:
            result = await client.call_tool("greet", {})
    assert result.content[0].text == "hello ADA"  # type: ignore[union-attr]
    assert seen == [("elicitation/create", "greet", "ada")]


# -- timeouts ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("era", ERAS)
async def test_a_sync_tool_that_never_returns_times_out_and_its_thread_is_abandoned_and_counted(era: str) -> None:
    release = threading.Event()

    @tool(timeout=0.05)
    def hang() -> str:
        release.wait()
        return "late"

    server = Server("t", tools=[hang])
    try:
        async with wire.memory(server) as peer:
            if era == "handshake":
                await peer.initialize()
            reply = await call(peer, era, "hang")
    finally:
        release.set()  # the abandoned thread ends
    assert reply["result"]["isError"] is True
    assert text(reply) == "tool 'hang' timed out after 0.05 s"
    assert server.abandoned_calls == 1


async def test_an_async_tool_that_swallows_its_cancellation_is_waited_for_and_still_answered_timed_out() -> None:
    cancelled = anyio.Event()
    release = anyio.Event()
    returned: list[str] = []

    @tool(timeout=0.05)
    async def stubborn() -> str:
        try:
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            cancelled.set()
            with anyio.CancelScope(shield=True):
                await release.wait()
        returned.append("late")
        return "late"

    server = Server("t", tools=[stubborn], tool_timeout=60)  # the tool's own timeout wins
    async with wire.memory(server) as peer:
        await peer.send(
            {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "stubborn", "_meta": wire.meta()}}
        )
        await cancelled.wait()
        release.set()
        reply = await peer.receive()
    assert returned == ["late"]  # it ran to its end; what it returned is dropped
    assert reply["result"]["isError"] is True
    assert text(reply) == "tool 'stubborn' timed out after 0.05 s"
    assert server.abandoned_calls == 0  # nothing is left running


# -- result size, audit, checks ----------------------------------------------------------------------------


@pytest.mark.parametrize("era", ERAS)
async def test_a_result_over_the_size_limit_is_a_tool_error_not_a_truncated_result(era: str) -> None:
    @tool
    def record() -> dict[str, str]:
        return {"text": "y" * 500}

    server = Server("s", tools=[record], max_result_bytes=300)
    async with wire.memory(server) as peer:
        if era == "handshake":
            await peer.initialize()
        reply = await call(peer, era, "record")
    assert reply["result"]["isError"] is True
    assert "structuredContent" not in reply["result"]
    assert "more than the 300 bytes allowed" in text(reply)


@pytest.mark.parametrize("era", ERAS)
async def test_audit_log_records_method_tool_subject_outcome_and_arguments_when_asked(
    era: str, caplog: pytest.LogCaptureFixture
) -> None:
    audit = AuditLog("test.audit", arguments=True)

    @tool
    def fail() -> str:
        raise ToolError("no")

    @tool
    def add(a: int, b: int) -> int:
        return a + b

    server = Server("a", tools=[add, fail], middleware=[audit])
    with caplog.at_level(logging.INFO, logger="test.audit"):
        async with wire.memory(server) as peer:
            if era == "handshake":
                await peer.initialize()
            await call(peer, era, "add", {"a": 1, "b": 2})
            await call(peer, era, "fail")
            await call(peer, era, "missing")
    records = [r for r in caplog.records if r.name == "test.audit" and r.mcp_method == "tools/call"]  # type: ignore[attr-defined]
    assert [(r.mcp_tool, r.mcp_outcome, r.mcp_subject) for r in records] == [  # type: ignore[attr-defined]
        ("add", "ok", None),
        ("fail", "tool_error", None),
        (None, "error -32602", None),
    ]
    assert records[0].mcp_arguments == {"a": 1, "b": 2}  # type: ignore[attr-defined]
    assert all(r.mcp_duration_ms >= 0 for r in records)  # type: ignore[attr-defined]


@pytest.mark.parametrize("where", ["middleware", "tool_middleware"])
async def test_a_middleware_that_returns_no_result_is_answered_with_an_internal_error(where: str) -> None:
    async def broken(request: Request, call_next: CallNext) -> dict[str, Any]:
        await call_next(request)
        return None  # type: ignore[return-value]

    @tool
    def add(a: int, b: int) -> int:
        return a + b

    server = Server("b", tools=[add], **{where: [broken]})  # type: ignore[arg-type]
    async with wire.memory(server) as peer:
        for _ in range(2):  # and the server goes on serving
            reply = await call(peer, "modern", "add", {"a": 1, "b": 2})
            assert reply["error"]["code"] == -32603


def test_bad_options_are_refused_when_given() -> None:
    with pytest.raises(ValueError, match="max_result_bytes"):
        Server("x", max_result_bytes=0)
    with pytest.raises(ValueError, match="middleware\\[0\\] is not callable"):
        Server("x", middleware=[42])  # type: ignore[list-item]
    with pytest.raises(Exception, match="timeout must be a number of seconds above 0"):

        @tool(timeout=-1)
        def f() -> None: ...


# -- testing middleware --------------------------------------------------------------------------------------


def test_tool_tester_runs_the_servers_middleware() -> None:
    module = app_server()
    with ToolTester(module.build()) as tester:
        assert tester.call("add", a=1, b=2).text == "4"
        assert [definition.name for definition in tester.list_tools()] == ["add", "big", "ask"]
    assert "tools/call" in module.seen


async def test_a_middleware_runs_alone_with_a_request_and_a_fake_next_step() -> None:
    module = app_server()
    passed: list[Request] = []

    async def fake_next(request: Request) -> dict[str, Any]:
        passed.append(request)
        return {"content": []}

    assert await module.double_a(Request("tools/call", arguments={"a": 2}), fake_next) == {"content": []}
    assert passed[0].arguments == {"a": 4}


# -- stdio and HTTP ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("era", ERAS)
async def test_middleware_over_stdio(era: str, anyio_backend: str) -> None:
    async with wire.stdio([sys.executable, str(servers.MIDDLEWARE), anyio_backend]) as peer:
        if era == "handshake":
            await peer.initialize()
        assert await list_names(peer, era) == ["add", "big", "ask"]
        assert text(await call(peer, era, "add", {"a": 1, "b": 2})) == "4"
        assert (await call(peer, era, "secret"))["error"] == {"code": -32602, "message": "Unknown tool: secret"}
        assert (await call(peer, era, "big"))["result"]["isError"] is True


async def post(http: httpx.AsyncClient, message: dict[str, Any], headers: dict[str, str], version: str) -> Any:
    with anyio.fail_after(wire.TIMEOUT):
        response = await http.post("/mcp", json=message, headers=headers)
    body = response.text
    lines = [line[6:] for line in body.splitlines() if line.startswith("data: ")] if "data: " in body else [body]
    import json

    messages = [json.loads(line) for line in lines]
    for item in messages:
        wire.check_server_message(item, version, None if "method" in item else message["method"])
    return messages[-1]


ACCEPT = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


async def test_middleware_over_http_on_each_serving_path() -> None:
    module = app_server()
    server = module.build()
    app = server.http_app()
    transport = StreamingASGITransport(app)
    async with server.running(), httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8000") as http:
        modern = {**ACCEPT, "mcp-protocol-version": wire.MODERN, "mcp-method": "tools/call"}

        def modern_call(name: str, arguments: dict[str, Any], request_id: int) -> dict[str, Any]:
            caps: dict[str, Any] = {wire.CAPABILITIES_KEY: {"elicitation": {}}}
            params = {"name": name, "arguments": arguments, "_meta": wire.meta(progress=request_id, **caps)}
            return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}

        # Answered alone (a sync tool that cannot ask), and a hidden tool.
        reply = await post(http, modern_call("add", {"a": 1, "b": 2}, 1), {**modern, "mcp-name": "add"}, wire.MODERN)
        assert reply["result"]["content"][0]["text"] == "4"
        hidden = await post(http, modern_call("secret", {}, 2), {**modern, "mcp-name": "secret"}, wire.MODERN)
        assert hidden["error"] == {"code": -32602, "message": "Unknown tool: secret"}
        # Streamed (2026-07-28, a tool that asks): its first round ends with the confirmation.
        asked = await post(http, modern_call("ask", {}, 3), {**modern, "mcp-name": "ask"}, wire.MODERN)
        assert asked["result"]["resultType"] == "input_required"
        # A full exchange (a 2025-11-25 session, a tool that may ask; this client cannot, so it runs unasked).
        initialize = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {"protocolVersion": wire.LATEST, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
        }
        response = await http.post("/mcp", json=initialize, headers=ACCEPT)
        session = {**ACCEPT, "mcp-session-id": response.headers["mcp-session-id"], "mcp-protocol-version": wire.LATEST}
        await http.post("/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=session)
        message = {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "ask", "arguments": {}}}
        legacy = await post(http, message, session, wire.LATEST)
        assert legacy["result"]["content"][0]["text"] == "asked 0"
    assert module.seen == ["tools/call", "tools/call", "tools/call", "initialize", "tools/call"]


def test_middleware_over_http_on_uvicorn() -> None:
    served = Served(servers.MIDDLEWARE)
    try:

        async def main() -> None:
            async with Client.http(served.url) as client:
                assert [t.name for t in await client.list_tools()] == ["add", "big", "ask"]
                assert (await client.call_tool("add", {"a": 1, "b": 2})).content[0].text == "4"  # type: ignore[union-attr]
                with pytest.raises(ProtocolError, match=r"^Unknown tool: secret$"):
                    await client.call_tool("secret", {})

        anyio.run(main)
    finally:
        served.close()


def test_a_request_can_be_replaced_with_dataclasses_replace() -> None:
    request = Request("tools/call", {"name": "x"}, arguments={"a": 1})
    assert dataclasses.replace(request, arguments={"a": 2}).arguments == {"a": 2}


ALICE = "alice-token-0123456789"
BOB = "bob-token-0123456789ab"


async def test_tool_filter_by_identity_over_http_hides_a_tool_from_one_caller_only() -> None:
    def admins(definition: ToolDefinition, request: Request) -> bool:
        return definition.name != "drop" or (request.identity is not None and "admin" in request.identity.scopes)

    audit = AuditLog("test.identity")
    subjects: list[str | None] = []

    async def who(request: Request, call_next: CallNext) -> dict[str, Any]:
        subjects.append(request.identity.subject if request.identity is not None else None)
        return await call_next(request)

    @tool
    def drop() -> str:
        return "dropped"

    @tool
    def status() -> str:
        return "ok"

    server = Server("ids", tools=[drop, status], tool_filter=admins, middleware=[audit, who])
    verifier = StaticTokenVerifier(
        {ALICE: Identity("alice", frozenset({"tools"})), BOB: Identity("bob", frozenset({"tools", "admin"}))}
    )
    app = server.http_app(auth=verifier, authorization_servers=["https://auth.example.com"])
    transport = StreamingASGITransport(app)
    async with server.running(), httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8000") as http:
        replies = {}
        for token in (ALICE, BOB):
            headers = {**ACCEPT, "authorization": f"Bearer {token}", "mcp-protocol-version": wire.MODERN}
            listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": wire.meta()}}
            listed = await post(http, listing, {**headers, "mcp-method": "tools/list"}, wire.MODERN)
            params = {"name": "drop", "arguments": {}, "_meta": wire.meta()}
            message = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params}
            called = await post(http, message, {**headers, "mcp-method": "tools/call", "mcp-name": "drop"}, wire.MODERN)
            replies[token] = ([t["name"] for t in listed["result"]["tools"]], called)
    assert replies[ALICE][0] == ["status"]
    assert replies[ALICE][1]["error"] == {"code": -32602, "message": "Unknown tool: drop"}
    assert replies[BOB][0] == ["drop", "status"]
    assert replies[BOB][1]["result"]["content"][0]["text"] == "dropped"
    assert subjects == ["alice", "alice", "bob", "bob"]


@pytest.mark.parametrize("protocol", ["handshake", "2026-07-28"])
@pytest.mark.parametrize("sync", [False, True])
async def test_question_middleware_sees_each_question_of_a_together_block(protocol: ProtocolMode, sync: bool) -> None:
    seen: list[str] = []

    async def record(question: Question, call_next: AskNext) -> dict[str, Any]:
        answer = await call_next(question)
        seen.append(f"{question.method} {question.key}")
        return answer

    if sync:

        @tool
        def both(ctx: Context) -> str:
            with ctx.together():
                first = ctx.confirm("First?", key="one")
                second = ctx.confirm("Second?", key="two")
            return f"{first.action} {second.action}"

    else:

        @tool
        async def both(ctx: Context) -> str:
            async with ctx.together():
                first = ctx.confirm("First?", key="one")
                second = ctx.confirm("Second?", key="two")
            return f"{first.action} {second.action}"

    async def reply(request: ElicitRequest) -> ElicitResult[Any]:
        return ElicitResult.accept({})

    server = Server("t", tools=[both], question_middleware=[record])
    with anyio.fail_after(wire.TIMEOUT):
        async with Client(server, protocol=protocol, elicitation_handler=reply) as client:
            result = await client.call_tool("both", {})
    assert result.content[0].text == "accept accept"  # type: ignore[union-attr]
    assert sorted(seen) == ["elicitation/create one", "elicitation/create two"]


async def test_audit_log_records_questions_with_their_answers_when_asked(caplog: pytest.LogCaptureFixture) -> None:
    audit = AuditLog("test.questions", arguments=True)

    @tool(confirm=True, read_only=True)
    def publish(title: str) -> str:
        return f"published {title}"

    async def decline(request: ElicitRequest) -> ElicitResult[Any]:
        return ElicitResult.decline()

    server = Server("a", tools=[publish], tool_middleware=[audit], question_middleware=[audit.question])
    with caplog.at_level(logging.INFO, logger="test.questions"):
        async with Client(server, protocol="handshake", elicitation_handler=decline) as client:
            result = await client.call_tool("publish", {"title": "x"})
    assert result.is_error
    outcomes = [(r.mcp_method, r.mcp_tool, r.mcp_outcome) for r in caplog.records if r.name == "test.questions"]  # type: ignore[attr-defined]
    assert outcomes == [("elicitation/create", "publish", "decline"), ("tools/call", "publish", "tool_error")]
    assert caplog.records[0].mcp_arguments == {"action": "decline"}  # type: ignore[attr-defined]
    assert "decline" in caplog.records[0].getMessage()


async def test_server_middleware_can_change_a_calls_arguments_and_leaves_subscriptions_alone() -> None:
    methods: list[str] = []

    async def plus_one(request: Request, call_next: CallNext) -> dict[str, Any]:
        methods.append(request.method)
        if request.method == "tools/call":
            request.arguments = {**(request.arguments or {}), "a": 41}
        return await call_next(request)

    @tool
    def add(a: int, b: int) -> int:
        return a + b

    async with wire.memory(Server("m", tools=[add], middleware=[plus_one])) as peer:
        assert text(await call(peer, "modern", "add", {"a": 1, "b": 1})) == "42"
        listen = {"notifications": {"toolsListChanged": True}, "_meta": wire.meta()}
        await peer.send({"jsonrpc": "2.0", "id": 9, "method": "subscriptions/listen", "params": listen})
        acknowledged = await peer.receive()
        assert acknowledged["method"] == "notifications/subscriptions/acknowledged"
    assert methods == ["tools/call"]


def test_every_bad_middleware_option_is_named() -> None:
    with pytest.raises(ValueError, match="tool_middleware must be a list") as caught:
        Server("x", tool_middleware=print, tool_timeout=0)  # type: ignore[arg-type]
    assert "server timeout must be a number of seconds above 0" in str(caught.value)

    def f() -> None: ...

    bad: dict[str, Any] = {"max_result_bytes": True, "timeout": "1"}
    with pytest.raises(Exception, match="max_result_bytes must be a number of bytes") as problem:
        tool(**bad)(f)

    assert "timeout must be a number of seconds" in str(problem.value)


async def test_a_tool_error_without_a_message_from_middleware_still_says_the_call_was_refused() -> None:
    async def refuse(request: Request, call_next: CallNext) -> dict[str, Any]:
        raise ToolError

    @tool(middleware=[refuse])
    def add(a: int, b: int) -> int:
        return a + b

    with ToolTester(add) as tester:
        result = tester.call("add", a=1, b=2)
    assert result.is_error
    assert result.text == "the call was refused"


def test_a_call_within_its_timeout_and_size_limit_is_answered_unchanged() -> None:
    @tool(timeout=30, max_result_bytes=10_000)
    def add(a: int, b: int) -> int:
        return a + b

    with ToolTester(add) as tester:
        result = tester.call("add", a=1, b=2)
    assert not result.is_error
    assert result.text == "3"


async def test_audit_log_records_a_round_that_asks_and_a_question_the_client_fails(
    caplog: pytest.LogCaptureFixture,
) -> None:
    audit = AuditLog("test.rounds")

    @tool(confirm=True, read_only=True)
    def publish() -> str:
        return "published"

    async def fail(request: ElicitRequest) -> ElicitResult[Any]:
        raise ClientRequestError(-1, "the user closed the window")

    server = Server("a", tools=[publish], middleware=[audit], question_middleware=[audit.question])
    with caplog.at_level(logging.INFO, logger="test.rounds"):
        async with wire.memory(server) as peer:
            caps: dict[str, Any] = {wire.CAPABILITIES_KEY: {"elicitation": {}}}
            first = await peer.request("tools/call", {"name": "publish", "_meta": wire.meta(**caps)})
            assert first["result"]["resultType"] == "input_required"
        async with Client(server, protocol="handshake", elicitation_handler=fail) as client:
            failed = await client.call_tool("publish", {})
    assert failed.is_error
    outcomes = [(r.mcp_method, r.mcp_outcome) for r in caplog.records if r.name == "test.rounds"]  # type: ignore[attr-defined]
    assert ("elicitation/create", "unanswered") in outcomes
    assert ("tools/call", "input_required") in outcomes
    assert ("elicitation/create", "failed") in outcomes


@pytest.mark.parametrize("protocol", ["handshake", "2026-07-28"])
async def test_question_middleware_over_http_sees_the_confirmation(protocol: ProtocolMode) -> None:
    module = app_server()
    server = module.build()

    async def accept(request: ElicitRequest) -> ElicitResult[Any]:
        return ElicitResult.accept({})

    with anyio.fail_after(wire.TIMEOUT):
        async with http_client(server, protocol, accept) as client:
            result = await client.call_tool("ask", {})
    assert result.content[0].text == "asked 1"  # type: ignore[union-attr]
    assert module.asked == ["elicitation/create ask: accept"]
    rounds = 1 if protocol == "handshake" else 2
    assert [method for method in module.seen if method == "tools/call"] == ["tools/call"] * rounds


# -- what a middleware returns is its own, and is checked ----------------------------------------------------


@pytest.mark.parametrize("where", ["middleware", "tool_middleware"])
async def test_a_cached_result_is_never_changed_and_each_era_gets_its_own_envelope(where: str) -> None:
    cache: dict[str, dict[str, Any]] = {}

    async def caching(request: Request, call_next: CallNext) -> dict[str, Any]:
        if request.method != "tools/call":
            return await call_next(request)
        if "add" not in cache:
            cache["add"] = {"content": [{"type": "text", "text": "cached"}]}
            await call_next(request)
        return cache["add"]

    @tool
    def add(a: int, b: int) -> int:
        return a + b

    server = Server("c", tools=[add], **{where: [caching]})  # type: ignore[arg-type]
    async with wire.memory(server) as modern:
        first = await call(modern, "modern", "add", {"a": 1, "b": 2})
    assert cache["add"] == {"content": [{"type": "text", "text": "cached"}]}  # unchanged by the answer
    assert first["result"]["resultType"] == "complete"
    async with wire.memory(server) as old:
        await old.initialize()
        second = await call(old, "handshake", "add", {"a": 1, "b": 2})
    assert second["result"] == {"content": [{"type": "text", "text": "cached"}]}  # no 2026-07-28 keys leak in


@pytest.mark.parametrize("where", ["middleware", "tool_middleware"])
@pytest.mark.parametrize(
    "bad",
    [{}, {"content": "not a list", "isError": "yes"}, {"content": [], "isError": "yes"}, {"content": [{"type": "?"}]}],
)
async def test_a_middleware_result_that_is_no_call_result_is_an_internal_error(
    where: str, bad: dict[str, Any], caplog: pytest.LogCaptureFixture
) -> None:
    async def broken(request: Request, call_next: CallNext) -> dict[str, Any]:
        result = await call_next(request)
        return bad if request.method == "tools/call" else result

    @tool
    def add(a: int, b: int) -> int:
        return a + b

    server = Server("b", tools=[add], **{where: [AuditLog("test.inner"), broken]})  # type: ignore[arg-type]
    with caplog.at_level(logging.ERROR, logger="toolkit"):
        async with wire.memory(server) as peer:
            for era in ERAS:
                if era == "handshake":
                    await peer.initialize()
                reply = await call(peer, era, "add", {"a": 1, "b": 2})
                assert reply["error"]["code"] == -32603
    assert "not the result (a CallToolResult)" in caplog.text
    async with Client(server) as client:  # the client gets the error, not a ValidationError
        with pytest.raises(ProtocolError, match="Internal error"):
            await client.call_tool("add", {"a": 1, "b": 2})


async def test_the_audit_log_reports_no_attribute_error_for_a_middleware_that_returns_no_dict(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def broken(request: Request, call_next: CallNext) -> dict[str, Any]:
        return "text"  # type: ignore[return-value]

    @tool
    def add(a: int, b: int) -> int:
        return a + b

    server = Server("b", tools=[add], tool_middleware=[AuditLog("test.nodict"), broken])
    with caplog.at_level(logging.INFO):
        async with wire.memory(server) as peer:
            reply = await call(peer, "modern", "add", {"a": 1, "b": 2})
    assert reply["error"]["code"] == -32603
    assert "AttributeError" not in caplog.text
    assert "a middleware returned str, not the result" in caplog.text
    assert [r.mcp_outcome for r in caplog.records if r.name == "test.nodict"] == ["failed"]  # type: ignore[attr-defined]


def test_a_plain_function_as_middleware_is_refused_where_it_is_given() -> None:
    def sync_hook(request: Request, call_next: CallNext) -> Any:
        return call_next(request)

    for option in ("middleware", "tool_middleware", "question_middleware"):
        with pytest.raises(ValueError, match=rf"{option}\[0\] \(.*sync_hook\) is not async"):
            Server("x", **{option: [sync_hook]})  # type: ignore[arg-type]
    with pytest.raises(Exception, match=r"middleware\[1\] \(.*sync_hook\) is not async"):

        @tool(middleware=[AuditLog(), sync_hook])
        def f() -> None: ...

    audit = AuditLog()
    assert Server("x", middleware=[audit], question_middleware=[audit.question]).registry.middleware == (audit,)


# -- a ToolError from server-wide middleware, the audit of 2026-07-28 rounds ----------------------------------


@pytest.mark.parametrize("era", ERAS)
async def test_a_tool_error_from_server_middleware_answers_a_call_as_a_tool_error(era: str) -> None:
    async def refuse(request: Request, call_next: CallNext) -> dict[str, Any]:
        if request.method == "tools/call":
            raise ToolError("not today")
        return await call_next(request)

    @tool
    def add(a: int, b: int) -> int:
        return a + b

    async with wire.memory(Server("r", tools=[add], middleware=[AuditLog("test.refuse"), refuse])) as peer:
        if era == "handshake":
            await peer.initialize()
        reply = await call(peer, era, "add", {"a": 1, "b": 2})
    assert reply["result"]["isError"] is True
    assert text(reply) == "not today"
    if era == "modern":
        assert reply["result"]["resultType"] == "complete"
        assert wire.SERVER_INFO_KEY in reply["result"]["_meta"]


async def test_a_tool_error_from_server_middleware_on_another_method_is_an_internal_error_with_its_message(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def refuse(request: Request, call_next: CallNext) -> dict[str, Any]:
        if request.method == "tools/list":
            raise ToolError("no listing")
        return await call_next(request)

    with caplog.at_level(logging.ERROR, logger="toolkit"):
        async with wire.memory(Server("r", middleware=[refuse])) as peer:
            reply = await peer.request("tools/list", {"_meta": wire.meta()})
    assert reply["error"] == {"code": -32603, "message": "Internal error: no listing"}
    assert "internal error while handling" not in caplog.text  # not logged as a bug of the server


async def test_audit_log_as_tool_middleware_records_a_round_that_asks_as_input_required(
    caplog: pytest.LogCaptureFixture,
) -> None:
    audit = AuditLog("test.rounds")

    @tool(confirm=True, read_only=True)
    def publish(title: str) -> str:
        return f"published {title}"

    async def accept(request: ElicitRequest) -> ElicitResult[Any]:
        return ElicitResult.accept({})

    server = Server("a", tools=[publish], tool_middleware=[audit])
    with caplog.at_level(logging.INFO, logger="test.rounds"):
        async with Client(server, protocol="2026-07-28", elicitation_handler=accept) as client:
            result = await client.call_tool("publish", {"title": "x"})
    assert result.text == "published x"
    outcomes = [r.mcp_outcome for r in caplog.records if r.name == "test.rounds"]  # type: ignore[attr-defined]
    assert outcomes == ["input_required", "ok"]


# -- options that cannot work, the cache scope of a filtered list --------------------------------------------


def test_a_timeout_on_a_sync_tool_run_on_the_event_loop_is_refused_saying_why() -> None:
    with pytest.raises(ToolDefinitionError, match="timeout= cannot stop a sync function run on the event loop"):

        @tool(timeout=1, run_in_thread=False)
        def blocking() -> None: ...

    @tool(timeout=1, run_in_thread=False)
    async def awaiting() -> None: ...

    @tool(timeout=1)
    def threaded() -> None: ...

    assert awaiting.timeout == threaded.timeout == 1


@pytest.mark.parametrize("filtered", [True, False])
async def test_a_filtered_tools_list_is_private_to_its_caller(filtered: bool) -> None:
    @tool
    def add(a: int, b: int) -> int:
        return a + b

    server = Server("f", tools=[add], tool_filter=(lambda definition, request: True) if filtered else None)
    async with wire.memory(server) as peer:
        result = await peer.result("tools/list", {"_meta": wire.meta()})
    assert result["cacheScope"] == ("private" if filtered else "public")


@pytest.mark.parametrize("protocol", ["handshake", "2026-07-28"])
@pytest.mark.parametrize("sync", [True, False])
async def test_the_timeout_counts_the_tools_own_time_not_the_wait_for_the_clients_answer(
    protocol: ProtocolMode, sync: bool
) -> None:
    # The answer takes longer than the whole timeout; the tool itself takes next to nothing. The wait only makes
    # the test longer under load, never flaky: a slower machine makes it wait longer, still not the tool's time.
    if sync:

        @tool(timeout=1, confirm=True, read_only=True)
        def publish(title: str) -> str:
            return f"published {title}"

    else:

        @tool(timeout=1, confirm=True, read_only=True)
        async def publish(title: str) -> str:
            return f"published {title}"

    async def slow(request: ElicitRequest) -> ElicitResult[Any]:
        await anyio.sleep(1.5)
        return ElicitResult.accept({})

    with anyio.fail_after(wire.TIMEOUT):
        async with Client(Server("t", tools=[publish]), protocol=protocol, elicitation_handler=slow) as client:
            result = await client.call_tool("publish", {"title": "x"})
    assert not result.is_error, result.text
    assert result.text == "published x"


async def test_the_timeout_still_ends_a_tool_that_hangs_after_its_question_is_answered() -> None:
    @tool(timeout=0.5)
    async def hang(ctx: Context) -> str:
        await ctx.confirm("Go on?")
        await anyio.sleep_forever()
        return "never"

    async def accept(request: ElicitRequest) -> ElicitResult[Any]:
        return ElicitResult.accept({})

    with anyio.fail_after(wire.TIMEOUT):
        async with Client(Server("t", tools=[hang]), protocol="handshake", elicitation_handler=accept) as client:
            result = await client.call_tool("hang", {})
    assert result.is_error
    assert result.text == "tool 'hang' timed out after 0.5 s"


async def _confirm_first(request: Request, call_next: CallNext) -> dict[str, Any]:
    """Tool middleware that asks the user through the call's Context before the tool runs."""
    assert request.context is not None
    answer = await request.context.elicit("Run it?", {"type": "object", "properties": {}})
    if answer.action != "accept":
        raise ToolError("declined")
    return await call_next(request)


@tool
async def only_tells(ctx: Context) -> str:
    """Its own source only tells (no asking of its own), but its middleware asks with its Context."""
    await ctx.report_progress(1, total=1)
    return "ran"


@pytest.mark.parametrize("where", ["memory", "http"])
@pytest.mark.parametrize("protocol", ["handshake", "2026-07-28"])
async def test_tool_middleware_asks_through_the_context_of_a_tool_that_only_tells(
    protocol: ProtocolMode, where: str
) -> None:
    asked: list[str] = []

    async def accept(request: ElicitRequest) -> ElicitResult[Any]:
        asked.append(request.message)
        return ElicitResult.accept({})

    server = Server("wrapped", tools=[only_tells], tool_middleware=[_confirm_first])
    assert not only_tells.asks  # the tool alone would get no asking: its middleware does
    if where == "memory":
        async with Client(server, protocol=protocol, elicitation_handler=accept) as client:
            result = await client.call_tool("only_tells", {})
    else:
        async with http_client(server, protocol, accept) as client:
            result = await client.call_tool("only_tells", {})
    assert (result.text, result.is_error) == ("ran", False)
    assert asked == ["Run it?"]
