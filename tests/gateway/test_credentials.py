"""Upstream credentials: the OAuth 2.0 client-credentials grant against a token endpoint of the test's own (one token
for many calls, fetched again when the upstream answers 401), and secrets never in the log or an error."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest
from asgi_servers import Spawned
from servers.gateway_oauth_app import CLIENT_ID, CLIENT_SECRET, PROBE

from toolkit import Client, ClientCredentials, Server

pytestmark = pytest.mark.anyio


@pytest.fixture
def oauth_upstream() -> Iterator[Spawned]:
    server = Spawned("uvicorn-one", module="gateway_oauth_app", token=PROBE)
    try:
        yield server
    finally:
        server.close()


def token_url(upstream: Spawned) -> str:
    return upstream.url.removesuffix("/mcp") + "/token"


async def test_a_client_credentials_token_is_fetched_once_and_again_when_the_upstream_refuses_it(
    oauth_upstream: Spawned,
) -> None:
    credentials = ClientCredentials(token_url(oauth_upstream), CLIENT_ID, CLIENT_SECRET)
    gateway = Server("gateway")
    gateway.mount(oauth_upstream.url, auth=credentials)
    async with Client(gateway) as client:
        first = [(await client.call_tool("whoami")).text for _ in range(3)]
        fetched_before = credentials.fetched
        await client.call_tool("revoke")
        after = (await client.call_tool("whoami")).text
    assert fetched_before == 1
    assert len(set(first)) == 1
    assert first[0].startswith("token-")
    assert after != first[0]
    assert credentials.fetched == 2


async def test_a_refused_client_secret_is_a_clear_failure_that_never_shows_the_secret(
    oauth_upstream: Spawned, caplog: pytest.LogCaptureFixture
) -> None:
    wrong = "wrong-secret-that-must-not-leak-456"
    credentials = ClientCredentials(token_url(oauth_upstream), CLIENT_ID, wrong)
    gateway = Server("gateway")
    gateway.mount(oauth_upstream.url, auth=credentials, connect_timeout=10)
    with caplog.at_level(logging.DEBUG):
        async with Client(gateway) as client:
            assert await client.list_tools() == []
    assert f"the token endpoint {token_url(oauth_upstream)} gave no access token (HTTP 401)" in caplog.text
    assert wrong not in caplog.text
    assert wrong not in repr(credentials)


def test_client_credentials_needs_an_http_token_url() -> None:
    with pytest.raises(ValueError, match="token_url must be an http"):
        ClientCredentials("ftp://example.com/token", CLIENT_ID, CLIENT_SECRET)
