"""Sync tools on worker threads, with the cheapest hand-off the event loop allows.

On asyncio, a call is one `SimpleQueue.put` to a waiting worker and one `call_soon_threadsafe` back: about a
fifth less per call than `anyio.to_thread.run_sync`, which also acquires a capacity limiter and a cancel scope
each time. Other event loops (trio) use anyio's threads. Either way a cancelled call is abandoned, not
waited for: Python cannot stop a thread, so the function runs on and its result is dropped.
"""

from __future__ import annotations

import contextlib
import contextvars
import queue
import sys
import threading
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import anyio.to_thread

if TYPE_CHECKING:
    import asyncio

    Loop = asyncio.AbstractEventLoop
    _Job = tuple[Loop, asyncio.Future[Any], contextvars.Context, Callable[..., Any], tuple[Any, ...]]

__all__ = ["MAX_THREADS", "run_sync", "running_calls"]

T = TypeVar("T")

#: Threads the asyncio pool may start; calls beyond wait for a free one (anyio's default limit is the same).
MAX_THREADS = 40

_running = 0  # functions running on a worker thread now, abandoned ones included
_running_lock = threading.Lock()


def running_calls() -> int:
    """How many sync functions are running on worker threads now, on any backend (cancelled ones included)."""
    return _running


def _counted(func: Callable[..., T], *args: Any) -> T:
    global _running  # noqa: PLW0603 - one process-wide count, as threads are process-wide
    with _running_lock:
        _running += 1
    try:
        return func(*args)
    finally:
        with _running_lock:
            _running -= 1


class _Worker(threading.Thread):
    def __init__(self, pool: _Pool) -> None:
        # Daemon: a tool that never returns must not keep the interpreter alive after the server is done.
        super().__init__(name="toolkit-tool", daemon=True)
        self.jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        self._pool = pool

    def run(self) -> None:
        while True:
            loop, future, context, func, args = self.jobs.get()
            try:
                result, error = context.run(_counted, func, *args), None
            except BaseException as exc:  # handed to the awaiting task, which decides what it means
                result, error = None, exc
            with contextlib.suppress(RuntimeError):  # a closed loop: nobody is waiting any more
                loop.call_soon_threadsafe(_settle, future, result, error)
            del future, result, error
            self._pool.release(self)


class _Raised(Exception):
    """Carries what the function raised: a future cannot hold every exception (StopIteration, say)."""

    def __init__(self, error: BaseException) -> None:
        super().__init__()
        self.error = error


def _settle(future: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
    if future.done():  # the call was cancelled while the thread ran
        return
    if error is not None:
        future.set_exception(_Raised(error))
    else:
        future.set_result(result)


class _Pool:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._idle: deque[_Worker] = deque()
        self._waiters: deque[tuple[asyncio.AbstractEventLoop, asyncio.Future[_Worker]]] = deque()
        self._started = 0

    def acquire(self, loop: asyncio.AbstractEventLoop) -> _Worker | asyncio.Future[_Worker]:
        with self._lock:
            if self._idle:
                return self._idle.pop()
            if self._started < MAX_THREADS:
                self._started += 1
                worker = _Worker(self)
                worker.start()
                return worker
            waiter: asyncio.Future[_Worker] = loop.create_future()
            self._waiters.append((loop, waiter))
            return waiter

    def release(self, worker: _Worker) -> None:
        with self._lock:
            while self._waiters:
                loop, waiter = self._waiters.popleft()
                try:
                    loop.call_soon_threadsafe(self._hand_over, waiter, worker)
                except RuntimeError:  # that loop is closed; try the next waiter
                    continue
                return
            self._idle.append(worker)

    def _hand_over(self, waiter: asyncio.Future[_Worker], worker: _Worker) -> None:
        if waiter.done():  # the waiting call was cancelled meanwhile: the worker goes to the next one
            self.release(worker)
        else:
            waiter.set_result(worker)


_POOL = _Pool()


async def run_sync(func: Callable[..., T], *args: Any) -> T:
    """Run `func(*args)` on a worker thread and return its result; cancelling abandons the thread."""
    aio = sys.modules.get("asyncio")  # not imported: not running on asyncio (and toolkit need not load it)
    try:
        # Public API: it raises when no asyncio loop runs in this thread (trio), at a cost of about a microsecond
        # next to the tens that anyio's thread hand-off takes there.
        loop: asyncio.AbstractEventLoop | None = aio.get_running_loop() if aio is not None else None
    except RuntimeError:
        loop = None
    if loop is None:  # trio (or no asyncio loop): anyio's threads
        return await anyio.to_thread.run_sync(_counted, func, *args, abandon_on_cancel=True)
    pool = _POOL
    with pool._lock:  # the common case, an idle worker, without a call to `acquire`
        got: _Worker | asyncio.Future[_Worker] | None = pool._idle.pop() if pool._idle else None
    if got is None:
        got = pool.acquire(loop)
    if isinstance(got, _Worker):
        worker = got
    else:
        try:
            worker = await got
        except BaseException:
            if got.done() and not got.cancelled():  # handed a worker just as the call was cancelled
                _POOL.release(got.result())
            raise
    future: asyncio.Future[T] = loop.create_future()
    worker.jobs.put((loop, future, contextvars.copy_context(), func, args))
    try:
        return await future
    except _Raised as raised:
        raise raised.error from None
