"""Issue 26's load: 200 clients at once, half in each era, across three processes behind the round-robin proxy,
each client running three sessions one after another, each on fresh connections (`FLEET_LOAD_SESSIONS`, 3 by
default: 600 sessions, 1,800 calls in all). Every call is answered, and rightly (0 lost); the memory of every
process is flat over the last two thirds of the sessions; with Redis, its key count returns to where it started
once the sessions' keys expire (`session_ttl` and the events' ttl are 120 s here).

The load is counted, not timed: the same 600 sessions on a fast machine or a slow one. Each session opens an HTTP
client of its own (its own connections, as separate programs would), all built on one TLS context: `httpx` loads
the certificate store for each client it makes (40 ms of a core), which bound the test's process before, not the
servers (the same 1,800 calls took a minute then). Measured on the 2-core test machine: about 18 s for the load, and
the two minutes the keys take to expire (idle: the other workers of the suite go on).
"""

from __future__ import annotations

import os
import ssl
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx
import pytest
from fleet import Fleet
from redis_server import RedisServer
from served import Served
from test_http_fleet import with_progress

from toolkit import Client, ProtocolMode

pytestmark = [pytest.mark.anyio, pytest.mark.parametrize("anyio_backend", ["asyncio"])]
CLIENTS = 200
PROCESSES = 3
SESSIONS = int(os.environ.get("FLEET_LOAD_SESSIONS", "3"))  # a client's, one after another
CALLS = 3  # counted in a session: two calls of `add` and one with progress
# A session slower than this is a hang: the load makes a session slow, never this slow. A session lasts 5-7 s here on
# a quiet machine, over 30 s under the suite's six workers with two other suites running, and over 60 s (the bound
# before) on a machine loaded twice as much: the 200 clients share the test's one process, so a session's time grows
# with the load of the machine.
SESSION_LIMIT = 120.0
# An id expires this long after its initialize: as long as a session may last, so that however busy the machine only
# a hang fails the test, never an expiry (with a minute, sessions of the Redis fleet expired under that load). With
# Redis the test then waits for every key to expire: two minutes, idle (the suite's other workers go on meanwhile).
TTL = SESSION_LIMIT
GROWTH = 16 * 1024 * 1024  # bytes a process may grow over the last two thirds (arenas, caches): not per call


@pytest.fixture(params=["redis", "workers"])
def fleet(request: pytest.FixtureRequest) -> Iterator[Fleet]:
    with Fleet.running(request.param, PROCESSES, MCP_SESSION_TTL=str(TTL), MCP_EVENTS_TTL=str(TTL)) as fleet:
        yield fleet


def rss(pid: int) -> int:
    """The resident memory of process `pid`, in bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no VmRSS for {pid}")


def pids(fleet: Fleet) -> list[int]:
    """Every process that serves: the workers (and, for `toolkit serve`, the supervisor that holds the hub)."""
    if isinstance(fleet.members, Served):
        top = fleet.members.process.pid
        children = Path(f"/proc/{top}/task/{top}/children").read_text().split()
        return [top, *map(int, children)]
    return [member.process.pid for member in fleet.members]


class Tally:
    """The calls answered in each era, and an event set once the first `CLIENTS` sessions (a third) have ended."""

    def __init__(self) -> None:
        self.calls: dict[ProtocolMode, int] = {"2026-07-28": 0, "handshake": 0}
        self.sessions = 0
        self.warmed_up = anyio.Event()

    def ended(self, protocol: ProtocolMode) -> None:
        self.calls[protocol] += CALLS
        self.sessions += 1
        if self.sessions == CLIENTS:
            self.warmed_up.set()


async def one_client(url: str, protocol: ProtocolMode, tls: ssl.SSLContext, tally: Tally) -> None:
    """`SESSIONS` sessions, one after another: list, two calls, a call with progress, then close."""
    number = 0
    for _ in range(SESSIONS):
        with anyio.fail_after(SESSION_LIMIT):
            async with (
                httpx.AsyncClient(verify=tls, timeout=httpx.Timeout(30.0, read=None)) as http,  # Client.http's own
                Client.http(url, protocol=protocol, http_client=http) as session,
            ):
                assert len(await session.list_tools()) >= 10
                for _ in range(2):
                    number += 1
                    assert (await session.call_tool("add", {"a": number, "b": 1})).text == str(number + 1)
                assert await with_progress(session, "ticks", {"count": 2}) == ("2 ticks", [1, 2])
        tally.ended(protocol)


async def test_200_clients_in_both_eras_three_sessions_each(fleet: Fleet) -> None:
    keys_before = int(fleet.redis.command("DBSIZE")) if fleet.redis is not None else 0
    tls = httpx.create_ssl_context()  # once: each client would load the certificate store again
    tally = Tally()
    async with anyio.create_task_group() as tg:
        for i in range(CLIENTS):
            tg.start_soon(one_client, fleet.url, "2026-07-28" if i % 2 else "handshake", tls, tally)
        await tally.warmed_up.wait()  # the memory measured from here on: after the first third's warm-up
        middle = {pid: rss(pid) for pid in pids(fleet)}
    end = {pid: rss(pid) for pid in middle}
    assert tally.calls == {"2026-07-28": CLIENTS // 2 * SESSIONS * CALLS, "handshake": CLIENTS // 2 * SESSIONS * CALLS}
    grown = {pid: end[pid] - middle[pid] for pid in middle}
    assert all(growth < GROWTH for growth in grown.values()), grown
    if fleet.redis is not None:
        keys_back_to(fleet.redis, keys_before)


def keys_back_to(redis: RedisServer, count: int) -> None:
    """Wait until Redis holds `count` keys again (every key a session made has expired), a bounded poll of Redis."""
    expiry = time.monotonic() + TTL * 2 + 30
    while int(redis.command("DBSIZE")) > count:
        assert time.monotonic() < expiry, redis.command("KEYS", "*")
        time.sleep(0.5)
