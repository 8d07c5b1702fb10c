"""A gateway served over Streamable HTTP: its auth, per-tool scopes and rate limit apply to mounted tools as to its own
(the ASGI app in process)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
from servers import gateway_upstream

from toolkit import Client, Identity, ProtocolError, RateLimit, Server, StaticTokenVerifier, StreamingASGITransport

pytestmark = pytest.mark.anyio

URL = "http://127.0.0.1:8000/mcp"
USER = "user-token-0123456789abcdef"
ADMIN = "admin-token-0123456789abcdef"


@asynccontextmanager
async def served(app: Any, token: str, protocol: Any) -> AsyncIterator[Client]:
    async with (
        httpx.AsyncClient(transport=StreamingASGITransport(app)) as http,
        Client.http(URL, http_client=http, headers={"Authorization": f"Bearer {token}"}, protocol=protocol) as client,
    ):
        yield client


@pytest.mark.parametrize("protocol", ["2026-07-28", "handshake"])
async def test_the_gateways_scopes_and_rate_limit_apply_to_mounted_tools(protocol: Any) -> None:
    gateway = Server("gateway")
    gateway.mount(gateway_upstream(), prefix="up", tools=["add", "pid"])
    verifier = StaticTokenVerifier(
        {USER: Identity("user", frozenset({"tools"})), ADMIN: Identity("admin", frozenset({"tools", "admin"}))}
    )
    app = gateway.http_app(
        auth=verifier,
        authorization_servers=["https://auth.example.com"],
        required_scopes={"up_pid": {"admin"}},
        rate_limit=RateLimit(calls=3, per=60.0),
    )
    async with app.running():  # what the ASGI lifespan runs: the mounts connected once, for every request
        async with served(app, USER, protocol) as user:
            added = await user.call_tool("up_add", {"a": 1, "b": 2})
            with pytest.raises(ProtocolError, match="insufficient scope"):
                await user.call_tool("up_pid")
            await user.call_tool("up_add", {"a": 1, "b": 2})
            await user.call_tool("up_add", {"a": 1, "b": 2})  # the third call of the minute
            with pytest.raises(ProtocolError) as limited:
                await user.call_tool("up_add", {"a": 1, "b": 2})
        async with served(app, ADMIN, protocol) as admin:
            allowed = await admin.call_tool("up_pid")
    assert added.text == "3"
    assert "rate" in str(limited.value).lower()
    assert not allowed.is_error
