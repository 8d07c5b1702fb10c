"""A fleet for the tests: several real server processes on 127.0.0.1 behind a round-robin proxy (fleet_proxy.py), so
that a client sees one URL and every one of its requests goes to the next process, with no affinity at all.

Two shapes, as docs/deploy.md deploys them:

- `Fleet.machines(n, redis_url)`: n single uvicorn processes on n ports (`uvicorn fleet_app:app`), sharing one
  key and one Redis (`MCP_REDIS_URL`): n machines behind a load balancer;
- `Fleet.workers(n)`: `toolkit serve fleet_app.py:server --http --workers n`, no Redis: one machine, whose workers
  share one socket (the proxy sends each request on a fresh connection, which the kernel hands to any worker).

The proxy validates every JSON-RPC message a server sends against the official schema of its revision; `close`
fails the test if one was not valid, or if a server logged a traceback.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import servers
from asgi_servers import TIMEOUT, Spawned
from redis_server import RedisServer
from served import Served, follow

HERE = Path(__file__).parent
APP = servers.HERE / "fleet_app.py"


class Fleet:
    """Server processes behind one round-robin proxy; `url` is the proxy's MCP endpoint."""

    def __init__(self, ports: list[int], members: list[Spawned] | Served) -> None:
        self.members = members
        self.ports = ports
        self.redis: RedisServer | None = None  # the Redis the processes share, when a test holds it here
        self.proxy = subprocess.Popen(
            [sys.executable, str(HERE / "fleet_proxy.py"), *map(str, ports)],
            cwd=HERE,
            stdin=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.said: list[str] = []
        assert self.proxy.stderr is not None
        self.reader, lines = follow(self.proxy.stderr, self.said)
        line = lines.get(timeout=TIMEOUT)
        if not line.startswith("proxying on "):
            self.close()
            raise AssertionError(f"the proxy did not start: {''.join(self.said)}")
        self.url = line.removeprefix("proxying on ").strip() + "/mcp"

    @classmethod
    def machines(cls, count: int, redis_url: str, **env: str) -> Fleet:
        """`count` single uvicorn processes sharing the Redis at `redis_url`."""
        members: list[Spawned] = []
        try:
            for _ in range(count):
                members.append(Spawned("uvicorn-one", module="fleet_app", env={"MCP_REDIS_URL": redis_url, **env}))
        except BaseException:
            for member in members:
                member.close()
            raise
        return cls([int(m.url.rsplit(":", 1)[1].split("/")[0]) for m in members], members)

    @classmethod
    def workers(cls, count: int) -> Fleet:
        """`toolkit serve fleet_app.py:server --http --workers count`: one machine, no Redis."""
        served = Served(Path(f"{APP}:server"), "--workers", str(count))
        return cls([int(served.url.rsplit(":", 1)[1].split("/")[0])], served)

    def kill(self, pid: int) -> None:
        """Kill one server process at once (SIGKILL: no goodbye to anyone)."""
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)

    def close(self) -> None:
        """Stop the proxy and the servers; fail if the proxy saw an invalid message or a server a traceback."""
        self.proxy.terminate()
        try:
            self.proxy.wait(timeout=TIMEOUT)
        finally:
            self.reader.join(timeout=TIMEOUT)
            assert self.proxy.stderr is not None
            self.proxy.stderr.close()
        outputs: list[str] = []
        if isinstance(self.members, Served):
            self.members.close()
            outputs.append("".join(self.members.stderr))
        else:
            outputs.extend(member.close() for member in self.members)
        said = "".join(self.said)
        assert "invalid:" not in said, said
        assert "Traceback" not in said, said
        for output in outputs:
            assert "Traceback" not in output, output

    @classmethod
    @contextlib.contextmanager
    def running(cls, kind: str, count: int = 3, **env: str) -> Iterator[Fleet]:
        """A fleet of `count` processes for the block: `"redis"` (machines sharing a Redis of their own, started
        here and held as `redis`; `env` for the processes) or `"workers"` (`toolkit serve --workers count`)."""
        if kind == "workers":
            fleet = cls.workers(count)
            yield fleet
            fleet.close()
            return
        redis = RedisServer()
        redis.start()
        try:
            fleet = cls.machines(count, redis.url, **env)
            fleet.redis = redis
            yield fleet
            fleet.close()
        finally:
            redis.stop()

    @property
    def checked(self) -> int:
        """How many server messages the proxy has validated (said once it stopped)."""
        for line in self.said:
            if line.startswith("checked "):
                return int(line.split()[1])
        return 0
