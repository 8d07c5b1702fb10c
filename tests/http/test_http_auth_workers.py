"""Authentication on real workers: `uvicorn asking_app:authed --workers 2` (tests/servers/asking_app.py) on 127.0.0.1,
driven over real sockets with two users' bearer tokens.

- A 2026-07-28 `requestState` belongs to the user it was issued to (mrtr: servers SHOULD bind it to "the
  authenticated principal, rejecting state presented by a different principal").
- Scopes from a token never reach the `WWW-Authenticate` challenge raw (RFC 6749's scope characters only), so
  the `403` arrives whole whatever the token says, from a custom verifier or from `JWTVerifier`.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from typing import Any

import httpx
import jwt
import pytest
import servers
import wire
from asgi_servers import TIMEOUT, Spawned

APP = servers.load(servers.ASKING_APP)  # the tokens and the JWT key the served app knows
ALICE: str = APP.ALICE
BOB: str = APP.BOB
ODD: str = APP.ODD
META: dict[str, Any] = {**wire.meta(), wire.CAPABILITIES_KEY: {"elicitation": {"form": {}}}}
# RFC 6749 section 3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E ), separated by single spaces.
SCOPE = re.compile(r"[\x21\x23-\x5b\x5d-\x7e]+( [\x21\x23-\x5b\x5d-\x7e]+)*")


@pytest.fixture(scope="module")
def authed() -> Iterator[Spawned]:
    server = Spawned("uvicorn", app="authed", module="asking_app", token=ALICE)
    yield server
    output = server.close()
    assert "Traceback" not in output, output


@pytest.fixture(scope="module")
def open_app() -> Iterator[Spawned]:
    server = Spawned("uvicorn", app="app", module="asking_app")
    yield server
    output = server.close()
    assert "Traceback" not in output, output


def call(
    http: httpx.Client, url: str, name: str, token: str | None, **params: Any
) -> tuple[httpx.Response, dict[str, Any]]:
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": name,
            "arguments": {},
            **params,
            "_meta": META,
        },
    }
    headers = {
        "accept": "application/json, text/event-stream",
        "content-type": "application/json",
        "mcp-protocol-version": wire.MODERN,
        "mcp-method": "tools/call",
        "mcp-name": name,
    }
    if token is not None:
        headers["authorization"] = f"Bearer {token}"
    response = http.post(url, content=json.dumps(message), headers=headers)
    reply = response.json()
    wire.check_server_message(reply, wire.MODERN, "tools/call")
    return response, reply


def accept(key: str, **content: str) -> dict[str, Any]:
    return {key: {"action": "accept", "content": content}}


def second_round(http: httpx.Client, url: str, token: str | None) -> str:
    """Call `two_questions` as `token`'s user and answer the first question: the requestState of the second."""
    _, first = call(http, url, "two_questions", token)
    assert first["result"]["resultType"] == "input_required"
    _, second = call(
        http,
        url,
        "two_questions",
        token,
        inputResponses=accept("elicitation1", name="Ada"),
        requestState=first["result"]["requestState"],
    )
    assert list(second["result"]["inputRequests"]) == ["elicitation2"]
    state: str = second["result"]["requestState"]
    return state


def finish(http: httpx.Client, url: str, token: str | None, state: str) -> tuple[httpx.Response, dict[str, Any]]:
    return call(
        http, url, "two_questions", token, inputResponses=accept("elicitation2", color="blue"), requestState=state
    )


def test_a_request_state_is_refused_to_another_user_and_still_serves_its_own(authed: Spawned) -> None:
    with httpx.Client(timeout=TIMEOUT) as http:
        state = second_round(http, authed.url, ALICE)
        response, reply = finish(http, authed.url, BOB, state)  # Bob replays Alice's state with a token of his own
        assert (response.status_code, reply) == (
            400,
            wire.error(1, -32602, {"reason": "invalid_request_state", "detail": "mismatch"}),
        )
        response, reply = finish(http, authed.url, ALICE, state)
        assert response.status_code == 200
        assert reply["result"]["content"] == [{"type": "text", "text": "Ada likes blue (asked by alice)"}]


def test_without_auth_a_request_state_serves_whoever_presents_it(open_app: Spawned) -> None:
    with httpx.Client(timeout=TIMEOUT) as http:
        state = second_round(http, open_app.url, None)
        response, reply = finish(http, open_app.url, None, state)
    assert response.status_code == 200
    assert reply["result"]["content"] == [{"type": "text", "text": "Ada likes blue (asked by nobody)"}]


def jwt_with_odd_scopes() -> str:
    now = int(time.time())
    claims = {"iss": APP.ISSUER, "aud": APP.AUDIENCE, "sub": "odd-jwt", "exp": now + 600, "scp": sorted(APP.ODD_SCOPES)}
    return jwt.encode(claims, APP.JWT_KEY, algorithm="HS256")


@pytest.mark.parametrize("token", ["custom verifier", "JWTVerifier"])
def test_scopes_a_header_cannot_carry_never_reach_the_challenge(authed: Spawned, token: str) -> None:
    bearer = ODD if token == "custom verifier" else jwt_with_odd_scopes()
    with httpx.Client(timeout=TIMEOUT) as http:
        response, reply = call(http, authed.url, "admin_only", bearer)
        assert (response.status_code, reply) == (403, wire.error(1, -32600))
        challenge = response.headers["www-authenticate"]
        assert challenge.startswith('Bearer error="insufficient_scope", scope="')
        scope = challenge.split('scope="', 1)[1].split('"', 1)[0]
        assert SCOPE.fullmatch(scope), scope
        assert scope == "admin tools"  # what the tool needs and what the token holds that a header can carry
        assert not {"\r", "\n"} & set(challenge)
        assert "Set-Cookie" not in challenge
        assert "set-cookie" not in response.headers
        # The connection is still good: the next request on it is served.
        response, reply = call(http, authed.url, "admin_only", ALICE)
        assert response.status_code == 403
