"""Memory stays flat over a long run of the HTTP app: thousands of calls in both eras, 2025-11-25 sessions opened
and ended, in process (`Client.http` on the streaming ASGI transport).

After every round (and a collection) two figures are taken: the blocks Python's small-object allocator holds
(`sys.getallocatedblocks()`: every object of 512 bytes or less, so any leak of small objects), and the process's
RSS (larger buffers too). The mean of the last `WINDOW` rounds is compared with the mean of the first ones after a
warm-up (caches, the allocator's pools and the client's first imports fill there). Nothing here is timed, and
nothing is traced, so the run costs what the calls cost.

The tolerances are generous and say what they catch, between the two windows (`CALLS_BETWEEN` calls and
`SESSIONS_BETWEEN` sessions): one small object leaked every 4 calls, or 6 per session (a forgotten session record
is more), grows the blocks by more than `BLOCKS`; 500 bytes per call held in large buffers grow RSS by more than
`RSS_KIB`. Measured on the reference machine (2 busy cores): blocks within +-150 of the first window, RSS within
25 KiB (the blocks rise and fall by 150 over three rounds, so a window is three rounds; nine rounds in all, four
between the windows: 1,192 calls and 48 sessions, `BLOCKS` 288 and `RSS_KIB` 582).
"""

from __future__ import annotations

import gc
import os
import statistics
import sys
from pathlib import Path

import anyio
import httpx
import pytest
from servers.http_demo import build as make_server  # the demo server: tests/servers/http_demo.py

from toolkit import Client, SqliteSessionStore, StreamingASGITransport

URL = "http://127.0.0.1:8000/mcp"
ROUNDS = 9
WARMUP = 2  # rounds before the first window
WINDOW = 3  # rounds in each window
MODERN_CALLS = 250  # per round, on one long-lived 2026-07-28 client (one of them streams progress)
SESSIONS = 12  # per round: 2025-11-25 sessions opened, called (one call streams progress) and ended (DELETE)
SESSION_CALLS = 4
CALLS = ROUNDS * (MODERN_CALLS + SESSIONS * SESSION_CALLS)
CALLS_BETWEEN = (ROUNDS - WARMUP - WINDOW) * (MODERN_CALLS + SESSIONS * SESSION_CALLS)
SESSIONS_BETWEEN = (ROUNDS - WARMUP - WINDOW) * SESSIONS
BLOCKS = min(CALLS_BETWEEN // 4, 6 * SESSIONS_BETWEEN)
RSS_KIB = 500 * CALLS_BETWEEN // 1024


def rss_kib() -> int:
    with open("/proc/self/statm", encoding="ascii") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024


async def calls(client: Client, count: int) -> int:
    seen: list[float] = []
    result = await client.call_tool("steps", {"count": 2}, progress=lambda p, t, m: seen.append(p))
    assert (result.text, seen) == ("2 steps", [1, 2])
    for i in range(count - 1):
        assert (await client.call_tool("add", {"a": i, "b": 1})).text == str(i + 1)
    return count


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RSS from /proc/self/statm")
@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # the server's memory is the subject: one backend
async def test_memory_is_flat_over_thousands_of_calls_and_sessions(tmp_path: Path) -> None:
    # Ended sessions go to a file: the in-process default keeps each for `session_ttl` by design (deploy.md).
    store = SqliteSessionStore(tmp_path / "sessions.db")
    app = make_server().http_app(secret="a secret of at least thirty-two bytes", session_store=store)
    blocks: list[int] = []
    rss: list[int] = []
    made = 0
    with anyio.fail_after(300):
        async with (
            httpx.AsyncClient(transport=StreamingASGITransport(app)) as http,
            Client.http(URL, http_client=http, protocol="2026-07-28") as modern,
        ):
            for _ in range(ROUNDS):
                made += await calls(modern, MODERN_CALLS)
                for _ in range(SESSIONS):
                    async with Client.http(URL, http_client=http, protocol="handshake") as legacy:
                        made += await calls(legacy, SESSION_CALLS)
                gc.collect()
                blocks.append(sys.getallocatedblocks())
                rss.append(rss_kib())
    assert made == CALLS
    report = [f"{b - blocks[WARMUP]:+d} blocks {r - rss[WARMUP]:+d} KiB" for b, r in zip(blocks, rss, strict=True)]
    assert statistics.mean(blocks[-WINDOW:]) - statistics.mean(blocks[WARMUP : WARMUP + WINDOW]) < BLOCKS, report
    assert statistics.mean(rss[-WINDOW:]) - statistics.mean(rss[WARMUP : WARMUP + WINDOW]) < RSS_KIB, report
