"""Issue 26's faults on a real fleet (tests/fleet.py): a worker killed while its tool waits for an answer, Redis
stopped and restarted under load, and a slow Redis (latency injected by a small TCP proxy, `SlowLink`). No hang
anywhere (every call is bounded, and answered or failed with a clear error), nothing lost that was acknowledged,
and the fleet recovers by itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import threading
from collections.abc import Iterator
from typing import Any

import anyio
import pytest
from fleet import Fleet
from redis_server import RedisServer
from served import TIMEOUT

from toolkit import Client, ElicitRequest, ElicitResult, ProtocolError, ProtocolMode

pytestmark = [pytest.mark.anyio, pytest.mark.parametrize("anyio_backend", ["asyncio"])]  # the servers are the subject
PROCESSES = 3
GONE = "the server process whose tool asked is gone"


@pytest.fixture(params=["redis", "workers"])
def fleet(request: pytest.FixtureRequest) -> Iterator[Fleet]:
    """A fresh fleet for each test: these tests kill its processes."""
    with Fleet.running(request.param, PROCESSES) as fleet:
        yield fleet


async def test_a_worker_killed_while_its_tool_waits_for_an_answer_fails_the_call_promptly(fleet: Fleet) -> None:
    async def kill_the_asker(request: ElicitRequest) -> ElicitResult[Any]:
        found = re.match(r"pid (\d+):", request.message)
        assert found is not None, request.message
        fleet.kill(int(found.group(1)))  # the tool's process dies before the answer reaches it
        return ElicitResult.accept({"name": "Ada"})

    async with Client.http(fleet.url, protocol="handshake", elicitation_handler=kill_the_asker) as session:
        with anyio.fail_after(TIMEOUT):  # a safety net only: the call ends as soon as the answer finds no asker
            try:
                result = await session.call_tool("held")
            except ProtocolError as exc:
                outcome = exc.message
            else:
                assert result.is_error, result
                outcome = result.text or ""
        # Whichever comes first: the answer refused by the worker that got it, or the resumption of the call's
        # stream (cut with its process) refused by another worker (400: its writer is gone).
        assert GONE in outcome or outcome == "cannot resume the response stream: HTTP 400", outcome
        with anyio.fail_after(TIMEOUT):  # the fleet goes on serving, the session included
            assert (await session.call_tool("add", {"a": 1, "b": 2})).text == "3"


class Tally:
    """What the clients of a load saw: answers, clear failures, per era."""

    def __init__(self) -> None:
        self.answered = {"2026-07-28": 0, "handshake": 0}
        self.failed = {"2026-07-28": 0, "handshake": 0}
        self.doing: dict[int, str] = {}  # what each client is doing now: said when the test fails
        self.changed = anyio.Event()

    def note(self, protocol: str, ok: bool) -> None:
        (self.answered if ok else self.failed)[protocol] += 1
        self.changed.set()
        self.changed = anyio.Event()

    async def until(self, condition: Any, seconds: float = TIMEOUT) -> None:
        """Wait until `condition()` holds; past `seconds`, fail saying what the clients saw."""
        with anyio.move_on_after(seconds):
            while not condition():
                await self.changed.wait()
        assert condition(), f"after {seconds:g} s: answered {self.answered}, failed {self.failed}, doing {self.doing}"


async def keep_calling(url: str, protocol: ProtocolMode, tally: Tally, stop: anyio.Event, client: int) -> None:
    """Call `add` until `stop`, each call bounded: an answer is exact, a failure is an error (never a hang); a
    session that failed is opened anew (as a client does after a 503 or a 404), once another client was answered or
    failed (the others go on meanwhile: this one does not hammer a fleet that just said it cannot serve it)."""
    number = 0
    while not stop.is_set():
        try:
            tally.doing[client] = f"{protocol}: opening a session"
            async with Client.http(url, protocol=protocol) as session:
                while not stop.is_set():
                    number += 1
                    tally.doing[client] = f"{protocol}: calling"
                    with anyio.fail_after(TIMEOUT):
                        result = await session.call_tool("add", {"a": number, "b": 1})
                    assert result.text == str(number + 1), result  # acknowledged means right
                    tally.note(protocol, True)
                tally.doing[client] = f"{protocol}: closing its session"
        except ProtocolError:  # a clear failure: 503 while Redis is away (a hang is a TimeoutError: the test fails)
            tally.note(protocol, False)
            # Not `wait_all_tasks_blocked`: beside clients that never stop calling, that may never come (CI waited
            # 90 s in it). Bounded: the others may all be waiting too.
            tally.doing[client] = f"{protocol}: waiting to try again"
            with anyio.move_on_after(1):
                await tally.changed.wait()
    tally.doing[client] = "stopped"


@pytest.mark.parametrize("fleet", ["redis"], indirect=True)
async def test_redis_stopped_and_restarted_under_load(fleet: Fleet) -> None:
    redis = fleet.redis
    assert redis is not None
    tally, stop = Tally(), anyio.Event()
    async with anyio.create_task_group() as tg:
        for i in range(12):
            tg.start_soon(keep_calling, fleet.url, "2026-07-28" if i % 2 else "handshake", tally, stop, i)
        await tally.until(lambda: min(tally.answered.values()) >= 20)
        redis.stop()
        modern = tally.answered["2026-07-28"]
        # 2026-07-28 calls need nothing shared: they go on; 2025-11-25 sessions fail fast, with 503.
        await tally.until(lambda: tally.answered["2026-07-28"] >= modern + 50 and tally.failed["handshake"] >= 1)
        redis.start()  # the same port, empty
        before = dict(tally.answered)
        # Recovery is not instant: the first 2025-11-25 calls after Redis is back take 0.1-0.7 s for some seconds
        # (measured on an idle machine; 0.02 s before), and the suite runs beside heavy tests: a longer bound, as
        # only a fleet that never recovers fails it.
        await tally.until(lambda: all(tally.answered[era] >= before[era] + 30 for era in before), 3 * TIMEOUT)
        stop.set()
    assert tally.failed["2026-07-28"] == 0


class SlowLink:
    """A TCP proxy on 127.0.0.1 in front of Redis that holds each chunk `delay` seconds each way (in a thread of its
    own, so that the fleet reaches Redis whatever the test's event loop does)."""

    def __init__(self, port: int) -> None:
        self.target = port
        self.delay = 0.0
        self.ready = threading.Event()
        self.writers: list[asyncio.StreamWriter] = []
        self.loop: asyncio.AbstractEventLoop | None = None
        self.thread = threading.Thread(target=lambda: asyncio.run(self._serve()), daemon=True)
        self.thread.start()
        assert self.ready.wait(TIMEOUT)

    async def _serve(self) -> None:
        self.loop = asyncio.get_running_loop()
        self.stopped = asyncio.Event()
        server = await asyncio.start_server(self._link, "127.0.0.1", 0)
        self.port = server.sockets[0].getsockname()[1]
        self.ready.set()
        async with server:
            await self.stopped.wait()
        for writer in self.writers:  # every link ends with the proxy, nothing left for the garbage collector
            writer.close()
        await asyncio.gather(*(writer.wait_closed() for writer in self.writers), return_exceptions=True)

    async def _pump(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(OSError):
            while data := await reader.read(65536):
                if self.delay:
                    await asyncio.sleep(self.delay)  # the injected latency itself
                writer.write(data)
                await writer.drain()
        writer.close()

    async def _link(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.writers.append(writer)
        try:
            upstream_reader, upstream_writer = await asyncio.open_connection("127.0.0.1", self.target)
        except OSError:
            writer.close()
            return
        self.writers.append(upstream_writer)
        await asyncio.gather(self._pump(reader, upstream_writer), self._pump(upstream_reader, writer))

    def close(self) -> None:
        assert self.loop is not None
        self.loop.call_soon_threadsafe(self.stopped.set)
        self.thread.join(TIMEOUT)


async def test_a_slow_redis_fails_fast_and_the_fleet_recovers() -> None:
    redis = RedisServer()
    redis.start()
    link = SlowLink(redis.port)
    # The backend's timeout 1 s (the fleet's default is 10 s): far over the slow link's 0.1 s a round trip, which a
    # loaded machine must not push past it, and far under the 6 s of the link made slower still.
    fleet = Fleet.machines(PROCESSES, f"redis://127.0.0.1:{link.port}/0", MCP_REDIS_TIMEOUT="1")
    try:
        link.delay = 0.05  # slow but within the backend's timeout: everything answers
        async with Client.http(fleet.url, protocol="handshake") as session:
            for number in range(PROCESSES):
                with anyio.fail_after(TIMEOUT):
                    assert (await session.call_tool("add", {"a": number, "b": 1})).text == str(number + 1)
            link.delay = 3.0  # past the backend's timeout (1 s): a request that needs Redis fails fast
            with anyio.fail_after(TIMEOUT), pytest.raises(ProtocolError) as failed:
                await session.call_tool("add", {"a": 1, "b": 1})
            assert "Shared state unavailable" in failed.value.message
        async with Client.http(fleet.url, protocol="2026-07-28") as modern:  # needs nothing shared: unaffected
            with anyio.fail_after(TIMEOUT):
                assert (await modern.call_tool("add", {"a": 2, "b": 2})).text == "4"
        link.delay = 0.0
        async with Client.http(fleet.url, protocol="handshake") as session:  # back by itself
            for number in range(PROCESSES):
                with anyio.fail_after(TIMEOUT):
                    assert (await session.call_tool("add", {"a": number, "b": 2})).text == str(number + 2)
    finally:
        fleet.close()
        link.close()
        redis.stop()
