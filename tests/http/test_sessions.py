"""2025-11-25 session ids over HTTP: sealed tokens of their own purpose (toolkit/_seal.py), in one place
(toolkit/_http/sessions.py).

A session id and a 2026-07-28 `requestState` are sealed with one secret but never pass for each other; an id is a
short, visible-ASCII header value however large a client's capabilities and names; it expires, follows a key
rotation, belongs to its user; a foreign key is logged once. Tests/test_http.py covers the rest (forged, tampered,
another user's, DELETE), tests/http/test_session_store.py the ended sessions shared by workers.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import logging
import re
from contextlib import AsyncExitStack
from typing import Any

import httpx
import pytest
import wire
from test_session_store import ACCEPT, ANSWER, GONE, INITIALIZE, SECRET, call, open_session

from toolkit import Context, Form, Identity, Server, StreamingASGITransport
from toolkit._engine.session import SessionState
from toolkit._http.sessions import MAX_ID_SIZE, Sessions

pytestmark = pytest.mark.anyio

NAME = Form({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]})
OLD = b"o" * 32
NEW = b"n" * 32
# A session id is base64url parts joined by dots: visible ASCII, a valid header value.
TOKEN = re.compile(r"v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}")


def asking_server() -> Server:
    server = Server("sessions-demo")

    @server.tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @server.tool
    async def greet(ctx: Context) -> str:
        """Ask a name, then greet the client by it, saying which client asked."""
        answer = await ctx.elicit("Your name?", NAME)
        assert answer.data is not None
        client = ctx.client_info.name if ctx.client_info is not None else "?"
        return f"hello {answer.data['name']} from {client}"

    return server


async def serve(stack: AsyncExitStack, app: Any) -> httpx.AsyncClient:
    client = httpx.AsyncClient(transport=StreamingASGITransport(app), base_url="http://127.0.0.1:8000")
    return await stack.enter_async_context(client)


def modern_call(**params: Any) -> tuple[dict[str, Any], dict[str, str]]:
    meta = {**wire.meta(), wire.CAPABILITIES_KEY: {"elicitation": {"form": {}}}}
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "greet", "arguments": {}, **params, "_meta": meta},
    }
    headers = {**ACCEPT, "mcp-protocol-version": wire.MODERN, "mcp-method": "tools/call", "mcp-name": "greet"}
    return message, headers


def payload(token: str) -> Any:
    part = token.split(".")[2]
    return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))


async def test_a_session_id_and_a_request_state_are_never_taken_for_each_other() -> None:
    """One secret signs both (docs/deploy.md#keys), each kind with a key of its own purpose: a requestState sent as
    `Mcp-Session-Id` is an unknown session (404), a session id sent as `requestState` is refused (-32602)."""
    async with AsyncExitStack() as stack:
        client = await serve(stack, asking_server().http_app(secret=SECRET))
        session = await open_session(client)
        message, headers = modern_call()
        first = (await client.post("/mcp", json=message, headers=headers)).json()
        wire.check_server_message(first, wire.MODERN, "tools/call")
        state = first["result"]["requestState"]
        assert TOKEN.fullmatch(state)
        assert await call(client, {**session, "mcp-session-id": state}) == (404, GONE)
        answer = {"elicitation1": {"action": "accept", "content": {"name": "Ada"}}}
        message, headers = modern_call(inputResponses=answer, requestState=session["mcp-session-id"])
        response = await client.post("/mcp", json=message, headers=headers)
        assert (response.status_code, response.json()) == (
            400,
            wire.error(1, -32602, {"reason": "invalid_request_state", "detail": "unknown_key"}),
        )
        # Each still serves its own purpose.
        assert await call(client, session) == ANSWER
        message, headers = modern_call(inputResponses=answer, requestState=state)
        reply = (await client.post("/mcp", json=message, headers=headers)).json()
        client_name = wire.meta()[wire.CLIENT_INFO_KEY]["name"]
    assert reply["result"]["content"] == [{"type": "text", "text": f"hello Ada from {client_name}"}]


async def test_a_session_id_is_a_short_header_value_that_shows_no_user() -> None:
    """Measured: 152 characters for the test client without auth (157 before issue 22), 191 with (181)."""

    async def verify(token: str) -> Identity | None:
        return Identity("alice@example.com") if token == "alice" else None

    async with AsyncExitStack() as stack:
        client = await serve(
            stack,
            asking_server().http_app(secret=SECRET, auth=verify, authorization_servers=["https://auth.example.com"]),
        )
        response = await client.post("/mcp", json=INITIALIZE, headers={**ACCEPT, "authorization": "Bearer alice"})
        session = response.headers["mcp-session-id"]
    assert TOKEN.fullmatch(session)
    assert len(session) <= 200
    assert "alice" not in json.dumps(payload(session))
    assert "b" in payload(session)  # bound to its user (tests/http/test_http.py: another user's id is 404)


async def test_the_largest_capabilities_and_names_still_give_a_working_session() -> None:
    """What a client declares is bounded as sealed (non-ASCII escaped), so that every id fits the size every
    worker accepts: before, these made a 3,448-character id that its own worker refused."""
    emoji = "\U0001f600"
    capabilities: dict[str, Any] = {key: {"x": emoji * 240} for key in ("sampling", "elicitation")}
    capabilities["roots"] = {"listChanged": True, "note": "\u00e9" * 37}  # 252 characters as sealed: kept
    capabilities["tasks"] = {"note": "x" * 300}  # over the bound: declared, without its details
    info = {"name": emoji * 200, "version": "\u00e9" * 200}
    params: Any = INITIALIZE["params"]
    initialize = {**INITIALIZE, "params": {**params, "capabilities": capabilities, "clientInfo": info}}
    async with AsyncExitStack() as stack:
        first, second = [await serve(stack, asking_server().http_app(secret=SECRET)) for _ in "ab"]
        response = await first.post("/mcp", json=initialize, headers=ACCEPT)
        session = response.headers["mcp-session-id"]
        assert TOKEN.fullmatch(session)
        assert len(session) <= MAX_ID_SIZE
        headers = {**ACCEPT, "mcp-session-id": session, "mcp-protocol-version": wire.LATEST}
        assert await call(second, headers) == ANSWER
    sealed = payload(session)["d"]
    assert sealed["c"]["sampling"] == sealed["c"]["elicitation"] == {}
    assert sealed["c"]["roots"] == capabilities["roots"]
    assert sealed["c"]["tasks"] == {}
    assert sealed["i"] == [emoji * 10, "\u00e9" * 21]  # 12 and 6 characters each once escaped: 128 at most


def test_an_id_expires_after_the_session_ttl_and_follows_a_key_rotation() -> None:
    now = [1_000_000.0]
    state = SessionState("2025-11-25", {}, {"name": "t", "version": "1"}, initialized=True)
    old: Sessions[Any] = Sessions([OLD], 60.0, clock=lambda: now[0])
    session = old.mint(state, "alice")
    rotated: Sessions[Any] = Sessions([NEW, OLD], 60.0, clock=lambda: now[0])
    opened = rotated.open(session.token, "alice")
    assert opened is not None
    keyed = dataclasses.replace(state, key=session.nonce)  # the id's nonce: the owner of its anonymous tasks
    assert (opened.nonce, opened.state, opened.expires) == (session.nonce, keyed, int(now[0] + 60))
    assert rotated.open(session.token, "bob") is None
    assert rotated.open(session.token, None) is None
    assert Sessions([NEW], 60.0).open(session.token, "alice") is None
    now[0] += 61
    assert rotated.open(session.token, "alice") is None


async def test_an_id_signed_with_another_key_is_logged_once(caplog: pytest.LogCaptureFixture) -> None:
    other = asking_server().http_app(secret="another secret of thirty-two bytes or more")
    async with AsyncExitStack() as stack:
        client = await serve(stack, asking_server().http_app(secret=SECRET))
        foreign = await serve(stack, other)
        session = await open_session(client)
        with caplog.at_level(logging.WARNING, logger="toolkit.http"):
            for _ in range(2):
                assert await call(foreign, session) == (404, GONE)
    warnings = [r.getMessage() for r in caplog.records if "signed with another key" in r.getMessage()]
    assert len(warnings) == 1
    assert "http_app(secret=...)" in warnings[0]


def test_an_id_with_every_field_at_its_bound_still_fits() -> None:
    """The bounds keep every id under the size a worker accepts: four capabilities of 256 characters each (kept),
    a name and a version of 21 escaped characters each (128 once escaped), with a user."""
    capabilities = {key: {"p": "x" * 248} for key in ("sampling", "elicitation", "roots", "tasks")}
    state = SessionState("2025-11-25", capabilities, {"name": "\u00e9" * 21, "version": "\u00e9" * 21})
    sessions: Sessions[Any] = Sessions([OLD], 24 * 3600.0)
    session = sessions.mint(state, "someone@example.com")
    assert TOKEN.fullmatch(session.token)
    assert len(session.token) <= MAX_ID_SIZE
    opened = sessions.open(session.token, "someone@example.com")
    assert opened is not None
    assert opened.state.client_capabilities == capabilities
    assert opened.state.client_info == state.client_info
