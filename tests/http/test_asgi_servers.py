"""`app = server.http_app()` at module level under the ASGI servers a deployment picks: uvicorn with two workers,
gunicorn with uvicorn's worker class (the `uvicorn-worker` package) and with its own `asgi` worker, hypercorn and
granian (ASGI interface), each on 127.0.0.1 with two workers, driven by `Client.http` in both eras.

The command lines are those of docs/deploy.md (tests/asgi_servers.py). Each server starts once for this module
and must stop on SIGTERM to its supervisor with no traceback in its output.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anyio
import pytest
from asgi_servers import SERVERS, TIMEOUT, Spawned

from toolkit import Client

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module", params=sorted(SERVERS))
def spawned(request: pytest.FixtureRequest) -> Iterator[Spawned]:
    server = Spawned(str(request.param))
    yield server
    output = server.close()
    assert "Traceback" not in output, output


@pytest.mark.parametrize("protocol", ["auto", "handshake"])
async def test_a_module_level_app_serves_both_eras(spawned: Spawned, protocol: Any) -> None:
    with anyio.fail_after(TIMEOUT):
        async with Client.http(spawned.url, protocol=protocol) as client:
            assert client.protocol_version == ("2026-07-28" if protocol == "auto" else "2025-11-25")
            assert [t.name for t in await client.list_tools()] == ["add", "ticks", "worker"]
            result = await client.call_tool("add", {"a": 2, "b": 40})
            bare = {"structuredContent": 42} if protocol == "auto" else {}  # 2026-07-28 sends an int bare too
            assert result.model_dump(mode="json", by_alias=True, exclude_none=True) == {
                "content": [{"type": "text", "text": "42"}],
                **bare,
                "isError": False,
            }
            seen: list[float] = []
            result = await client.call_tool("ticks", {"count": 3}, progress=lambda p, t, m: seen.append(p))
            assert (result.text, seen) == ("3 ticks", [1, 2, 3])
