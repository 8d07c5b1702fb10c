"""Ending 2025-11-25 sessions across workers: `http_app(session_store=...)`, in process.

Two app instances with one secret stand for two workers (tests/http/test_http_workers.py runs real uvicorn workers).
With the default store a DELETE holds on the app that got it only; with a shared `SqliteSessionStore`, or any
object with `end` and `is_ended`, it holds on all of them.
"""

from __future__ import annotations

import contextlib
import gc
import multiprocessing
import sqlite3
import subprocess
import sys
import time
import warnings
from collections.abc import Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import httpx
import pytest
import wire
from servers.http_demo import build as make_server  # the demo server: tests/servers/http_demo.py

from toolkit import SessionStore, SqliteSessionStore, StreamingASGITransport

pytestmark = pytest.mark.anyio

SECRET = "a secret the test workers share, 32 bytes or more"
ACCEPT = wire.POST_HEADERS
INITIALIZE = wire.initialize_request(0)
CALL: dict[str, Any] = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "tools/call",
    "params": {"name": "add", "arguments": {"a": 1, "b": 2}},
}
GONE = {
    "jsonrpc": "2.0",
    "id": None,
    "error": {"code": -32600, "message": "Session not found: initialize a new session"},
}


class DictStore:
    """A store of one's own: anything with `end` and `is_ended`."""

    def __init__(self) -> None:
        self.ended: dict[str, float] = {}

    def end(self, key: str, expires: float) -> None:
        self.ended[key] = expires

    def is_ended(self, key: str) -> bool:
        return key in self.ended


async def workers(stack: AsyncExitStack, *stores: SessionStore | None) -> list[httpx.AsyncClient]:
    """One client per app; the apps share the secret (and the store given to each)."""
    clients = []
    for store in stores:
        app = make_server().http_app(secret=SECRET, session_store=store)
        transport = StreamingASGITransport(app)
        client = httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8000")
        clients.append(await stack.enter_async_context(client))
    return clients


async def open_session(client: httpx.AsyncClient) -> dict[str, str]:
    response = await client.post("/mcp", json=INITIALIZE, headers=ACCEPT)
    assert response.status_code == 200
    return {**ACCEPT, "mcp-session-id": response.headers["mcp-session-id"], "mcp-protocol-version": "2025-11-25"}


async def call(client: httpx.AsyncClient, headers: dict[str, str]) -> tuple[int, Any]:
    response = await client.post("/mcp", json=CALL, headers=headers)
    return response.status_code, response.json()


ANSWER = (200, {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "3"}], "isError": False}})


# Redis: ended sessions are shared by `RedisBackend` itself (tests/backend), no longer a recipe of the docs.
@pytest.mark.parametrize("kind", ["sqlite", "custom"])
async def test_a_session_deleted_on_one_worker_is_gone_on_the_others_with_a_shared_store(
    tmp_path: Path, kind: str
) -> None:
    stores: dict[str, Callable[[], SessionStore]] = {
        "sqlite": lambda: SqliteSessionStore(tmp_path / "sessions.db"),
        "custom": DictStore,
    }
    store: SessionStore = stores[kind]()
    async with AsyncExitStack() as stack:
        one, two = await workers(stack, store, store)
        headers = await open_session(one)
        assert await call(two, headers) == ANSWER  # any worker serves the session (signed id)
        assert (await one.delete("/mcp", headers=headers)).status_code == 204
        assert await call(two, headers) == (404, GONE)
        assert await call(one, headers) == (404, GONE)
        assert (await two.delete("/mcp", headers=headers)).status_code == 404
        other = await open_session(two)  # other sessions go on
        assert await call(one, other) == ANSWER


async def test_without_a_shared_store_a_delete_holds_on_its_own_worker_only() -> None:
    async with AsyncExitStack() as stack:
        one, two = await workers(stack, None, None)
        headers = await open_session(one)
        assert (await one.delete("/mcp", headers=headers)).status_code == 204
        assert await call(one, headers) == (404, GONE)
        assert await call(two, headers) == ANSWER  # docs/deploy.md: until the id expires, or with a shared store


