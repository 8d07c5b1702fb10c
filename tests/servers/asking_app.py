"""Tools that ask the client, behind bearer auth or none, served on real workers (tests/asgi_servers.py) by
tests/http/test_http_auth_workers.py: `authed` (auth=) and `app` (none), at module level as a deployment writes them.

The server is named `http-app` 1.0.0, as tests/servers/http_app.py is, so that the servers' health probe knows it.
`MCP_SECRET` (set by tests/asgi_servers.py) and, when set, `MCP_SESSION_STORE` come from the environment
(docs/deploy.md); the tests import the tokens from here.

Tokens: `alice-...` and `bob-...` through a plain verifier function; `odd-...` has scopes no header may carry;
a JWT (HS256, `JWT_KEY` below) goes to `JWTVerifier`, whose scopes come from the token's `scp`.
"""

from __future__ import annotations

import os
from typing import Any

from toolkit import Context, Form, Identity, JWTVerifier, Server, SqliteSessionStore

ALICE = "alice-token-0123456789"
BOB = "bob-token-0123456789abc"
ODD = "odd-token-0123456789abc"
ODD_SCOPES = frozenset({"tools", 'say"hi', "line\r\nSet-Cookie: x=1", "tab\there", "caf\u00e9"})
JWT_KEY = "a shared HMAC key for the test JWTs, 32+ bytes"
ISSUER = "https://idp.example.com/"
AUDIENCE = "https://mcp.example.com/mcp"
NAME = Form({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]})
COLOR = Form({"type": "object", "properties": {"color": {"type": "string"}}, "required": ["color"]})

server = Server("http-app", version="1.0.0")


@server.tool
async def two_questions(ctx: Context) -> str:
    """Ask a name, then a colour, and say who asked."""
    name = await ctx.elicit("Your name?", NAME)
    color = await ctx.elicit("Your colour?", COLOR)
    who = ctx.identity.subject if ctx.identity is not None else "nobody"
    assert name.data is not None
    assert color.data is not None
    return f"{name.data['name']} likes {color.data['color']} (asked by {who})"


@server.tool(confirm="Really purge?")
def purge() -> str:
    """Confirmed before it runs."""
    return "purged"


@server.tool
def admin_only() -> str:
    """Needs the admin scope."""
    return "done"


_jwt = JWTVerifier(issuer=ISSUER, key=JWT_KEY, algorithms=["HS256"], audience=AUDIENCE)
_tokens = {
    ALICE: Identity("alice", frozenset({"tools"})),
    BOB: Identity("bob", frozenset({"tools"})),
    ODD: Identity("odd", ODD_SCOPES),
}


async def verify(token: str) -> Identity | None:
    """A custom verifier for the plain tokens; JWTs go to `JWTVerifier`."""
    if token.startswith("eyJ"):
        return await _jwt.verify(token)
    return _tokens.get(token)


_store = os.environ.get("MCP_SESSION_STORE")
_options: dict[str, Any] = {
    "secret": os.environ.get("MCP_SECRET"),
    "session_store": SqliteSessionStore(_store) if _store else None,
}
app = server.http_app(**_options)
authed = server.http_app(
    auth=verify,
    authorization_servers=[ISSUER],
    scopes_supported=["tools", "admin"],
    required_scopes={"admin_only": {"admin"}},
    **_options,
)
