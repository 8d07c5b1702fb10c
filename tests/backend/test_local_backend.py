"""`LocalBackend`, the workers of one machine on a `LocalHub` (what `toolkit serve --workers N` runs), beyond the
protocol's own tests (test_backends.py runs those on it too): a worker that dies is known at once, a hub that is
gone is an error within the timeout and never a hang, `listen` comes back with the hub, and bad bytes on the socket
leave the hub serving. On asyncio and trio, with a hub in the test's own event loop.
"""

from __future__ import annotations

import logging
import struct
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import anyio.abc
import pytest
from anyio.streams.buffered import BufferedByteReceiveStream

from toolkit import BackendError
from toolkit._backend.local import LocalBackend, LocalHub
from toolkit._http.serve import keep_serving

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def hub_at(path: str, **options: float) -> AsyncIterator[LocalHub]:
    """A hub serving on `path` for the block."""
    hub = LocalHub(path, **options)  # type: ignore[arg-type]
    async with anyio.create_task_group() as tg:
        await tg.start(hub.serve)
        yield hub
        tg.cancel_scope.cancel()


@asynccontextmanager
async def local_workers(**options: float) -> AsyncIterator[tuple[LocalBackend, LocalBackend]]:
    """Two workers on a hub of their own."""
    with tempfile.TemporaryDirectory() as folder:
        path = str(Path(folder) / "hub.sock")
        async with hub_at(path, **options):
            pair = (LocalBackend(path), LocalBackend(path))  # their `start` is nothing: they connect when used
            try:
                yield pair
            finally:
                for backend in pair:
                    await backend.stop()


async def test_a_worker_that_dies_is_gone_at_once() -> None:
    async with local_workers() as (a, b):
        heard = anyio.Event()
        async with anyio.create_task_group() as tg:

            async def inbox(message: bytes) -> None:
                heard.set()

            listening = await tg.start(_listen_in_scope, b, inbox)
            assert await a.send(b.worker, b"are you there")
            with anyio.fail_after(5):
                await heard.wait()
            listening.cancel()  # the worker's connection closes, as when its process is killed
        with anyio.fail_after(5):
            while await a.send(b.worker, b"still there?"):  # the hub sees the close as soon as it reads it
                await anyio.wait_all_tasks_blocked()
        assert not await a.send(b.worker, b"gone")


async def _listen_in_scope(
    backend: LocalBackend,
    inbox: object,
    *,
    task_status: anyio.abc.TaskStatus[anyio.CancelScope] = anyio.TASK_STATUS_IGNORED,
) -> None:
    with anyio.CancelScope() as scope:
        async with anyio.create_task_group() as tg:
            await tg.start(backend.listen, inbox)
            task_status.started(scope)


async def test_a_hub_that_is_gone_is_an_error_within_the_timeout_and_listen_comes_back_with_it() -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = str(Path(folder) / "hub.sock")
        worker = LocalBackend(path, timeout=0.5)
        with anyio.fail_after(5), pytest.raises(BackendError, match="did not answer"):
            await worker.get("k")  # no hub yet
        got: list[bytes] = []
        back = anyio.Event()

        async def inbox(message: bytes) -> None:
            got.append(message)
            back.set()

        async with anyio.create_task_group() as tg:
            async with hub_at(path):
                await tg.start(worker.listen, inbox)
                await worker.put("k", "v", 60)
            # The hub is gone, and its socket with it.
            with anyio.fail_after(5), pytest.raises(BackendError):
                await worker.get("k")
            async with hub_at(path):  # back, empty: a restarted supervisor
                other = LocalBackend(path)
                with anyio.fail_after(5):
                    assert await worker.get("k") == [None]
                    while not await other.send(worker.worker, b"welcome back"):  # listen reconnects by itself
                        await anyio.wait_all_tasks_blocked()
                    await back.wait()
                await other.stop()
            tg.cancel_scope.cancel()
        await worker.stop()
        assert got == [b"welcome back"]


async def test_bad_bytes_on_the_socket_leave_the_hub_serving() -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = str(Path(folder) / "hub.sock")
        async with hub_at(path):
            for garbage in (b"\x00\x00\x00\x05nojs!", struct.pack(">I", 1 << 31), b"\x00\x00\x00\x02[]"):
                async with await anyio.connect_unix(path) as raw:
                    await raw.send(garbage)
            refusal = b'{"error":"unknown operation \'what\'"}'
            with anyio.fail_after(5):
                async with await anyio.connect_unix(path) as raw:
                    await raw.send(struct.pack(">I", 14) + b'{"op": "what"}')
                    reply = await BufferedByteReceiveStream(raw).receive_exactly(4 + len(refusal))
            assert reply == struct.pack(">I", len(refusal)) + refusal
            worker = LocalBackend(path)
            await worker.put("k", "v", 60)
            assert await worker.get("k") == ["v"]
            await worker.stop()


