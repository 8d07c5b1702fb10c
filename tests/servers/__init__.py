"""The servers the tests share, each written once.

Every other file of this folder is a server: it runs as a script, or under `toolkit serve FILE` (or uvicorn and
the other ASGI servers) in a child process. A test that wants one in process gets a fresh copy from `load` or
`build`, so that it shares no state with another test; the constants name the files a child process runs.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from toolkit import Server

HERE = Path(__file__).resolve().parent
PROTOCOL_DEMO = HERE / "protocol_demo.py"  # every protocol feature: the raw-wire tests (wire.py)
HTTP_DEMO = HERE / "http_demo.py"  # add and steps (and, served, worker): the HTTP tests
HITL = HERE / "hitl_server.py"  # tools that ask the client: elicitation, sampling, input-required rounds
HTTP_SSE = HERE / "http_sse.py"  # serves itself with a fixed key: SSE resumption across a restart
ASKING_APP = HERE / "asking_app.py"  # an app with auth= for real workers, and the tokens it knows
SYNC_CONTEXT = HERE / "sync_context.py"  # the Context from sync tools on their worker threads
STUCK_SYNC = HERE / "stuck_sync.py"  # a sync tool that never returns, over stdio
MIDDLEWARE = HERE / "middleware_app.py"  # middleware of every kind, a hidden tool, a size limit: stdio and HTTP
LIFESPAN_STDIO = HERE / "lifespan_stdio.py"  # a lifespan that records its start and end, over stdio
APPS_DEMO = HERE / "apps_demo.py"  # MCP Apps: a tool with a page, an app-only tool, a plain tool
SEARCH = HERE / "search_app.py"  # tool search on: a pinned tool, a hidden one, a confirming one, a task tool
RAW_TOOLS = HERE / "raw_tools.py"  # written by hand: lists any tools given as JSON, answers every call with nothing
SHUTDOWN_APP = HERE / "shutdown_app.py"  # calls that outlast the shutdown grace, each way a call is served
GATEWAY_UPSTREAM = HERE / "gateway_upstream.py"  # every kind of result, progress, a hang, a death: the gateway's
SDK1 = HERE / "sdk1_server.py"  # the official Python SDK 1.x (FastMCP): runs on a venv of its own, not the suite's
SDK1_REQUIREMENTS = HERE / "sdk1_requirements.txt"  # that venv's packages, pinned


def load(path: Path, *, register: str | None = None) -> ModuleType:
    """The server module at `path`, freshly imported: each call runs it again (its own server, its own state).

    With `register`, the module is in `sys.modules` under that name while it runs and after (pydantic resolves a
    model's string annotations through the module named by its `__module__`).
    """
    spec = importlib.util.spec_from_file_location(register or path.stem, path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    if register is not None:
        sys.modules[register] = module
    spec.loader.exec_module(module)
    return module


def build(path: Path, *, register: str | None = None, **options: Any) -> Server:
    """A fresh server from the `build(**options)` of the server module at `path` (see `load`)."""
    server: Server = load(path, register=register).build(**options)
    return server


def hitl() -> Server:
    """A fresh server of tools that ask (`HITL`), its models resolvable through `sys.modules["hitl_server"]`."""
    return build(HITL, register="hitl_server")


def gateway_upstream(name: str = "upstream") -> Server:
    """A fresh upstream for the gateway tests (`GATEWAY_UPSTREAM`), its models resolvable by their module's name."""
    return build(GATEWAY_UPSTREAM, register="gateway_upstream", name=name)
