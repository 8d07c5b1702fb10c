"""Protocol details from an audit against the spec: ids in flight, subscriptions at end of input, error texts.

Every message the server sends is validated against the official schema of its revision (see `wire.py`).
"""

from __future__ import annotations

import re
from typing import Any

import pytest
import wire
from wire import SUBSCRIPTION_KEY, error, meta

from toolkit import Client, Server

pytestmark = pytest.mark.anyio


def modern(request_id: Any, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    """A 2026-07-28 request (its `params._meta` names the revision and the client's capabilities)."""
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": {**(params or {}), "_meta": meta()}}


# -- an id already in flight ---------------------------------------------------------------------------------


async def test_a_request_reusing_an_id_in_flight_is_refused_whatever_its_method(connect: wire.Connect) -> None:
    async with connect() as peer:
        await peer.initialize()
        await peer.start_call("block", {"key": "k"}, id="x", _meta={"progressToken": 1})
        started = await peer.receive()
        refused = [
            await peer.request("ping", id="x"),
            await peer.request("tools/list", id="x"),
            await peer.request("tools/call", {"name": "echo", "arguments": {"text": "hi"}}, id="x"),
            await peer.request("logging/setLevel", {"level": "debug"}, id="x"),
            await peer.request("server/discover", {"_meta": meta()}, id="x"),
        ]
        await peer.send([{"jsonrpc": "2.0", "id": "x", "method": "ping"}])
        in_batch = await peer.receive()
        await peer.notify("notifications/cancelled", {"requestId": "x"})
        echoed = await peer.request("tools/call", {"name": "echo", "arguments": {"text": "hi"}}, id="y")
        pong = await peer.request("ping", id="y")  # only ids in flight are refused, not ids used before

    assert started["method"] == "notifications/progress"
    assert refused == [error("x", -32600)] * 5
    # The connection speaks 2025-11-25, which has no batches: the whole array is refused, nothing is answered twice.
    assert in_batch == error(None, -32600)
    assert "result" in echoed
    assert pong == {"jsonrpc": "2.0", "id": "y", "result": {}}


async def test_a_batch_request_reusing_an_id_in_flight_is_refused(anyio_backend: str) -> None:
    async with wire.connect("stdio", anyio_backend) as peer:
        await peer.initialize("2025-03-26")
        await peer.start_call("wait", {"key": "g"}, id=7)
        batch = [{"jsonrpc": "2.0", "id": 7, "method": "ping"}, {"jsonrpc": "2.0", "id": 8, "method": "ping"}]
        await peer.send(batch)
        replies = await peer.receive()
        opened = await peer.call("open", {"key": "g"})
        waited = await peer.receive()

    assert sorted(replies, key=lambda r: r["id"]) == [error(7, -32600), {"jsonrpc": "2.0", "id": 8, "result": {}}]
    assert opened["result"]["content"][0]["text"] == "g"
    assert (waited["id"], waited["result"]["content"][0]["text"]) == (7, "g")


# -- subscriptions at end of input ---------------------------------------------------------------------------


async def test_at_end_of_input_each_open_listen_stream_is_told_it_ended(anyio_backend: str) -> None:
    async with wire.connect("stdio", anyio_backend) as peer:
        await peer.send(modern("sub-1", "subscriptions/listen", {"notifications": {"toolsListChanged": True}}))
        first = await peer.receive()
        await peer.send(modern(2, "subscriptions/listen", {"notifications": {}}))
        second = await peer.receive()
        await peer.close_input()
        rest = await peer.rest()
        code = await peer.wait_closed()

    assert [first["params"]["_meta"], second["params"]["_meta"]] == [{SUBSCRIPTION_KEY: "sub-1"}, {SUBSCRIPTION_KEY: 2}]
    ended = {"jsonrpc": "2.0", "method": "notifications/cancelled"}
    reason = "the server's input ended"
    assert sorted(rest, key=lambda m: str(m["params"]["requestId"])) == [
        {**ended, "params": {"requestId": 2, "reason": reason, "_meta": {SUBSCRIPTION_KEY: 2}}},
        {**ended, "params": {"requestId": "sub-1", "reason": reason, "_meta": {SUBSCRIPTION_KEY: "sub-1"}}},
    ]
    assert code == 0


async def test_a_listen_stream_the_client_cancelled_gets_nothing_at_end_of_input(anyio_backend: str) -> None:
    async with wire.connect("stdio", anyio_backend) as peer:
        await peer.send(modern(1, "subscriptions/listen", {"notifications": {"toolsListChanged": True}}))
        await peer.receive()
        await peer.notify("notifications/cancelled", {"requestId": 1})
        probe = await peer.request("server/discover", {"_meta": meta()})
        await peer.close_input()
        rest = await peer.rest()

    assert "result" in probe
    assert rest == []


# -- error texts ---------------------------------------------------------------------------------------------

SENTENCE = re.compile(r"\S(.*\S)?")  # no leading or trailing whitespace
RUN_ON = re.compile(r"[a-z] (batches|id|params|method) ")  # two clauses glued without a separator


@pytest.mark.parametrize(
    ("version", "text"),
    [
        ("2025-11-25", "[1, 2]"),
        ("2025-11-25", "42"),
        ("2025-11-25", '"text"'),
        ("2025-11-25", "[]"),
        ("2025-03-26", "[]"),
        ("2025-03-26", "[1]"),
        ("2025-11-25", "{"),
        ("2025-11-25", '{"jsonrpc": "1.0", "id": 1, "method": "ping"}'),
        ("2025-11-25", '{"jsonrpc": "2.0", "id": 1, "method": 5}'),
        ("2025-11-25", '{"jsonrpc": "2.0", "id": 1.5, "method": "ping"}'),
        ("2025-11-25", '{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": [1]}'),
        ("2025-11-25", '{"jsonrpc": "2.0", "id": 1, "method": "nope"}'),
        ("2025-11-25", '{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "nope"}}'),
    ],
)
async def test_every_error_text_is_one_clean_sentence(connect: wire.Connect, version: str, text: str) -> None:
    async with connect() as peer:
        await peer.initialize(version)
        await peer.send_text(text)
        reply = await peer.receive()

    message = reply[0]["error"]["message"] if isinstance(reply, list) else reply["error"]["message"]
    assert SENTENCE.fullmatch(message), repr(message)
    assert not RUN_ON.search(message), repr(message)
    assert "  " not in message, repr(message)


async def test_a_batch_where_batches_do_not_exist_says_both_things_apart(connect: wire.Connect) -> None:
    async with connect() as peer:
        await peer.initialize()
        await peer.send_text('[{"jsonrpc": "2.0", "id": 1, "method": "ping"}]')
        batch = await peer.receive()
        await peer.send_text("42")
        scalar = await peer.receive()

    assert batch == error(None, -32600)
    assert (
        batch["error"]["message"]
        == "Invalid request: expected an object; batches are not supported by this protocol version"
    )
    assert scalar["error"]["message"] == "Invalid request: expected an object"


# -- the server's Implementation -----------------------------------------------------------------------------

ICON = {"src": "https://example.com/icon.png", "mimeType": "image/png", "sizes": ["48x48"]}
FULL_INFO = {
    "name": "described",
    "version": "2.0",
    "title": "Described server",
    "description": "Serves tools, with a description.",
    "icons": [ICON],
    "websiteUrl": "https://example.com",
}


def described_server() -> Server:
    return Server(
        "described",
        version="2.0",
        title="Described server",
        description="Serves tools, with a description.",
        icons=[ICON],
        website_url="https://example.com",
    )


@pytest.mark.parametrize(
    ("version", "expected"),
    [
        ("2025-11-25", FULL_INFO),
        ("2025-06-18", {"name": "described", "version": "2.0", "title": "Described server"}),
        ("2025-03-26", {"name": "described", "version": "2.0"}),
        ("2024-11-05", {"name": "described", "version": "2.0"}),
    ],
)
async def test_server_info_carries_every_field_the_revision_defines(version: str, expected: dict[str, Any]) -> None:
    async with wire.memory(described_server()) as peer:
        result = await peer.initialize(version)

    assert result["serverInfo"] == expected


async def test_2026_07_28_results_and_discovery_carry_the_full_server_info() -> None:
    async with wire.memory(described_server()) as peer:
        await peer.send(modern(1, "server/discover"))
        discovered = await peer.receive()
        await peer.send(modern(2, "tools/list"))
        listed = await peer.receive()

    assert discovered["result"]["_meta"] == {wire.SERVER_INFO_KEY: FULL_INFO}
    assert listed["result"]["_meta"] == {wire.SERVER_INFO_KEY: FULL_INFO}


async def test_the_client_sees_the_servers_description_icons_and_website() -> None:
    async with Client(described_server()) as client:
        info = client.server_info

    assert info is not None
    assert info.model_dump(mode="json", by_alias=True, exclude_none=True) == FULL_INFO


# -- what toolkit covers: tools only -------------------------------------------------------------------------

NOT_SERVED = [
    "resources/list",
    "resources/read",
    "resources/templates/list",
    "resources/subscribe",
    "prompts/list",
    "prompts/get",
    "completion/complete",
]


async def test_a_server_declares_only_tools_and_logging_and_refuses_resources_and_prompts(
    connect: wire.Connect,
) -> None:
    async with connect() as peer:
        initialized = await peer.initialize()
        handshake = [await peer.request(method, {}) for method in NOT_SERVED]
        discovered = await peer.request("server/discover", {"_meta": meta()})
        stateless = [await peer.request(method, {"_meta": meta()}) for method in NOT_SERVED]

    assert sorted(initialized["capabilities"]) == sorted(discovered["result"]["capabilities"]) == ["logging", "tools"]
    assert [reply["error"]["code"] for reply in handshake + stateless] == [-32601] * 2 * len(NOT_SERVED)
