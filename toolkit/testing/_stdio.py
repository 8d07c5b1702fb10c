"""Serving an in-process server from a new Python process over stdio: its command and its import path."""

from __future__ import annotations

import os
import sys
from types import ModuleType

from toolkit import Server

__all__ = ["stdio_command", "stdio_environment"]


def stdio_command(server: Server) -> list[str]:
    """A command that serves `server` over stdio in a new Python process: `python -m toolkit serve module:name`.

    The server must be a global of an imported module, so that the new process can import it. Run the command
    with [`stdio_environment()`][toolkit.testing.stdio_environment] so that it finds the same modules.

    Raises:
        LookupError: no imported module holds `server` as a global.
    """
    return [sys.executable, "-m", "toolkit", "serve", _locate(server)]


def stdio_environment() -> dict[str, str]:
    """Environment variables that give a new Python process this one's import path (`PYTHONPATH`)."""
    paths = _import_paths()
    if os.environ.get("PYTHONPATH"):
        paths.append(os.environ["PYTHONPATH"])
    return {"PYTHONPATH": os.pathsep.join(paths)}


def _locate(server: Server) -> str:
    found = [
        (_looks_like_test(name), name, attr)
        for name, module in list(sys.modules.items())
        if isinstance(module, ModuleType) and name != "__main__"
        for attr, value in list(vars(module).items())
        if value is server and not attr.startswith("_")
    ]
    if not found:
        raise LookupError(
            f"cannot find server {server.name!r} as a global of an imported module, so a new process cannot "
            "import it: define it at module level, or override the `toolkit_stdio_command` fixture"
        )
    # A server imported into a test module is served from the module that defines it.
    _, name, attr = min(found)
    return f"{name}:{attr}"


def _looks_like_test(name: str) -> bool:
    return any(part.startswith("test_") or part in ("conftest", "tests") for part in name.split("."))


def _import_paths() -> list[str]:
    prefixes = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    out: list[str] = []
    for entry in sys.path:
        full = os.path.realpath(entry or os.getcwd())
        if os.path.isdir(full) and not any(full.startswith(prefix + os.sep) for prefix in prefixes):
            out.append(full)
    return list(dict.fromkeys(out))
