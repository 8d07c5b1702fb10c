"""A lean HTTP/1.1 load generator for `python -m benchmarks.http` where wrk is not installed.

Each connection writes one prepared POST (its JSON-RPC id changed per call) and reads the whole response (a JSON
body with Content-Length, or a chunked SSE stream to its last chunk) before the next: the same closed loop as
wrk's, with the parsing cut to what these servers send. On asyncio streams it costs a few tens of microseconds a
call, where httpx costs about a millisecond: with httpx the client, not the server, set the pace. Run it on CPUs
apart from the server's (`benchmarks.http` pins both).
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

__all__ = ["figures", "run"]

_ID = b"999999"  # where the per-call id goes in the body template (every place: a progress token too)


async def _read_response(reader: asyncio.StreamReader) -> int:
    """Read one whole response; its status."""
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head[9:12])
    length = None
    chunked = False
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        name = name.strip().lower()
        if name == b"content-length":
            length = int(value)
        elif name == b"transfer-encoding" and b"chunked" in value.lower():
            chunked = True
    if length is not None:
        await reader.readexactly(length)
    elif chunked:
        while True:
            size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
            await reader.readexactly(size + 2)  # the chunk and its CRLF
            if size == 0:
                break
    return status


async def _connection(
    address: tuple[str, int],
    request: tuple[bytes, list[bytes]],
    deadline: float,
    latencies: list[float],
    ids: Iterator[int],
) -> int:
    """One keep-alive connection's calls until `deadline`; how many were not answered with 200.

    Every call of every connection has an id of its own (`ids`, shared by the connections), as a session's requests
    in flight must.
    """
    reader, writer = await asyncio.open_connection(*address)
    start, pieces = request
    size = sum(map(len, pieces))
    errors = 0
    try:
        while (began := time.perf_counter()) < deadline:
            number = str(next(ids)).encode()
            body = number.join(pieces)
            writer.write(start + str(size + len(number) * (len(pieces) - 1)).encode() + b"\r\n\r\n" + body)
            errors += await _read_response(reader) != 200
            latencies.append(time.perf_counter() - began)
    finally:
        writer.close()
    return errors


async def _run(url: str, headers: dict[str, str], body: bytes, seconds: float, concurrency: int) -> dict[str, Any]:
    parts = urlsplit(url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    lines = [f"POST {parts.path or '/'} HTTP/1.1", f"host: {host}:{port}"]
    lines += [f"{name}: {value}" for name, value in headers.items() if name.lower() != "content-length"]
    pieces = body.split(_ID)
    start = ("\r\n".join(lines) + "\r\ncontent-length: ").encode()
    latencies: list[float] = []
    ids = itertools.count(1)
    deadline = time.perf_counter() + seconds
    began = time.perf_counter()
    errors = await asyncio.gather(
        *(_connection((host, port), (start, pieces), deadline, latencies, ids) for _ in range(concurrency))
    )
    return figures(latencies, time.perf_counter() - began, sum(errors))


def figures(latencies: list[float], elapsed: float, errors: int) -> dict[str, Any]:
    """A load's figures as `benchmarks.http` reads wrk's: calls, calls_per_s, p50_ms, p99_ms and errors."""
    latencies.sort()
    done = len(latencies)
    return {
        "calls": done,
        "calls_per_s": done / elapsed,
        "p50_ms": latencies[done // 2] * 1000,
        "p99_ms": latencies[min(done - 1, int(done * 0.99))] * 1000,
        "errors": errors,
    }


def run(url: str, headers: dict[str, str], body: bytes, seconds: float, concurrency: int) -> dict[str, Any]:
    """Load `url` with `concurrency` connections for `seconds`, POSTing `body` with each `999999` made the call's id.

    Returns calls, calls_per_s, p50_ms, p99_ms and errors, as `benchmarks.http` reads wrk's figures.
    """
    return asyncio.run(_run(url, headers, body, seconds, concurrency))
