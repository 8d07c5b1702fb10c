"""2025-11-25 Streamable HTTP resumption: SSE event ids, `retry`, priming events, GET + `Last-Event-ID`, and SEP-1699
polling (`ctx.close_sse_stream()`, `http_app(sse_close_after=)`): in process (streaming ASGI transport), through
`Client.http`, and on real uvicorn (`tests/servers/http_sse.py`), including a restart of the server process. Every
message the server sends is validated against the official schema. asyncio and trio.
"""

from __future__ import annotations

import json
import re
import socket
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import pytest
import servers
import wire
from served import TIMEOUT, Served

from toolkit import Client, Context, ProtocolError, Server, StreamingASGITransport, tool

pytestmark = pytest.mark.anyio

URL = "http://127.0.0.1:8000/mcp"
ACCEPT = "application/json, text/event-stream"
SECRET = "a shared secret of the two workers, 32+ chars"


class Gate:
    """Tools that report progress, close their SSE stream, and wait for the test before going on."""

    def __init__(self) -> None:
        self.go = anyio.Event()
        self.done = anyio.Event()

    def tools(self) -> list[Any]:
        @tool
        async def closing(ctx: Context) -> str:
            """Progress 1, close the stream, wait, progress 2, answer."""
            await ctx.report_progress(1, total=2)
            await ctx.close_sse_stream()
            await self.go.wait()
            await ctx.report_progress(2, total=2)
            self.done.set()
            return "closed and answered"

        @tool
        async def paced(ctx: Context) -> str:
            """Progress 1, wait, progress 2, answer (the stream stays open)."""
            await ctx.report_progress(1, total=2)
            await self.go.wait()
            await ctx.report_progress(2, total=2)
            self.done.set()
            return "paced"

        @tool
        def closing_sync(ctx: Context) -> str:
            """The same from a worker thread."""
            ctx.report_progress(1, total=1)
            ctx.close_sse_stream()
            return "closed from a thread"

        @tool
        async def poll(count: int, ctx: Context) -> str:
            """Close the stream after each of `count` progress reports."""
            for done in range(1, count + 1):
                await ctx.report_progress(done, total=count)
                await ctx.close_sse_stream()
            return "polled"

        @tool
        async def flood(count: int, ctx: Context) -> str:
            """Close the stream, then report progress `count` times."""
            await ctx.close_sse_stream()
            for done in range(1, count + 1):
                await ctx.report_progress(done, total=count, message="x" * 50)
            self.done.set()
            return "flooded"

        @tool
        async def waits(ctx: Context) -> str:
            """Wait for the test, then answer."""
            await self.go.wait()
            return "waited"

        return [closing, paced, closing_sync, poll, flood, waits]


def make_server(gate: Gate) -> Server:
    return Server("sse", tools=gate.tools(), secret=SECRET)


@asynccontextmanager
async def http_client(app: Any) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(transport=StreamingASGITransport(app), base_url="http://127.0.0.1:8000") as client:
        yield client


def parse(body: str) -> list[dict[str, str]]:
    """The events of an SSE body, each as its fields (`data` lines joined)."""
    events = []
    for block in body.split("\n\n"):
        fields: dict[str, str] = {}
        for line in block.split("\n"):
            if not line or line.startswith(":"):
                continue
            name, _, value = line.partition(":")
            value = value.removeprefix(" ")
            fields[name] = fields[name] + "\n" + value if name == "data" and name in fields else value
        if fields:
            events.append(fields)
    return events


def messages(events: list[dict[str, str]], version: str, method: str | None = "tools/call") -> list[Any]:
    """The JSON-RPC messages of `events`, each validated against the schema of `version`."""
    found = []
    for event in events:
        if event.get("data"):
            message = json.loads(event["data"])
            wire.check_server_message(message, version, None if "method" in message else method)
            found.append(message)
    return found


async def initialize(client: httpx.AsyncClient, version: str = wire.LATEST) -> dict[str, str]:
    message = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    response = await client.post("/mcp", json=message, headers={"accept": ACCEPT})
    assert response.status_code == 200
    return {
        "accept": ACCEPT,
        "mcp-session-id": response.headers["mcp-session-id"],
        "mcp-protocol-version": version,
    }


def call(name: str, request_id: Any = 1, token: str | None = "t", **arguments: Any) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name, "arguments": arguments}
    if token is not None:
        params["_meta"] = {"progressToken": token}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


