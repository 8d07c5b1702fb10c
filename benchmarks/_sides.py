"""The frameworks compared, and how each one's side module is found."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType

FRAMEWORKS = ("toolkit", "mcp", "fastmcp")
FLOOR = "floor"
BASELINE = "mcp"

# What "import of the server API" imports; the floor's is the bare interpreter.
IMPORTS = {
    "toolkit": "from toolkit import Server",
    "mcp": "from mcp.server.mcpserver import MCPServer",
    "fastmcp": "from fastmcp import FastMCP",
    FLOOR: "pass",
}

SERVE_SCRIPT = Path(__file__).with_name("serve.py")


def load(name: str) -> ModuleType:
    """Import `benchmarks.side_<name>`, and with it that framework."""
    return importlib.import_module(f"benchmarks.side_{name}")


def serve_argv(
    side: str, tools_dir: str, tools: int, *, module: str | None = None, page_size: int | None = None
) -> list[str]:
    """The command that starts `side`'s stdio server with `add` and the first `tools` generated tools.

    `module` names the generated module (default `bench_tools`); `page_size` sets the server's page size.
    """
    argv = [sys.executable, str(SERVE_SCRIPT), side, tools_dir, str(tools)]
    if module is not None or page_size is not None:
        argv.append(module or "bench_tools")
    if page_size is not None:
        argv.append(str(page_size))
    return argv
