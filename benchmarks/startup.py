"""Start-up: import of the server API, and spawning a stdio server until its `initialize` response."""

from __future__ import annotations

import subprocess
import sys
import time
from typing import Any

from . import _raw, _sides


def run_import(side_name: str, params: dict[str, Any]) -> float:
    """Return milliseconds of wall time for a fresh interpreter that imports the server API and exits."""
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", _sides.IMPORTS[side_name]], check=True)
    return (time.perf_counter() - start) * 1e3


def run_spawn(side_name: str, params: dict[str, Any]) -> float:
    """Return milliseconds from spawning the server to reading its `initialize` response."""
    argv = _sides.serve_argv(side_name, params["tools_dir"], params["tools"])
    start = time.perf_counter()
    client = _raw.RawClient(argv)
    try:
        client.request(
            "initialize",
            {"protocolVersion": _raw.PROTOCOL_VERSION, "capabilities": {}, "clientInfo": {"name": "b", "version": "0"}},
        )
        elapsed = time.perf_counter() - start
    finally:
        client.close()
    return elapsed * 1e3