async def post(client: httpx.AsyncClient, headers: dict[str, str], message: Any) -> httpx.Response:
    with anyio.fail_after(wire.TIMEOUT):
        return await client.post("/mcp", json=message, headers=headers)


async def resume(client: httpx.AsyncClient, headers: dict[str, str], last_id: str) -> httpx.Response:
    get = {**headers, "accept": "text/event-stream", "last-event-id": last_id}
    with anyio.fail_after(wire.TIMEOUT):
        return await client.get("/mcp", headers=get)


async def closed_call(
    client: httpx.AsyncClient, headers: dict[str, str]
) -> tuple[list[dict[str, str]], dict[str, str]]:
    """POST a call of `closing`: the events of its closed response, and the headers of a GET that resumes it."""
    events = parse((await post(client, headers, call("closing"))).text)
    return events, {**headers, "accept": "text/event-stream", "last-event-id": events[1]["id"]}


def progress(found: list[Any]) -> list[Any]:
    return [m["params"]["progress"] if m.get("method") else m["result"]["content"][0]["text"] for m in found]


# -- the server ------------------------------------------------------------------------------------------


async def test_a_session_stream_opens_with_a_priming_event_and_numbers_every_event() -> None:
    gate = Gate()
    gate.go.set()
    async with http_client(make_server(gate).http_app(sse_retry=0.25)) as client:
        headers = await initialize(client)
        first = parse((await post(client, headers, call("paced"))).text)
        second = parse((await post(client, headers, call("paced", 2))).text)
    stream = first[0]["id"].partition(":")[0]
    # transports: an event id and an empty data field first (SEP-1699), with the reconnection delay in ms
    assert first[0] == {"id": f"{stream}:0", "retry": "250", "data": ""}
    assert [event["id"] for event in first] == [f"{stream}:{n}" for n in range(4)]
    assert {event.get("event") for event in first[1:]} == {"message"}
    assert progress(messages(first, wire.LATEST)) == [1, 2, "paced"]
    # ids are unique across the session's streams and name the stream they belong to
    assert second[0]["id"].partition(":")[0] not in (stream, "")


async def test_sessions_of_older_revisions_get_event_ids_but_no_priming_and_no_early_close() -> None:
    gate = Gate()
    gate.go.set()
    async with http_client(make_server(gate).http_app()) as client:
        headers = await initialize(client, "2025-06-18")
        events = parse((await post(client, headers, call("closing"))).text)
    # a client of 2025-06-18 would read a priming event's empty data as a broken message
    assert all(event.get("data") for event in events)
    assert all(":" in event["id"] for event in events)
    assert progress(messages(events, "2025-06-18")) == [1, 2, "closed and answered"]


async def test_a_modern_stream_carries_no_ids_and_ignores_last_event_id() -> None:
    gate = Gate()
    gate.go.set()
    message = call("closing")
    message["params"]["_meta"].update(wire.meta())
    headers = {
        "accept": ACCEPT,
        "mcp-protocol-version": wire.MODERN,
        "mcp-method": "tools/call",
        "mcp-name": "closing",
        "last-event-id": "p0:0",  # 2026-07-28 has no resumption
    }
    async with http_client(make_server(gate).http_app()) as client:
        events = parse((await post(client, headers, message)).text)
    assert all("id" not in event and "retry" not in event for event in events)
    assert progress(messages(events, wire.MODERN)) == [1, 2, "closed and answered"]


async def test_close_sse_stream_ends_the_response_and_get_with_last_event_id_gets_the_rest() -> None:
    gate = Gate()
    async with http_client(make_server(gate).http_app(sse_retry=0.5)) as client:
        headers = await initialize(client)
        closed = await post(client, headers, call("closing"))  # returns while the call waits for the gate
        events = parse(closed.text)
        assert progress(messages(events, wire.LATEST)) == [1]
        # SEP-1699: "it SHOULD send an SSE event with a standard retry field before closing the connection"
        assert events[-1] == {"retry": "500"}
        assert not gate.done.is_set()
        last = events[1]["id"]
        get = {**headers, "accept": "text/event-stream", "last-event-id": last}
        with anyio.fail_after(wire.TIMEOUT):
            async with client.stream("GET", "/mcp", headers=get) as stream:
                assert stream.status_code == 200
                assert stream.headers["content-type"] == "text/event-stream"
                gate.go.set()  # the rest comes live, then the stream ends
                rest = parse((await stream.aread()).decode())
        stream_id = last.partition(":")[0]
        assert rest[0] == {"id": last, "retry": "500", "data": ""}
        assert [event["id"] for event in rest[1:]] == [f"{stream_id}:2", f"{stream_id}:3"]
        assert progress(messages(rest, wire.LATEST)) == [2, "closed and answered"]
        # The answer was delivered: a resumption from it has nothing more, and 204 tells the client to stop.
        assert (await resume(client, headers, rest[-1]["id"])).status_code == 204


