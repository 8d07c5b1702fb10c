"""Mounting `@modelcontextprotocol/server-everything` (the reference server of the TypeScript SDK, from npm, pinned in
tests/conformance/package.json, a 2025-11-25 server) over stdio: results as when called directly, progress, and its
questions (elicitation, sampling, roots) answered by clients of both eras, a 2026-07-28 client in input-required
rounds."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from served import CONFORMANCE, install_node

from toolkit import Client, ElicitRequest, ElicitResult, SampleRequest, SampleResult, Server

pytestmark = pytest.mark.anyio

TIMEOUT = 60
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("echo", {"message": "héllo"}),
    ("get-sum", {"a": 2, "b": 3}),
    ("get-tiny-image", {}),
    ("get-structured-content", {"location": "New York"}),
    ("get-annotated-message", {"messageType": "error", "includeImage": True}),
]


@pytest.fixture
def everything() -> list[str]:
    node = install_node()
    return [str(node), str(CONFORMANCE / "node_modules/@modelcontextprotocol/server-everything/dist/index.js"), "stdio"]


def wire(result: Any) -> dict[str, Any]:
    dumped: dict[str, Any] = result.model_dump(mode="json", by_alias=True, exclude_none=True)
    return dumped


@pytest.mark.parametrize("client_era", ["2026-07-28", "handshake"])
async def test_server_everything_is_served_as_when_called_directly(everything: list[str], client_era: Any) -> None:
    gateway = Server("gateway")
    gateway.mount(everything, prefix="ev")
    reports: list[float] = []
    with anyio.fail_after(TIMEOUT):
        async with (
            Client(gateway, protocol=client_era) as client,
            Client.stdio(everything, validate_output=False) as direct,
        ):
            for name, arguments in CALLS:
                assert wire(await client.call_tool(f"ev_{name}", arguments)) == wire(
                    await direct.call_tool(name, arguments)
                )
            long = await client.call_tool(
                "ev_trigger-long-running-operation",
                {"duration": 0.2, "steps": 2},
                progress=lambda done, *_: reports.append(done),
            )
    assert not long.is_error
    assert reports == [1, 2]


@pytest.mark.parametrize("client_era", ["2026-07-28", "handshake"])
async def test_server_everythings_questions_are_answered_by_the_client_in_its_era(
    everything: list[str], client_era: Any, tmp_path: Path
) -> None:
    asked: list[str] = []

    def elicit(request: ElicitRequest) -> ElicitResult[Any]:
        asked.append("elicitation")
        return ElicitResult.decline()

    def sample(request: SampleRequest) -> SampleResult:
        asked.append("sampling")
        return SampleResult.reply("a sampled answer")

    gateway = Server("gateway")
    gateway.mount(everything, prefix="ev")
    with anyio.fail_after(TIMEOUT):
        async with Client(
            gateway, protocol=client_era, elicitation_handler=elicit, sampling_handler=sample, roots=[tmp_path]
        ) as client:
            elicited = await client.call_tool("ev_trigger-elicitation-request")
            sampled = await client.call_tool("ev_trigger-sampling-request", {"prompt": "Say hi", "maxTokens": 20})
            roots = await client.call_tool("ev_get-roots-list")
    assert asked == ["elicitation", "sampling"]
    assert not elicited.is_error
    assert "decline" in elicited.text.lower()
    assert "a sampled answer" in sampled.text
    assert tmp_path.as_uri() in roots.text
