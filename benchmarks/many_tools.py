"""A stdio server with 10,000 generated tools: spawn to `initialize`, `tools/list` (whole or in pages), RSS.

The hand-written client (`_raw`) follows `nextCursor` itself, so every side is listed the same way and the
figure is the server's cost plus reading the JSON lines.
"""

from __future__ import annotations

import time
from typing import Any

from . import _generate, _raw, _sides
from .rss import rss_kib

BUDGET = 30.0
"""Seconds one listing may take. A server whose every page costs as much as the whole list (fastmcp builds
all 10,000 definitions for each page of 100) would take many minutes; past the budget the listing stops, and
only the cost of a page is reported."""


def _list_all(client: _raw.RawClient) -> tuple[int, int, bool]:
    """Follow `tools/list` pages until the last one or the budget: (tools, pages, whether it got them all)."""
    deadline = time.perf_counter() + BUDGET
    page = client.request("tools/list", {})
    tools, pages = len(page["tools"]), 1
    while cursor := page.get("nextCursor"):
        if time.perf_counter() > deadline:
            return tools, pages, False
        page = client.request("tools/list", {"cursor": cursor})
        tools, pages = tools + len(page["tools"]), pages + 1
    return tools, pages, True


def run(side_name: str, params: dict[str, Any]) -> dict[str, Any]:
    """Return ms to the `initialize` response, ms of the first and of a warm listing, ms a page, MiB resident."""
    expected = params["tools"] + 1
    argv = _sides.serve_argv(
        side_name,
        params["tools_dir"],
        params["tools"],
        module=_generate.MANY_MODULE,
        page_size=params["page_size"],
    )
    start = time.perf_counter()
    client = _raw.RawClient(argv, buffered=True)
    try:
        client.initialize()
        spawn = time.perf_counter() - start
        start = time.perf_counter()
        tools, pages, complete = _list_all(client)
        first = time.perf_counter() - start
        if complete and tools != expected:
            raise RuntimeError(f"{side_name} listed {tools} tools, expected {expected}")
        lists = params["lists"] if complete else 1
        start = time.perf_counter()
        for _ in range(lists):
            tools, pages, complete = _list_all(client)
        warm = (time.perf_counter() - start) / lists
        rss = rss_kib(client.process.pid) / 1024
    finally:
        client.close()
    metrics: dict[str, Any] = {"spawn": spawn * 1e3, "page": warm / pages * 1e3, "rss": rss}
    if complete:
        return {**metrics, "first": first * 1e3, "list": warm * 1e3}
    reason = f"stopped after {BUDGET:.0f} s at page {pages} of {-(-expected // params['page_size'])}"
    return {**metrics, "first": None, "list": None, "missing": reason}