async def test_a_client_that_left_mid_call_resumes_without_losing_or_repeating_events() -> None:
    gate = Gate()
    async with http_client(make_server(gate).http_app()) as client:
        headers = await initialize(client)
        seen: list[dict[str, str]] = []
        with anyio.fail_after(wire.TIMEOUT):
            async with client.stream("POST", "/mcp", json=call("paced"), headers=headers) as stream:
                buffer = ""
                async for chunk in stream.aiter_text():
                    buffer += chunk
                    seen = parse(buffer)
                    if messages(seen, wire.LATEST):
                        break  # the client goes away after progress 1
            # transports: "Disconnection SHOULD NOT be interpreted as the client cancelling its request"
            gate.go.set()
            await gate.done.wait()
        rest = parse((await resume(client, headers, seen[-1]["id"])).text)
        assert progress(messages(rest, wire.LATEST)) == [2, "paced"]
        # Kept for the replay window: a resumption from the priming event gets everything.
        again = parse((await resume(client, headers, seen[0]["id"])).text)
        assert progress(messages(again, wire.LATEST)) == [1, 2, "paced"]


async def test_a_resumption_gets_only_the_events_of_its_own_stream_and_session() -> None:
    gate = Gate()
    async with http_client(make_server(gate).http_app()) as client:
        headers = await initialize(client)
        other = await initialize(client)
        first = parse((await post(client, headers, call("closing", 1, token="a"))).text)
        second = parse((await post(client, headers, call("closing", 2, token="b"))).text)
        gate.go.set()
        await gate.done.wait()
        for events, request_id, token in ((first, 1, "a"), (second, 2, "b")):
            rest = messages(parse((await resume(client, headers, events[0]["id"])).text), wire.LATEST)
            assert {m.get("id", m.get("params", {}).get("progressToken")) for m in rest} == {request_id, token}
        # transports: the server "MUST NOT replay messages that would have been delivered on a different stream"
        refused = await resume(client, other, first[0]["id"])
    assert refused.status_code == 400
    assert refused.json()["error"]["code"] == -32600


@pytest.mark.parametrize("last_id", ["pNoSuchStream:1", "junk", "p:0", "pX:one"])
async def test_an_event_id_this_process_does_not_keep_gets_400_and_the_session_goes_on(last_id: str) -> None:
    gate = Gate()
    gate.go.set()
    async with http_client(make_server(gate).http_app()) as client:
        headers = await initialize(client)
        refused = await resume(client, headers, last_id)
        still = await post(client, headers, {"jsonrpc": "2.0", "id": 5, "method": "tools/list"})
    # Not 404: that would tell the client its session is gone (transports §Session Management).
    assert refused.status_code == 400
    body = refused.json()
    assert "id" not in body or body["id"] is None
    assert body["error"]["code"] == -32600
    assert still.status_code == 200


async def test_a_finished_stream_is_kept_for_the_replay_window_only() -> None:
    gate = Gate()
    async with http_client(make_server(gate).http_app(replay_window=0.0)) as client:
        headers = await initialize(client)
        events, get = await closed_call(client, headers)
        with anyio.fail_after(wire.TIMEOUT):
            async with client.stream("GET", "/mcp", headers=get) as stream:  # kept while the call runs
                gate.go.set()
                rest = parse((await stream.aread()).decode())
        assert progress(messages(rest, wire.LATEST)) == [2, "closed and answered"]
        # Finished, and a window of 0 s: gone.
        assert (await resume(client, headers, events[0]["id"])).status_code == 400


async def test_a_newer_resumption_takes_the_stream_over() -> None:
    gate = Gate()
    async with http_client(make_server(gate).http_app()) as client:
        headers = await initialize(client)
        events, get = await closed_call(client, headers)
        with anyio.fail_after(wire.TIMEOUT):
            async with (
                client.stream("GET", "/mcp", headers=get) as older,
                client.stream("GET", "/mcp", headers=get) as newer,
            ):
                assert parse((await older.aread()).decode()) == [
                    {"id": events[1]["id"], "retry": "1000", "data": ""},
                    {"retry": "1000"},
                ]  # ended without the rest, which goes to the newer one only
                gate.go.set()
                rest = parse((await newer.aread()).decode())
    assert progress(messages(rest, wire.LATEST)) == [2, "closed and answered"]


