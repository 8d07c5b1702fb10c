"""An upstream behind OAuth 2.0 client credentials, and its token endpoint, in one ASGI app (`app`) for uvicorn:
`POST /token` issues tokens to the client `gateway` (HTTP Basic, secret `CLIENT_SECRET`), `/mcp` accepts the tokens
it issued. `whoami` says which token a call came with; `revoke` forgets every token issued, so that the next
request is answered 401. Named `http-app` 1.0.0, and it accepts `PROBE`, for the test servers' health probe.
"""

from __future__ import annotations

import base64
import json
import os
import secrets
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import parse_qs

from toolkit import Context, Identity, Server

CLIENT_ID = "gateway"
CLIENT_SECRET = "client-secret-that-must-not-leak-0123"
PROBE = "probe-token-0123456789"

server = Server("http-app", version="1.0.0")
issued: set[str] = set()


@server.tool
def whoami(ctx: Context) -> str:
    """The token this call came with."""
    return ctx.identity.subject if ctx.identity is not None else "nobody"


@server.tool
def revoke() -> str:
    """Forget every token issued."""
    issued.clear()
    return "revoked"


async def verify(token: str) -> Identity | None:
    if token == PROBE or token in issued:
        return Identity(token, frozenset())
    return None


mcp = server.http_app(
    auth=verify, authorization_servers=["https://auth.example.com"], secret=os.environ.get("MCP_SECRET")
)

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]


async def _token(scope: Scope, receive: Receive, send: Send) -> None:
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    headers = dict(scope["headers"])
    expected = "Basic " + base64.b64encode(f"{CLIENT_ID}:{CLIENT_SECRET}".encode()).decode()
    form = parse_qs(body.decode())
    answer: dict[str, Any]
    if headers.get(b"authorization", b"").decode() != expected or form.get("grant_type") != ["client_credentials"]:
        status, answer = 401, {"error": "invalid_client"}
    else:
        token = f"token-{len(issued) + 1}-{secrets.token_hex(4)}"
        issued.add(token)
        status, answer = 200, {"access_token": token, "token_type": "Bearer", "expires_in": 3600}
    await send({"type": "http.response.start", "status": status, "headers": [(b"content-type", b"application/json")]})
    await send({"type": "http.response.body", "body": json.dumps(answer).encode()})


async def app(scope: Scope, receive: Receive, send: Send) -> None:
    if scope["type"] == "http" and scope["path"] == "/token":
        await _token(scope, receive, send)
    else:
        await mcp(scope, receive, send)
