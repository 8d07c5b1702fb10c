"""The hand-written client: raw JSON lines over a child's pipes, blocking reads, nothing else."""

from __future__ import annotations

import io
import json
import subprocess
from typing import IO, Any, cast

PROTOCOL_VERSION = "2025-11-25"


class RawClient:
    """Spawns a stdio server and speaks JSON-RPC to it one line at a time."""

    def __init__(self, argv: list[str], *, buffered: bool = False, environ: dict[str, str] | None = None) -> None:
        """Spawn `argv`.

        Unbuffered, `readline` reads the child's stdout one byte per system call: 3-5x slower than the floor
        server for a short reply and seconds for a line of megabytes. `buffered=True` reads in chunks of
        64 KiB; every throughput row uses it (`call-stdio-raw` since issue 16, the scale rows always), while
        start-up and RSS rows, which read one reply, keep the default.
        """
        self.process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0, env=environ)
        stdin, stdout = self.process.stdin, self.process.stdout
        if stdin is None or stdout is None:
            raise RuntimeError("Popen gave no pipes")
        self._stdin = stdin
        self._stdout: IO[bytes] = io.BufferedReader(cast(io.RawIOBase, stdout), 1 << 16) if buffered else stdout
        self._id = 0

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Send one request and return its `result`, skipping any notification the server sends first."""
        self._id += 1
        self.send({"jsonrpc": "2.0", "id": self._id, "method": method, "params": params})
        while True:
            line = self._stdout.readline()
            if not line:
                raise RuntimeError(f"server exited (code {self.process.wait()}) before answering {method}")
            message = json.loads(line)
            if message.get("id") == self._id:
                if "error" in message:
                    raise RuntimeError(f"{method} failed: {message['error']}")
                result: dict[str, Any] = message["result"]
                return result

    def send(self, message: dict[str, Any]) -> None:
        self._stdin.write(json.dumps(message).encode() + b"\n")

    def initialize(self) -> dict[str, Any]:
        result = self.request(
            "initialize",
            {
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "bench", "version": "0"},
            },
        )
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return result

    def close(self) -> None:
        """Close stdin (the stdio way to say goodbye) and reap the child, killing it if it lingers."""
        self._stdin.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self._stdout.close()
