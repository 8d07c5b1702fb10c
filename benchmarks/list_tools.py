"""`tools/list` with N tools, in memory, through each framework's own in-process client."""

from __future__ import annotations

import sys
import time
from typing import Any

import anyio

from . import _sides


async def _measure(side_name: str, params: dict[str, Any]) -> float:
    sys.path.insert(0, params["tools_dir"])
    from bench_tools import TOOLS  # type: ignore[import-not-found]

    side = _sides.load(side_name)
    server = side.new_server()
    for fn in TOOLS[: params["tools"]]:
        side.register(server, fn)
    async with side.memory_client(server) as session:
        # The first listing may build caches; the figure is the steady state a client sees.
        count = await session.list_tools()
        if count != params["tools"]:
            raise RuntimeError(f"{side_name} listed {count} tools, expected {params['tools']}")
        start = time.perf_counter()
        for _ in range(params["lists"]):
            await session.list_tools()
        elapsed = time.perf_counter() - start
    return float(elapsed / params["lists"] * 1e3)


def run(side_name: str, params: dict[str, Any]) -> float:
    """Return milliseconds per `tools/list`."""
    return anyio.run(_measure, side_name, params)