async def test_the_replay_buffer_keeps_the_newest_events_of_a_stream_and_always_its_answer() -> None:
    gate = Gate()
    async with http_client(make_server(gate).http_app(replay_size=2000)) as client:
        headers = await initialize(client)
        events = parse((await post(client, headers, call("flood", count=100))).text)
        with anyio.fail_after(wire.TIMEOUT):
            await gate.done.wait()
            rest = parse((await resume(client, headers, events[0]["id"])).text)
            while not any("result" in m for m in messages(rest, wire.LATEST)):
                rest = parse((await resume(client, headers, events[0]["id"])).text)
            # The stream is complete now (the first resumption may have caught it live, and a slow reader of a
            # live stream misses what is dropped meanwhile): a replay of what is kept.
            rest = parse((await resume(client, headers, events[0]["id"])).text)
    found = progress(messages(rest, wire.LATEST))
    assert found[-1] == "flooded"
    assert 1 < len(found) < 100
    assert found[:-1] == list(range(102 - len(found), 101))  # the newest, in order
    frames = sum(len(f"id: {e['id']}\nevent: message\ndata: {e['data']}\n\n") for e in rest[1:])
    assert frames <= 2000


async def test_a_session_keeps_a_bounded_number_of_finished_streams() -> None:
    gate = Gate()
    gate.go.set()
    async with http_client(make_server(gate).http_app()) as client:
        headers = await initialize(client)
        first_ids = []
        for request_id in range(34):  # docs/http.md: 32 finished streams per session
            events = parse((await post(client, headers, call("closing", request_id))).text)
            first_ids.append(events[0]["id"])
        oldest = await resume(client, headers, first_ids[0])
        newest = await resume(client, headers, first_ids[-1])
    assert oldest.status_code == 400
    assert newest.status_code == 200


async def test_delete_ends_the_sessions_resumptions() -> None:
    gate = Gate()
    async with http_client(make_server(gate).http_app()) as client:
        headers = await initialize(client)
        events, get = await closed_call(client, headers)
        with anyio.fail_after(wire.TIMEOUT):
            async with client.stream("GET", "/mcp", headers=get) as stream:
                assert (await client.delete("/mcp", headers=headers)).status_code == 204
                ended = parse((await stream.aread()).decode())
        assert messages(ended, wire.LATEST) == []
        assert (await resume(client, headers, events[1]["id"])).status_code == 404


async def test_the_get_stream_numbers_its_events_and_a_resumption_replays_what_was_missed() -> None:
    gate = Gate()
    server = make_server(gate)

    @tool
    def extra() -> str:
        """Added while the stream is open."""
        return "x"

    async with http_client(server.http_app()) as client:
        headers = await initialize(client)
        get = {**headers, "accept": "text/event-stream"}
        with anyio.fail_after(wire.TIMEOUT):
            async with client.stream("GET", "/mcp", headers=get) as first:
                lines = first.aiter_lines()
                priming = await anext(lines)
                stream_id = priming.removeprefix("id: ").partition(":")[0]
                assert stream_id.startswith("g")
                server.add_tool(extra)
                buffer = ""
                while "data: " not in buffer:
                    buffer += await anext(lines) + "\n"
                # A resumption takes the stream over (no 409) and replays the event after the id it names.
                resumed = {**get, "last-event-id": f"{stream_id}:0"}
                async with client.stream("GET", "/mcp", headers=resumed) as second:
                    assert second.status_code == 200
                    lines = second.aiter_lines()
                    replayed = ""
                    while "data: {" not in replayed:
                        replayed += await anext(lines) + "\n"
                    server.remove_tool("extra")  # then it goes on, live
                    while replayed.count("data: {") < 2:
                        replayed += await anext(lines) + "\n"
    events = parse(replayed)
    assert [event["id"] for event in events] == [f"{stream_id}:0", f"{stream_id}:1", f"{stream_id}:2"]
    assert [m["method"] for m in messages(events, wire.LATEST, None)] == ["notifications/tools/list_changed"] * 2


