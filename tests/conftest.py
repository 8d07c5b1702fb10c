import pytest


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


# -- protocol tests: a raw peer on the demo server, over each transport ----------------------------------

from contextlib import AbstractAsyncContextManager  # noqa: E402
from typing import Any  # noqa: E402

import wire  # noqa: E402


@pytest.fixture(params=["memory", "stdio"])
def connect(request: pytest.FixtureRequest, anyio_backend: str) -> wire.Connect:
    """`async with connect() as peer`: a raw peer on a fresh demo server, in memory or over stdio."""
    transport = str(request.param)

    def open_peer(**options: Any) -> AbstractAsyncContextManager[wire.Peer]:
        return wire.connect(transport, anyio_backend, **options)

    return open_peer


# -- a real Redis server (tests/redis_server.py): one for the session, started by the first test that needs it -----

from redis_server import redis_server, redis_url  # noqa: E402, F401
