"""A server whose one tool is sync and never returns, for the exit-at-EOF test: `python stuck_sync.py BACKEND`."""

from __future__ import annotations

import sys
import threading

from toolkit import Server

server = Server("stuck", shutdown_grace=0.1)
never = threading.Event()


@server.tool
def stuck() -> str:
    """Block forever on a worker thread (Python cannot stop a thread)."""
    print("stuck: started", file=sys.stderr, flush=True)  # lets a test know the thread is running
    never.wait()
    return "unreachable"


if __name__ == "__main__":
    server.run(backend="trio" if sys.argv[1:] == ["trio"] else "asyncio")
