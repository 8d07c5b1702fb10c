"""Serving the ASGI app on uvicorn: one process, or several workers sharing one socket.

The only module that imports uvicorn (the `http` extra). It binds the socket itself, so that it can say where it
listens (port 0 included) once clients can connect: tests and scripts wait for that line, never for a delay.
"""

from __future__ import annotations

import inspect
import json
import os
import secrets
import socket
import sys
import tempfile
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._http import HttpApp

__all__ = ["OPTIONS_ENV", "SECRET_ENV", "STORE_ENV", "TARGET_ENV", "serve_http", "serve_workers"]

# What `toolkit serve --workers N` hands its worker processes (read only by the workers' app factory, never at import).
TARGET_ENV = "TOOLKIT_HTTP_TARGET"
SECRET_ENV = "TOOLKIT_HTTP_SECRET"
OPTIONS_ENV = "TOOLKIT_HTTP_OPTIONS"
STORE_ENV = "TOOLKIT_HTTP_SESSION_STORE"  # the SQLite file of the ended sessions the workers share


def _uvicorn() -> Any:
    try:
        import uvicorn
    except ImportError:
        raise ImportError(
            "serving over HTTP needs uvicorn: pip install 'mcp-toolkit[http]'"
            " (from a checkout: pip install -e '.[http]')"
        ) from None
    return uvicorn


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP, not 0: asyncio turns Nagle off on accepted connections only then; with it on, every keep-alive
    # answer waits ~40 ms for the client's delayed ACK (measured: 46 ms a request, 2.8 ms with it).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host.strip("[]"), port))
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


def _announce(sock: socket.socket, path: str) -> None:
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    sys.stderr.write(f"toolkit: serving on http://{shown}:{port}{path}\n")
    sys.stderr.flush()


def serve_http(app: HttpApp, *, host: str = "127.0.0.1", port: int = 8000, log_level: str = "warning") -> None:
    """Serve `app` on uvicorn in this process until interrupted (Ctrl-C, SIGTERM: a graceful shutdown)."""
    uvicorn = _uvicorn()
    sock = _bind(host, port)
    config = uvicorn.Config(
        app,
        lifespan="on",
        log_level=log_level,
        timeout_graceful_shutdown=app.server.shutdown_grace,
    )
    server = _stopping_server(uvicorn, config)
    _announce(sock, app.path)
    server.run(sockets=[sock])


def _stopping_server(uvicorn: Any, config: Any) -> Any:
    """A uvicorn server that says so once it has shut down gracefully (before it re-raises the signal it caught)."""

    class Server(uvicorn.Server):  # type: ignore[misc]
        async def shutdown(self, sockets: Any = None) -> None:
            await super().shutdown(sockets=sockets)
            if not self.force_exit:
                _stopped()

    return Server(config)


def _stopped() -> None:
    sys.stderr.write("toolkit: stopped\n")
    sys.stderr.flush()


def serve_workers(
    factory: str,
    target: str,
    *,
    host: str,
    port: int,
    workers: int,
    options: dict[str, Any],
    log_level: str = "warning",
) -> None:
    """Serve the server of `target` (a file or module) in `workers` uvicorn processes sharing one socket.

    `factory` is the import string of the function each worker calls for its app. Every worker gets the same
    fresh session key, so any of them serves any request of a session, and one session store (an SQLite file in a
    temporary folder, removed on exit), so that a DELETE holds on all of them.
    """
    uvicorn = _uvicorn()
    os.environ[TARGET_ENV] = target
    os.environ.setdefault(SECRET_ENV, secrets.token_hex(32))
    os.environ[OPTIONS_ENV] = json.dumps(options)
    sock = _bind(host, port)
    config = uvicorn.Config(
        factory,
        factory=True,
        lifespan="on",
        log_level=log_level,
        workers=workers,
    )
    from uvicorn.supervisors import Multiprocess

    # uvicorn before 0.4x took the worker's entry point as `target`; later ones make it from the config.
    extra = {"target": uvicorn.Server(config).run} if "target" in inspect.signature(Multiprocess).parameters else {}
    with tempfile.TemporaryDirectory(prefix="toolkit-sessions-") as folder:
        os.environ.setdefault(STORE_ENV, os.path.join(folder, "sessions.db"))
        _announce(sock, options.get("path", "/mcp"))
        Multiprocess(config, sockets=[sock], **extra).run()
    _stopped()