async def test_a_get_stream_id_this_process_does_not_keep_opens_a_fresh_stream() -> None:
    gate = Gate()
    async with http_client(make_server(gate).http_app()) as client:
        headers = await initialize(client)
        get = {**headers, "accept": "text/event-stream", "last-event-id": "gFromAnotherWorker:7"}
        with anyio.fail_after(wire.TIMEOUT):
            async with client.stream("GET", "/mcp", headers=get) as stream:
                assert stream.status_code == 200
                priming = await anext(stream.aiter_lines())
    assert priming.startswith("id: g")
    assert priming.endswith(":0")
    assert "gFromAnotherWorker" not in priming


async def test_close_sse_stream_is_a_no_op_in_memory() -> None:
    gate = Gate()
    gate.go.set()
    async with Client(make_server(gate)) as client:
        assert (await client.call_tool("closing")).text == "closed and answered"
        assert (await client.call_tool("closing_sync")).text == "closed from a thread"


async def test_sse_close_after_closes_the_response_of_a_long_call_of_a_tool_without_context_too() -> None:
    release = threading.Event()

    @tool
    def blocking() -> str:
        """Block a worker thread until the test releases it."""
        release.wait(wire.TIMEOUT)
        return "unblocked"

    app = Server("plain", tools=[blocking]).http_app(sse_close_after=0.0, sse_retry=0.01)
    async with http_client(app) as client:
        headers = await initialize(client)
        events = parse((await post(client, headers, call("blocking", token=None))).text)
        assert events == [{"id": events[0]["id"], "retry": "10", "data": ""}, {"retry": "10"}]
        release.set()
        found: list[Any] = []
        with anyio.fail_after(wire.TIMEOUT):
            while not found:  # each resumption is closed at once too: polled until the answer is there
                found = messages(parse((await resume(client, headers, events[0]["id"])).text), wire.LATEST)
    assert progress(found) == ["unblocked"]


def test_a_negative_sse_close_after_is_refused_when_the_app_is_made() -> None:
    with pytest.raises(ValueError, match="sse_close_after"):
        Server("x").http_app(sse_close_after=-1.0)


# -- Client.http ----------------------------------------------------------------------------------------


async def test_client_http_resumes_a_call_whose_stream_the_server_closes_each_time() -> None:
    gate = Gate()
    app = make_server(gate).http_app(sse_retry=0.01)
    seen: list[float] = []
    async with (
        http_client(app) as http,
        Client.http(URL, http_client=http, protocol="handshake") as client,
    ):
        with anyio.fail_after(wire.TIMEOUT):
            result = await client.call_tool("poll", {"count": 3}, progress=lambda p, t, m: seen.append(p))
            assert (await client.call_tool("closing_sync")).text == "closed from a thread"
    assert result.text == "polled"
    assert seen == [1, 2, 3]  # each once, in order


async def test_client_http_follows_a_server_that_closes_every_stream_after_a_while() -> None:
    gate = Gate()
    app = make_server(gate).http_app(sse_close_after=0.0, sse_retry=0.01)
    resumptions = 0

    async def counting(scope: Any, receive: Any, send: Any) -> None:
        nonlocal resumptions
        if scope["type"] == "http" and any(name == b"last-event-id" for name, _ in scope["headers"]):
            resumptions += 1
            if resumptions == 3:  # polled a few times: the call may finish now
                gate.go.set()
        await app(scope, receive, send)

    async with http_client(counting) as http, Client.http(URL, http_client=http, protocol="handshake") as client:
        with anyio.fail_after(wire.TIMEOUT):
            result = await client.call_tool("waits")
    assert result.text == "waited"
    assert resumptions >= 3