async def exchange(path: str, frame: bytes) -> bytes:
    """One raw request frame (its JSON text as given) and the reply's JSON text; b"" when the hub hung up."""
    async with await anyio.connect_unix(path) as raw:
        await raw.send(struct.pack(">I", len(frame)) + frame)
        reader = BufferedByteReceiveStream(raw)
        try:
            (length,) = struct.unpack(">I", await reader.receive_exactly(4))
        except (anyio.IncompleteRead, anyio.EndOfStream):
            return b""
        return await reader.receive_exactly(length)


async def test_frames_of_the_wrong_shape_get_an_error_each_and_the_hub_serves_on() -> None:
    frames = {
        b'{"op": "take", "rate": 0}': b'{"error":"take: rate must be above 0"}',
        b'{"op": "take", "key": "k", "rate": 0, "capacity": 1}': b'{"error":"take: rate must be above 0"}',
        b'{"op": "take", "key": "k", "rate": 1e400, "capacity": 1}': b'{"error":"take: rate must be a finite number"}',
        b'{"op": "take", "key": "k", "rate": 1, "capacity": 0}': b'{"error":"take: capacity must be at least 1"}',
        b'{"op": "put", "key": "k", "value": "v", "ttl": -1}': b'{"error":"put: ttl must be above 0"}',
        b'{"op": "get", "keys": [1]}': b'{"error":"get: keys must be a list of strings"}',
        b'{"op": "since", "stream": "s", "after": -1, "wait": 0}': b'{"error":"since: after must be a whole number"}',
        b'{"op": "since", "stream": "s", "after": 0, "wait": "x"}': b'{"error":"since: wait must be a finite number"}',
        b'{"op": "append", "stream": "s", "seq": 1, "frame": "!!"}': b'{"error":"append: frame must be base64"}',
        b'{"op": "send", "worker": "w", "message": 7}': b'{"error":"send: message must be a string"}',
        b'{"op": 7}': b'{"error":"unknown operation 7"}',
        b'{"op": "listen", "worker": 7}': b"",
    }
    with tempfile.TemporaryDirectory() as folder:
        path = str(Path(folder) / "hub.sock")
        async with hub_at(path):
            with anyio.fail_after(5):
                replies = {frame: await exchange(path, frame) for frame in frames}
            assert replies == frames
            worker = LocalBackend(path)
            assert await worker.take("k", 1, 1) is None
            await worker.put("k", "v", 60)
            assert await worker.get("k") == ["v"]
            await worker.stop()


async def test_a_hub_that_fails_is_started_again_and_given_up_after_five_failures(
    caplog: pytest.LogCaptureFixture,
) -> None:
    runs = 0

    async def serve(*, task_status: anyio.abc.TaskStatus[None]) -> None:
        nonlocal runs
        runs += 1
        task_status.started()
        raise OSError("the socket went away")

    failure: list[str] = []
    async with anyio.create_task_group() as tg:
        with anyio.fail_after(5):
            await tg.start(keep_serving, serve, failure)
    assert runs == 5
    assert failure == [
        "the workers' shared state (the hub) failed 5 times within 60 s,"
        " stopping the server; the last time: OSError: the socket went away"
    ]
    # Each failure said once: the four started again are logged (with their traceback), the last is `failure`,
    # which the supervisor says as it stops.
    logged = [r for r in caplog.records if r.name == "toolkit"]
    assert [r.getMessage() for r in logged] == [
        "toolkit: the workers' shared state (the hub) failed; starting it again"
    ] * 4
    assert all(r.exc_info and repr(r.exc_info[1]) == "OSError('the socket went away')" for r in logged)


class _Heard(logging.Handler):
    """A log handler that sets an event at the first record."""

    def __init__(self) -> None:
        super().__init__()
        self.heard = anyio.Event()

    def emit(self, record: logging.LogRecord) -> None:
        self.heard.set()


async def test_a_hub_whose_socket_file_is_removed_fails_and_serves_again_on_a_new_one_with_its_state(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # A /tmp cleaner that removes the socket leaves a hub that runs but that no worker can reach: it fails instead,
    # and `keep_serving` starts it again, with what it held.
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "hub.sock"
        worker = LocalBackend(str(path))
        failure: list[str] = []
        async with anyio.create_task_group() as tg:
            await tg.start(keep_serving, LocalHub(str(path)).serve, failure)
            await worker.put("k", "kept", 60)
            failed = _Heard()
            logging.getLogger("toolkit").addHandler(failed)
            try:
                path.unlink()
                with anyio.fail_after(10):  # noticed within `_CHECK_SECONDS` (1 s)
                    await failed.heard.wait()  # logged as it starts the hub again, which binds before it waits
            finally:
                logging.getLogger("toolkit").removeHandler(failed)
            assert path.exists()
            with anyio.fail_after(5):
                assert await worker.get("k") == ["kept"]  # on a new connection: the hub closed the pooled one
            tg.cancel_scope.cancel()
        await worker.stop()
        assert failure == []
        assert not path.exists()  # the last hub removed its own socket as it ended
    [logged] = [r for r in caplog.records if r.name == "toolkit"]
    assert logged.exc_info is not None
    assert str(logged.exc_info[1]) == f"the hub's socket {path} was removed"