async def test_a_modern_request_never_asks_the_store() -> None:
    class Refusing(DictStore):
        def is_ended(self, key: str) -> bool:
            raise AssertionError("a 2026-07-28 request consulted the session store")

    async with AsyncExitStack() as stack:
        [client] = await workers(stack, Refusing())
        message = {
            **CALL,
            "params": {**CALL["params"], "_meta": wire.meta()},
        }
        headers = {**ACCEPT, "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": "add"}
        response = await client.post("/mcp", json=message, headers=headers)
    assert response.status_code == 200
    assert response.json()["result"]["content"] == [{"type": "text", "text": "3"}]


def test_session_store_takes_a_store_and_says_so_otherwise() -> None:
    with pytest.raises(TypeError, match=r"session_store= takes a SessionStore \(end, is_ended\), got 'sessions.db'"):
        make_server().http_app(session_store="sessions.db")  # type: ignore[arg-type]
    assert isinstance(DictStore(), SessionStore)


def test_the_sqlite_store_forgets_sessions_once_their_ids_expire(tmp_path: Path) -> None:
    store = SqliteSessionStore(tmp_path / "sessions.db")
    store.end("old", time.time() - 1)
    store.end("live", time.time() + 3600)
    assert (store.is_ended("old"), store.is_ended("live"), store.is_ended("other")) == (False, True, False)
    store.close()
    assert SqliteSessionStore(tmp_path / "sessions.db").is_ended("live")  # the file holds it, not the object


def test_a_sqlite_store_dropped_without_close_closes_its_own_connection(tmp_path: Path) -> None:
    # The store opens its connection itself, so it closes it: Python 3.13 warns of a connection collected open
    # (ResourceWarning, an error in this suite), as it did for every store a test or an app never closed.
    store = SqliteSessionStore(tmp_path / "sessions.db")
    store.end("k", time.time() + 60)
    wal = tmp_path / "sessions.db-wal"
    assert wal.exists()  # a connection is open
    del store
    gc.collect()
    assert not wal.exists()  # the last connection closed (SQLite checkpoints and removes the log)


def test_the_sqlite_store_is_shared_by_processes_and_files_are_checked_at_once(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    store = SqliteSessionStore(path)
    assert store.is_ended("k") is False  # this process has a connection now
    code = (
        "import sys, time; from toolkit import SqliteSessionStore; "
        "s = SqliteSessionStore(sys.argv[1]); print(s.is_ended('k')); s.end('k', time.time() + 60)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(path)], check=False, capture_output=True, text=True, timeout=60
    )
    assert (done.returncode, done.stdout.strip()) == (0, "False"), done.stderr
    assert store.is_ended("k")
    with contextlib.closing(sqlite3.connect(path)) as db:  # `with` a connection commits, only closing() closes
        assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    with pytest.raises(sqlite3.OperationalError, match="unable to open database file"):
        SqliteSessionStore(tmp_path / "missing" / "sessions.db")


def _forked(store: SqliteSessionStore, queue: Any) -> None:
    queue.put(store.is_ended("k"))
    store.end("from-child", time.time() + 60)


@pytest.mark.skipif(sys.platform == "win32", reason="fork is POSIX")
def test_a_forked_worker_opens_its_own_connection(tmp_path: Path) -> None:
    store = SqliteSessionStore(tmp_path / "sessions.db")
    store.end("k", time.time() + 60)  # the parent has used its connection before the fork, as a preloading master
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_forked, args=(store, queue))
    with warnings.catch_warnings():  # Python 3.12+ warns about fork() in a process with threads: none run here
        warnings.simplefilter("ignore", DeprecationWarning)
        child.start()
    child.join(60)
    assert (child.exitcode, queue.get(timeout=60)) == (0, True)
    assert store.is_ended("from-child")
