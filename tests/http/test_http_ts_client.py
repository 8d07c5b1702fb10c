"""The TypeScript SDK's Streamable HTTP client (`@modelcontextprotocol/sdk`, pinned in tests/conformance) against
`toolkit serve --http`. The TypeScript SDK speaks up to 2025-11-25 only: no client for 2026-07-28 exists on npm, so
that era is covered by the conformance suite's own stateless client (test_conformance.py) and the Python SDK.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import servers
from served import Served, run_node_script

DEMO = servers.HTTP_DEMO


@pytest.fixture(scope="module")
def served() -> Iterator[Served]:
    server = Served(DEMO)
    yield server
    server.close()


def test_the_typescript_sdk_client_speaks_to_toolkit(served: Served) -> None:
    assert run_node_script("ts_client.mjs", served.url) == {
        "protocolVersion": "2025-11-25",
        "session": True,
        "tools": ["add", "steps", "worker"],
        "add": [{"type": "text", "text": "3"}],
        "steps": [{"type": "text", "text": "2 steps"}],
        "progress": [1, 2],
        "logs": ["stepped"],
    }
