"""Point toolkit's pytest fixtures at the weather server built on a fake HTTP API."""

from __future__ import annotations

import pytest

from toolkit import Server

from . import fakes


@pytest.fixture
def fake_api() -> fakes.FakeAPI:
    """The fake behind the server, with no requests recorded yet."""
    fakes.api.requests.clear()
    return fakes.api


@pytest.fixture
def toolkit_server(fake_api: fakes.FakeAPI) -> Server:
    """The server that toolkit's fixtures (toolkit_client, toolkit_tester, ...) test."""
    return fakes.server
