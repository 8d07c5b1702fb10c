"""Define and register one tool: the mean cost per tool of registering N generated tools on a fresh server."""

from __future__ import annotations

import sys
import time
from typing import Any

from . import _sides


def run(side_name: str, params: dict[str, Any]) -> float:
    """Return microseconds per tool."""
    sys.path.insert(0, params["tools_dir"])
    from bench_tools import TOOLS  # type: ignore[import-not-found]

    side = _sides.load(side_name)
    functions = TOOLS[: params["tools"]]
    server = side.new_server()
    start = time.perf_counter()
    for fn in functions:
        side.register(server, fn)
    elapsed = time.perf_counter() - start
    return elapsed / len(functions) * 1e6
