"""MCP Apps on the wire: a tool with a page (`table`), an app-only tool of the same page (`refresh`), a plain tool
(`add`). Runs as a script over stdio (`--backend`), and in process as `build()`."""

from __future__ import annotations

import argparse
from typing import Any

from toolkit import UI, Server, tool

PAGE = UI(
    "ui://apps-demo/table",
    "<!doctype html><html><head><title>table</title></head><body><table id='rows'></table></body></html>",
    csp={"resourceDomains": ["https://cdn.example.com"], "connectDomains": ["https://api.example.com"]},
    permissions=["clipboardWrite"],
    prefers_border=True,
    description="The rows, as a table",
)


@tool(ui=PAGE)
def table(rows: int = 2) -> dict[str, Any]:
    """The first rows of the table."""
    return {"rows": [{"n": n, "square": n * n} for n in range(rows)]}


@tool(ui=PAGE, visibility=["app"])
def refresh(rows: int = 3) -> dict[str, Any]:
    """The rows again: the page's refresh button calls it."""
    return table(rows)


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def build(**options: Any) -> Server:
    """A fresh server with the three tools."""
    return Server("apps-demo", version="1.0.0", tools=[table, refresh, add], **options)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--backend", choices=["asyncio", "trio"], default="asyncio")
    build().run(backend=parser.parse_args().backend)
