"""The two tools every call benchmark uses; kept apart from the generated module so a one-tool server stays small.
And the loop that times calls of them through a client."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: The first addend.
        b: The second addend.

    Returns:
        The sum of `a` and `b`.
    """
    return a + b


async def add_async(a: int, b: int) -> int:
    """Add two integers, as a coroutine.

    Args:
        a: The first addend.
        b: The second addend.

    Returns:
        The sum of `a` and `b`.
    """
    return a + b


async def time_add_calls(client: Any, calls: int, clock: Callable[[], float] = time.perf_counter) -> float:
    """µs per call of `add` through `client` (toolkit's or fastmcp's), one call after another, after a warm-up of a
    tenth as many; `clock` is `time.perf_counter` (wall) or `time.process_time` (this process's CPU)."""
    for i in range(max(10, calls // 10)):
        await client.call_tool("add", {"a": i, "b": 1})
    start = clock()
    for i in range(calls):
        result = await client.call_tool("add", {"a": i, "b": 1})
    spent = clock() - start
    assert not getattr(result, "is_error", False), result
    return spent / calls * 1e6
