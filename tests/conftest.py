import signal

import pytest


def pytest_configure(config: pytest.Config) -> None:
    # The Ctrl-C tests send SIGINT to the processes they start, which inherit this one's handling of it: a suite
    # started in the background by a script (`cmd &` in a non-interactive shell, nohup) ignores SIGINT, and its
    # children would too (the servers never stopped: the tests hung). Ctrl-C is Python's KeyboardInterrupt again.
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


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
