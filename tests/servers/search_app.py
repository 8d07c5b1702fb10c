"""A server with tool search on, for the search tests (in memory, over stdio, over HTTP): `python search_app.py
[BACKEND]`.

- `help` is pinned: listed beside `search_tools` and `call_tool`;
- `admin_reset` is hidden from every caller by the tool filter: never found, never callable;
- `delete_file` confirms its calls (`confirm=`); `write_report` may run as a task;
- the server-wide middleware records which tool each `tools/call` reached (`seen`).
"""

from __future__ import annotations

import sys
from typing import Any, Literal

import anyio.lowlevel

from toolkit import CallNext, Request, Server, Tool, ToolDefinition, ToolSearch, tool

seen: list[str | None] = []  # the tool each tools/call reached, as the server-wide middleware saw it


async def record(request: Request, call_next: CallNext) -> dict[str, Any]:
    if request.method == "tools/call":
        seen.append(request.tool.name if request.tool is not None else None)
    return await call_next(request)


def not_admin(definition: ToolDefinition, request: Request) -> bool:
    return definition.name != "admin_reset"


@tool(read_only=True)
def get_weather(city: str, unit: Literal["celsius", "fahrenheit"] = "celsius") -> str:
    """Current weather conditions and temperature for a city.

    Args:
        city: The city's name.
        unit: The temperature unit.
    """
    return f"sunny in {city}, 21 degrees {unit}"


@tool
def send_email(to: str, subject: str, body: str) -> str:
    """Send an email message to a recipient.

    Args:
        to: The recipient's address.
        subject: The subject line.
        body: The message text.
    """
    return f"sent {subject!r} to {to}"


@tool(destructive=True, confirm="Delete {path}?")
def delete_file(path: str) -> str:
    """Delete a file from the workspace.

    Args:
        path: The file's path.
    """
    return f"deleted {path}"


@tool(read_only=True)
def convert_currency(amount: float, source: str, target: str) -> str:
    """Convert an amount of money from one currency to another (exchange rates).

    Args:
        amount: How much money.
        source: The currency code to convert from, such as EUR.
        target: The currency code to convert to, such as USD.
    """
    return f"{amount * 2:g} {target}"


@tool(task="optional")
async def write_report(topic: str) -> str:
    """Write a long research report on a topic (may run as a task).

    Args:
        topic: What the report is about.
    """
    await anyio.lowlevel.checkpoint()
    return f"report on {topic}"


@tool
def admin_reset() -> str:
    """Reset the weather service's cache (administrators only)."""
    return "reset"


@tool(read_only=True)
def help() -> str:
    """How to use this server: search for tools, then call them."""
    return "search, then call"


TOOLS: list[Tool[..., Any]] = [get_weather, send_email, delete_file, convert_currency, write_report, admin_reset, help]


def build() -> Server:
    return Server(
        "search",
        tools=TOOLS,
        middleware=[record],
        tool_filter=not_admin,
        tool_search=ToolSearch(pinned=["help"], limit=3),
    )


server = build()

if __name__ == "__main__":
    server.run(backend="trio" if sys.argv[1:] == ["trio"] else "asyncio")
