"""MCP Apps on the wire (`io.modelcontextprotocol/ui`): a tool's page served on `resources/list` and
`resources/read`, the extension advertised to clients that declare it, app-only tools kept from the others; in both
eras, over memory and stdio (every message checked against the official schema, `wire.py`), and over HTTP."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import httpx
import pytest
import servers
import wire
from servers.apps_demo import PAGE
from wire import CAPABILITIES_KEY, error, meta

from toolkit import UI, Client, ProtocolError, Server, StreamingASGITransport, tool

pytestmark = pytest.mark.anyio

EXTENSION = "io.modelcontextprotocol/ui"
MIME = "text/html;profile=mcp-app"
APPS = {"extensions": {EXTENSION: {"mimeTypes": [MIME]}}}
PAGE_META = {
    "ui": {
        "csp": {"resourceDomains": ["https://cdn.example.com"], "connectDomains": ["https://api.example.com"]},
        "permissions": {"clipboardWrite": {}},
        "prefersBorder": True,
    }
}
RESOURCE = {
    "uri": "ui://apps-demo/table",
    "name": "apps-demo/table",
    "description": "The rows, as a table",
    "mimeType": MIME,
    "_meta": PAGE_META,
}
CONTENTS = {"uri": "ui://apps-demo/table", "mimeType": MIME, "text": PAGE.html, "_meta": PAGE_META}
OpenPeer = Callable[[], AbstractAsyncContextManager[wire.Peer]]


@pytest.fixture(params=["memory", "stdio"])
def open_peer(request: pytest.FixtureRequest, anyio_backend: str) -> OpenPeer:
    """`async with open_peer() as peer`: a raw peer on a fresh apps demo server, in memory or over stdio."""

    def opened() -> AbstractAsyncContextManager[wire.Peer]:
        if request.param == "memory":
            return wire.memory(servers.build(servers.APPS_DEMO))
        return wire.stdio([sys.executable, str(servers.APPS_DEMO), "--backend", anyio_backend])

    return opened


def one() -> int:
    """One."""
    return 1


def modern(capabilities: dict[str, Any]) -> dict[str, Any]:
    return {"_meta": {**meta(), CAPABILITIES_KEY: capabilities}}


async def test_a_handshake_client_with_the_extension_gets_it_the_pages_and_the_app_only_tool(
    open_peer: OpenPeer,
) -> None:
    async with open_peer() as peer:
        initialized = await peer.initialize(capabilities=APPS)
        tools = await peer.result("tools/list", {})
        listed = await peer.result("resources/list", {})
        read = await peer.result("resources/read", {"uri": "ui://apps-demo/table"})
        refreshed = await peer.call("refresh", {"rows": 1})

    assert initialized["capabilities"] == {
        "tools": {"listChanged": True},
        "logging": {},
        "resources": {},
        "extensions": {EXTENSION: {}},
    }
    assert [(t["name"], t.get("_meta")) for t in tools["tools"]] == [
        ("table", {"ui/resourceUri": "ui://apps-demo/table", "ui": {"resourceUri": "ui://apps-demo/table"}}),
        (
            "refresh",
            {
                "ui/resourceUri": "ui://apps-demo/table",
                "ui": {"resourceUri": "ui://apps-demo/table", "visibility": ["app"]},
            },
        ),
        ("add", None),
    ]
    assert listed == {"resources": [RESOURCE]}
    assert read == {"contents": [CONTENTS]}
    assert refreshed["result"]["structuredContent"] == {"rows": [{"n": 0, "square": 0}]}


async def test_a_handshake_client_without_it_gets_the_same_pages_and_tools_but_no_app_only_tool(
    open_peer: OpenPeer,
) -> None:
    async with open_peer() as peer:
        initialized = await peer.initialize()
        tools = await peer.result("tools/list", {})
        listed = await peer.result("resources/list", {})
        table = await peer.call("table", {"rows": 1})
        refused = await peer.call("refresh", id=9)

    assert initialized["capabilities"] == {"tools": {"listChanged": True}, "logging": {}, "resources": {}}
    assert [t["name"] for t in tools["tools"]] == ["table", "add"]
    assert listed == {"resources": [RESOURCE]}
    # The text a model reads is there whoever asks: a page never replaces it.
    assert table["result"]["content"] == [{"type": "text", "text": '{"rows":[{"n":0,"square":0}]}'}]
    assert refused["error"]["code"] == -32602  # an unknown tool, to this client


async def test_a_2026_07_28_client_is_served_the_same_per_request(open_peer: OpenPeer) -> None:
    async with open_peer() as peer:
        discovered = await peer.result("server/discover", modern(APPS))
        plain = await peer.result("server/discover", modern({}))
        with_apps = await peer.result("tools/list", modern(APPS))
        without = await peer.result("tools/list", modern({}))
        listed = await peer.result("resources/list", modern({}))
        read = await peer.result("resources/read", {"uri": "ui://apps-demo/table", **modern(APPS)})
        called = await peer.request("tools/call", {"name": "refresh", **modern(APPS)})
        refused = await peer.request("tools/call", {"name": "refresh", **modern({})})

    assert discovered["capabilities"]["extensions"] == {EXTENSION: {}}
    assert "extensions" not in plain["capabilities"]
    assert discovered["capabilities"]["resources"] == plain["capabilities"]["resources"] == {}
    assert [t["name"] for t in with_apps["tools"]] == ["table", "refresh", "add"]
    assert [t["name"] for t in without["tools"]] == ["table", "add"]
    info = {wire.SERVER_INFO_KEY: {"name": "apps-demo", "version": "1.0.0"}}
    cache = {"ttlMs": 0, "cacheScope": "public", "resultType": "complete", "_meta": info}
    assert listed == {"resources": [RESOURCE], **cache}
    assert read == {"contents": [CONTENTS], **cache}
    assert called["result"]["structuredContent"] == {"rows": [{"n": n, "square": n * n} for n in range(3)]}
    assert refused["error"]["code"] == -32602


async def test_an_unknown_page_is_resource_not_found_in_each_eras_code(open_peer: OpenPeer) -> None:
    async with open_peer() as peer:
        await peer.initialize(capabilities=APPS)
        handshake = await peer.request("resources/read", {"uri": "ui://apps-demo/nothing"}, id=2)
        stateless = await peer.request("resources/read", {"uri": "ui://apps-demo/nothing", **modern(APPS)}, id=3)
        no_uri = await peer.request("resources/read", {"uri": 7}, id=4)

    # 2025-11-25 server/resources: -32002; 2026-07-28 folds it into -32602 (and forbids -32002).
    assert handshake == error(2, -32002, {"uri": "ui://apps-demo/nothing"})
    assert stateless == error(3, -32602, {"uri": "ui://apps-demo/nothing"})
    assert no_uri == error(4, -32602)


@pytest.mark.parametrize(
    "method", ["resources/templates/list", "resources/subscribe", "prompts/list", "prompts/get", "completion/complete"]
)
async def test_every_other_resource_and_prompt_method_is_still_not_found(open_peer: OpenPeer, method: str) -> None:
    async with open_peer() as peer:
        await peer.initialize(capabilities=APPS)
        handshake = await peer.request(method, {"uri": "ui://apps-demo/table"}, id=2)
        stateless = await peer.request(method, {"uri": "ui://apps-demo/table", **modern(APPS)}, id=3)

    assert (handshake, stateless) == (error(2, -32601), error(3, -32601))


async def test_the_pages_are_paged_as_tools_are() -> None:
    first, second = UI("ui://p/one", "<p>1</p>"), UI("ui://p/two", "<p>2</p>")
    server = Server("paged", page_size=1, tools=[tool(name="a", ui=first)(one), tool(name="b", ui=second)(one)])
    async with wire.memory(server) as peer:
        await peer.initialize()
        page = await peer.result("resources/list", {})
        rest = await peer.result("resources/list", {"cursor": page["nextCursor"]})
        bad = await peer.request("resources/list", {"cursor": "nope"}, id=9)

    assert [r["uri"] for r in page["resources"] + rest["resources"]] == ["ui://p/one", "ui://p/two"]
    assert "nextCursor" not in rest
    assert bad == error(9, -32602)


# -- toolkit's Client, in memory and over HTTP -----------------------------------------------------------------


@asynccontextmanager
async def http_client(server: Server, **options: Any) -> AsyncIterator[Client]:
    transport = StreamingASGITransport(server.http_app())
    async with (
        server.running(),
        httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8000") as http,
        Client.http("http://127.0.0.1:8000/mcp", http_client=http, **options) as client,
    ):
        yield client


@pytest.mark.parametrize("protocol", ["handshake", "2026-07-28"])
@pytest.mark.parametrize("over", ["memory", "http"])
async def test_the_client_reads_a_page_and_calls_the_app_only_tool_when_it_declares_apps(
    protocol: Any, over: str
) -> None:
    server = servers.build(servers.APPS_DEMO)
    opened = (
        Client(server, apps=True, protocol=protocol)
        if over == "memory"
        else http_client(server, apps=True, protocol=protocol)
    )
    async with opened as client:
        resources = await client.list_resources()
        [contents] = await client.read_resource("ui://apps-demo/table")
        names = [t.name for t in await client.list_tools()]
        refreshed = await client.call_tool("refresh", {"rows": 1})
        extensions = client.capabilities.get("extensions")

    assert resources == [RESOURCE]
    assert contents.model_dump(by_alias=True, exclude_none=True) == CONTENTS
    assert names == ["table", "refresh", "add"]
    assert refreshed.structured_content == {"rows": [{"n": 0, "square": 0}]}
    assert extensions == {EXTENSION: {}}


@pytest.mark.parametrize("protocol", ["handshake", "2026-07-28"])
@pytest.mark.parametrize("over", ["memory", "http"])
async def test_a_client_without_apps_never_sees_the_app_only_tool(protocol: Any, over: str) -> None:
    server = servers.build(servers.APPS_DEMO)
    opened = Client(server, protocol=protocol) if over == "memory" else http_client(server, protocol=protocol)
    async with opened as client:
        names = [t.name for t in await client.list_tools()]
        with pytest.raises(ProtocolError) as refused:
            await client.call_tool("refresh")
        table = await client.call_tool("table", {"rows": 1})

    assert names == ["table", "add"]
    assert refused.value.code == -32602
    assert table.text == '{"rows":[{"n":0,"square":0}]}'


async def test_a_server_without_pages_still_refuses_resources() -> None:
    async with Client(Server("plain", tools=[tool(one)]), apps=True) as client:
        with pytest.raises(ProtocolError) as refused:
            await client.list_resources()
        capabilities = client.capabilities

    assert refused.value.code == -32601
    assert capabilities == {"tools": {"listChanged": True}, "logging": {}}


@pytest.mark.parametrize("protocol", ["handshake", "2026-07-28"])
async def test_a_page_of_a_tool_the_filter_hides_is_as_unknown_as_the_tool(protocol: Any) -> None:
    shown_page, hidden_page = UI("ui://f/shown", "<p>shown</p>"), UI("ui://f/hidden", "<p>hidden</p>")
    server = Server(
        "filtered",
        tools=[tool(name="shown", ui=shown_page)(one), tool(name="hidden", ui=hidden_page)(one)],
        tool_filter=lambda definition, request: definition.name != "hidden",
    )
    async with Client(server, apps=True, protocol=protocol) as client:
        listed = [resource["uri"] for resource in await client.list_resources()]
        [page] = await client.read_resource("ui://f/shown")
        with pytest.raises(ProtocolError) as refused:
            await client.read_resource("ui://f/hidden")

    assert listed == ["ui://f/shown"]
    assert page.uri == "ui://f/shown"
    assert refused.value.code == (-32602 if protocol == "2026-07-28" else -32002)