async def test_client_http_stops_resuming_a_call_it_cancelled() -> None:
    gate = Gate()
    app = make_server(gate).http_app(sse_retry=0.01)
    gets: list[int] = []
    resumed, ended = anyio.Event(), anyio.Event()

    async def recording(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and any(name == b"last-event-id" for name, _ in scope["headers"]):

            async def status(message: Any) -> None:
                if message["type"] == "http.response.start":
                    gets.append(message["status"])
                    (ended if message["status"] == 204 else resumed).set()
                await send(message)

            await app(scope, receive, status)
            return
        await app(scope, receive, send)

    async with http_client(recording) as http, Client.http(URL, http_client=http, protocol="handshake") as client:
        with anyio.fail_after(wire.TIMEOUT):
            async with anyio.create_task_group() as tg:
                tg.start_soon(client.call_tool, "closing")  # closes its stream, then waits for the gate
                await resumed.wait()
                tg.cancel_scope.cancel()  # notifications/cancelled: the server ends the call without an answer
            await ended.wait()  # the resumption found the stream over (204), and the client stopped there
            assert (await client.call_tool("poll", {"count": 1})).text == "polled"
    assert gets.count(204) == 1
    assert set(gets) == {200, 204}


async def test_client_http_fails_a_call_whose_stream_cannot_be_resumed_on_another_worker() -> None:
    # Two app instances with one shared secret stand for two workers: the POST lands on one, the resumption on the
    # other, which never saw the stream (the replay buffer is per process; docs/deploy.md).
    gate = Gate()
    gate.go.set()
    first = make_server(gate).http_app(sse_retry=0.01)
    second = make_server(gate).http_app(sse_retry=0.01)

    async def balancer(scope: Any, receive: Any, send: Any) -> None:
        resuming = any(name == b"last-event-id" for name, _ in scope.get("headers", ()))
        await (second if resuming else first)(scope, receive, send)

    async with http_client(balancer) as http, Client.http(URL, http_client=http, protocol="handshake") as client:
        with anyio.fail_after(wire.TIMEOUT), pytest.raises(ProtocolError, match="cannot resume") as caught:
            await client.call_tool("closing")
        assert caught.value.code == -32603
        assert (await client.call_tool("paced")).text == "paced"  # the session itself goes on, on either worker


# -- real uvicorn -----------------------------------------------------------------------------------------

SSE_SERVER = servers.HTTP_SSE


@pytest.fixture(scope="module")
def served() -> Iterator[Served]:
    server = Served(SSE_SERVER, "0", script=True)
    yield server
    server.close()


async def test_on_uvicorn_client_http_gets_the_answer_of_a_call_that_closes_its_stream(served: Served) -> None:
    seen: list[float] = []
    with anyio.fail_after(TIMEOUT):
        async with Client.http(served.url, protocol="handshake") as client:
            result = await client.call_tool("poll", {"count": 2}, progress=lambda p, t, m: seen.append(p))
    assert (result.text, seen) == ("polled", [1, 2])


async def test_on_uvicorn_a_client_that_hangs_up_mid_call_resumes_it(served: Served) -> None:
    url = httpx.URL(served.url)
    async with httpx.AsyncClient(base_url=served.url.removesuffix("/mcp")) as client:
        headers = await initialize(client)
        body = json.dumps(call("hold")).encode()
        request = (
            f"POST /mcp HTTP/1.1\r\nHost: {url.host}:{url.port}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers.items()) + "\r\n"
        ).encode() + body
        with anyio.fail_after(TIMEOUT):
            # A raw socket, closed as soon as progress 1 came: the client hangs up in the middle of the call.
            async with await anyio.connect_tcp(str(url.host), int(url.port or 80)) as sock:
                await sock.send(request)
                raw = b""
                while b'"progress":1' not in raw:
                    raw += await sock.receive()
            last_id = re.findall(r"id: (\S+)\nevent: message\ndata: \{", raw.decode())[-1]
            released = await post(client, headers, call("release", 2, token=None))
            assert messages([{"data": released.text}], wire.LATEST) != []
            rest = parse((await resume(client, headers, last_id)).text)
    assert progress(messages(rest, wire.LATEST)) == [2, "held"]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # two process starts and a graceful stop: once is enough
async def test_client_http_reopens_its_get_stream_when_the_server_process_restarts() -> None:
    # The second process has never seen the GET stream: it opens a fresh one (what was sent in between is lost);
    # the session goes on because both processes share the key. The first one crashes, so no graceful wait.
    port = str(_free_port())
    heard: list[anyio.Event] = [anyio.Event()]
    first = Served(SSE_SERVER, port, script=True)
    second = None

    async def heard_a_change(client: Client) -> None:
        heard[0] = anyio.Event()
        while not heard[0].is_set():  # until the client's GET stream is open, a change goes unheard
            assert (await client.call_tool("change")).text == "changed"
            with anyio.move_on_after(0.2):
                await heard[0].wait()

    def on_change() -> None:
        heard[0].set()

    try:
        with anyio.fail_after(TIMEOUT):
            async with Client.http(first.url, protocol="handshake", on_tools_changed=on_change) as client:
                await heard_a_change(client)
                first.process.kill()  # a crash: the client's connections break
                first.process.wait(timeout=TIMEOUT)
                first.reader.join(timeout=TIMEOUT)
                assert first.process.stderr is not None
                first.process.stderr.close()
                second = Served(SSE_SERVER, port, script=True)
                await heard_a_change(client)
    finally:
        for served in (first, second):
            if served is not None and served.process.poll() is None:
                served.close()
