"""Mounting a server nobody here wrote: the official Python SDK's `MCPServer` (tests/interop/sdk_server.py) over
stdio and over Streamable HTTP, in each upstream era, called by clients of both eras; results are what the SDK
server sends when called directly, progress goes through, and a cancelled call leaves the gateway serving."""

from __future__ import annotations

import logging
from typing import Any

import anyio
import pytest
from test_interop_sdk import SDK_SERVER, sdk_http_url  # noqa: F401  (the SDK server, and its HTTP app as a fixture)

from toolkit import Client, Server

pytestmark = pytest.mark.anyio

TIMEOUT = 60  # one test, to its end; a probe of an SDK server in `auto` alone waits 10 s of its silence
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("add", {"a": 2, "b": 3}),
    ("point", {"x": 1, "y": 2}),
    ("fail", {"reason": "no"}),
    ("echo", {"text": "héllo"}),
]


def wire(result: Any) -> dict[str, Any]:
    dumped: dict[str, Any] = result.model_dump(mode="json", by_alias=True, exclude_none=True)
    return dumped


@pytest.mark.parametrize("upstream_era", ["auto", "handshake"])
@pytest.mark.parametrize("client_era", ["2026-07-28", "handshake"])
async def test_an_sdk_server_over_stdio_is_served_as_when_called_directly(upstream_era: Any, client_era: Any) -> None:
    gateway = Server("gateway")
    gateway.mount(SDK_SERVER, prefix="sdk", protocol=upstream_era)
    reports: list[float] = []
    with anyio.fail_after(TIMEOUT):
        async with (
            Client(gateway, protocol=client_era) as client,
            Client.stdio(SDK_SERVER, protocol=upstream_era, validate_output=False) as direct,
        ):
            mounted = {t.name: t for t in await client.list_tools()}
            for tool in await direct.list_tools():
                assert mounted[f"sdk_{tool.name}"] == tool.model_copy(update={"name": f"sdk_{tool.name}"})
            for name, arguments in CALLS:
                assert wire(await client.call_tool(f"sdk_{name}", arguments)) == wire(
                    await direct.call_tool(name, arguments)
                )
            counted = await client.call_tool("sdk_count", {"steps": 2}, progress=lambda done, *_: reports.append(done))
    assert counted.text == "counted 2"
    assert reports == [1, 2]


async def test_a_cancelled_call_of_an_sdk_server_leaves_the_gateway_serving() -> None:
    gateway = Server("gateway", tool_timeout=1)
    gateway.mount(SDK_SERVER)
    with anyio.fail_after(TIMEOUT):
        async with Client(gateway) as client:
            blocked = await client.call_tool("block")
            added = await client.call_tool("add", {"a": 1, "b": 1})
    assert blocked.is_error
    assert added.text == "2"


@pytest.mark.parametrize("upstream_era", ["auto", "handshake"])
async def test_an_sdk_server_over_http_is_served_through_the_gateway(sdk_http_url: str, upstream_era: Any) -> None:  # noqa: F811
    gateway = Server("gateway")
    gateway.mount(sdk_http_url, protocol=upstream_era)
    reports: list[float] = []
    with anyio.fail_after(TIMEOUT):
        async with Client(gateway, protocol="2026-07-28") as client:
            added = await client.call_tool("add", {"a": 2, "b": 3})
            point = await client.call_tool("point", {"x": 1, "y": 2})
            counted = await client.call_tool("count", {"steps": 2}, progress=lambda done, *_: reports.append(done))
    assert added.text == "5"
    assert point.structured_content == {"x": 1, "y": 2}
    assert counted.text == "counted 2"
    assert reports == [1, 2]


async def test_an_sdk_servers_log_messages_reach_the_gateways_log(caplog: pytest.LogCaptureFixture) -> None:
    gateway = Server("gateway")
    gateway.mount(SDK_SERVER)
    with caplog.at_level(logging.DEBUG, logger="toolkit.gateway"), anyio.fail_after(TIMEOUT):
        async with Client(gateway) as client:
            result = await client.call_tool("chatty")
    assert result.text == "logged"
    assert f"upstream {' '.join(SDK_SERVER)}: warning message" in caplog.text
