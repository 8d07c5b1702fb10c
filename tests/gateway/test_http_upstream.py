"""Mounting a Streamable HTTP endpoint (uvicorn in a child process): calls and progress go through, in both
downstream eras; its credentials (headers) reach it and never the log or an error."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import pytest
from asgi_servers import Spawned
from servers.asking_app import ALICE

from toolkit import Client, Server

pytestmark = pytest.mark.anyio


@pytest.fixture
def http_upstream() -> Iterator[Spawned]:
    server = Spawned("uvicorn-one")
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
def authed_upstream() -> Iterator[Spawned]:
    server = Spawned("uvicorn-one", app="authed", module="asking_app", token=ALICE)
    try:
        yield server
    finally:
        server.close()


@pytest.mark.parametrize("protocol", ["2026-07-28", "handshake"])
async def test_an_http_upstreams_calls_and_progress_go_through(http_upstream: Spawned, protocol: Any) -> None:
    server = Server("gateway")
    server.mount(http_upstream.url, prefix="remote")
    seen: list[float] = []
    async with Client(server, protocol=protocol) as client:
        names = [t.name for t in await client.list_tools()]
        added = await client.call_tool("remote_add", {"a": 20, "b": 22})
        ticked = await client.call_tool("remote_ticks", {"count": 2}, progress=lambda done, total, _: seen.append(done))
    assert names == ["remote_add", "remote_ticks", "remote_worker"]
    assert added.text == "42"
    assert ticked.text == "2 ticks"
    assert seen == [1, 2]


async def test_an_http_upstreams_headers_reach_it_and_never_the_log(
    authed_upstream: Spawned, caplog: pytest.LogCaptureFixture
) -> None:
    allowed = Server("gateway")
    allowed.mount(authed_upstream.url, headers={"Authorization": f"Bearer {ALICE}"}, tools=["admin_only"])
    wrong = "wrong-token-that-must-not-leak"
    refused = Server("gateway")
    refused.mount(authed_upstream.url, headers={"Authorization": f"Bearer {wrong}"}, connect_timeout=5)
    with caplog.at_level(logging.DEBUG):
        async with Client(allowed) as client:
            names = [t.name for t in await client.list_tools()]
            denied = await client.call_tool("admin_only")  # alice lacks the admin scope the upstream asks for
        async with Client(refused) as client:
            assert await client.list_tools() == []
    assert names == ["admin_only"]
    assert denied.is_error
    assert ALICE not in denied.text
    assert "is down: cannot connect" in caplog.text
    assert wrong not in caplog.text
    assert ALICE not in caplog.text
