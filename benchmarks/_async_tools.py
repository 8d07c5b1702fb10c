"""The async tool the stdio rows call besides `add`.

Served with `python benchmarks/serve.py SIDE TOOLS_DIR 0 benchmarks._async_tools` (`call_stdio._argv`).
"""

from __future__ import annotations

from ._fixtures import add_async

TOOLS = [add_async]
