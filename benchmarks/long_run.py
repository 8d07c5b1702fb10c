"""The long run: a million sequential in-memory calls of `add_async` on one connection, RSS sampled along the way.

Memory that grows with the calls made (a table of finished requests never emptied, a cache per call) shows
as a slope; a flat line is the expectation. The run stops early after `seconds` so that a slow side bounds
the run's time; the figures then cover the calls it made.
"""

from __future__ import annotations

import statistics
import time
from typing import Any

import anyio

from . import _fixtures, _sides
from .call_memory import WARMUP, check
from .rss import rss_kib

SETTLE = 0.1
"""The slope leaves out the first tenth of the samples: the allocator's arenas and the caches fill there."""


async def _measure(side_name: str, params: dict[str, Any]) -> dict[str, Any]:
    side = _sides.load(side_name)
    server = side.new_server()
    side.register(server, _fixtures.add_async)
    calls, every = params["calls"], params["every"]
    samples: list[tuple[int, float]] = []
    async with side.memory_client(server) as session:
        for i in range(WARMUP):
            check(side_name, await session.call_tool("add_async", {"a": i, "b": 1}))
        start = time.perf_counter()
        deadline = start + params["seconds"]
        done = 0
        while done < calls and time.perf_counter() < deadline:
            for i in range(every):
                await session.call_tool("add_async", {"a": i, "b": 1})
            done += every
            samples.append((done, rss_kib() / 1024))
        elapsed = time.perf_counter() - start
    settled = samples[int(len(samples) * SETTLE) :]
    slope = statistics.linear_regression([x for x, _ in settled], [y for _, y in settled]).slope
    return {
        "rate": done / elapsed,
        "done": done,
        "start": samples[0][1],
        "middle": samples[len(samples) // 2][1],
        "end": samples[-1][1],
        "slope": slope * 1024 * 100_000,  # MiB per call -> KiB per 100,000 calls
        "series": {"rss": samples},
    }


def run(side_name: str, params: dict[str, Any]) -> dict[str, Any]:
    """Return calls/s, calls made, RSS (MiB) at start, middle and end, the slope (KiB per 100k calls), the samples."""
    return anyio.run(_measure, side_name, params)
