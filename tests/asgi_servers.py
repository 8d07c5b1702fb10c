"""ASGI servers in child processes for the tests: uvicorn, gunicorn, hypercorn and granian (all in the `dev` extra),
each serving `tests/servers/http_app.py` on 127.0.0.1 with two workers.

`Spawned` starts one in a process group of its own, waits until it answers a health probe (polling, bounded, never
a fixed delay), and stops it with SIGTERM to its supervisor, then kills whatever is left of the group. The port
comes from the kernel (bind to port 0); should another process take it before the server binds it, the server
exits and is started again on a new one.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO

import httpx

HERE = Path(__file__).parent
APP_DIR = HERE / "servers"
TIMEOUT = 30.0  # any one wait; only a hang reaches it
SECRET = "a secret the test workers share, 32 bytes or more"

#: The command lines of docs/deploy.md, with the port left to fill in ({port}).
SERVERS: dict[str, list[str]] = {
    "uvicorn-one": [
        "-m",
        "uvicorn",
        "{app}",
        "--host",
        "127.0.0.1",
        "--port",
        "{port}",
    ],  # one process (tests/fleet.py)
    "uvicorn": ["-m", "uvicorn", "{app}", "--host", "127.0.0.1", "--port", "{port}", "--workers", "2"],
    "gunicorn+uvicorn-worker": [
        "-m",
        "gunicorn",
        "{app}",
        "-k",
        "uvicorn_worker.UvicornWorker",
        "-w",
        "2",
        "--bind",
        "127.0.0.1:{port}",
    ],
    "gunicorn-asgi": ["-m", "gunicorn", "{app}", "-k", "asgi", "-w", "2", "--bind", "127.0.0.1:{port}"],
    "hypercorn": ["-m", "hypercorn", "{app}", "--bind", "127.0.0.1:{port}", "--workers", "2"],
    "granian": [
        "-m",
        "granian",
        "--interface",
        "asgi",
        "--host",
        "127.0.0.1",
        "--port",
        "{port}",
        "--workers",
        "2",
        "{app}",
    ],
}

HEALTH_BODY = (
    b'{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{'
    b'"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}'
)
SERVER_INFO = '"io.modelcontextprotocol/serverInfo":{"name":"http-app","version":"1.0.0"}'
HEALTH_HEADERS = {
    "content-type": "application/json",
    "accept": "application/json, text/event-stream",
    "mcp-protocol-version": "2026-07-28",
    "mcp-method": "server/discover",
}


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Spawned:
    """One ASGI server (a name of `SERVERS`) serving `<module>:<app>` of tests/servers; `url` is its MCP endpoint.
    `token`: the bearer token the health probe sends to an app with `auth=`; `options`: added to its command line."""

    def __init__(
        self,
        name: str,
        app: str = "app",
        env: dict[str, str] | None = None,
        module: str = "http_app",
        token: str | None = None,
        *,
        options: Sequence[str] = (),
    ) -> None:
        self._probe = {**HEALTH_HEADERS, **({"authorization": f"Bearer {token}"} if token is not None else {})}
        self.name = name
        self._log: IO[str] = tempfile.TemporaryFile("w+")  # noqa: SIM115 (closed in close())
        environment = {**os.environ, "MCP_SECRET": SECRET, "PYTHONPATH": str(APP_DIR), **(env or {})}
        for _attempt in range(3):
            port = free_port()
            command = [
                sys.executable,
                *(arg.format(app=f"{module}:{app}", port=port) for arg in SERVERS[name]),
                *options,
            ]
            self.process = subprocess.Popen(
                command,
                cwd=APP_DIR,
                env=environment,
                stdin=subprocess.DEVNULL,
                stdout=self._log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group: the workers are stopped with it
            )
            self.url = f"http://127.0.0.1:{port}/mcp"
            if self._wait_ready():
                return
            if "in use" not in self.output():  # the port was taken in between: try another; else a real failure
                break
        output = self.output()
        self._log.close()
        raise AssertionError(f"{name} did not start:\n{output}")

    def _wait_ready(self) -> bool:
        deadline = time.monotonic() + TIMEOUT
        with httpx.Client(timeout=TIMEOUT) as http:
            while time.monotonic() < deadline:
                try:
                    response = http.post(self.url, content=HEALTH_BODY, headers=self._probe)
                    # Ours, not another process that took the port first (that one makes ours exit: tried again).
                    if response.status_code == 200 and SERVER_INFO in response.text:
                        return True
                except httpx.TransportError:
                    pass  # not listening yet
                try:  # the pause between two probes is a wait for the process: an early exit ends it
                    self.process.wait(timeout=0.05)
                except subprocess.TimeoutExpired:
                    continue
                return False
        self.close()
        raise AssertionError(f"{self.name} did not answer within {TIMEOUT} s:\n{self.output()}")

    def output(self) -> str:
        self._log.flush()
        self._log.seek(0)
        return self._log.read()

    def close(self) -> str:
        """Stop the server as a process manager would (SIGTERM to its supervisor), then kill what is left of its
        group (a helper such as multiprocessing's resource tracker may outlive it briefly); return its output."""
        with contextlib.suppress(ProcessLookupError):
            self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            pass
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=TIMEOUT)
        output = self.output()
        self._log.close()
        return output
