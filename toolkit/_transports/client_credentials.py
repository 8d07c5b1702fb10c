"""`ClientCredentials`: the OAuth 2.0 client-credentials grant (RFC 6749, section 4.4) for `Client.http`, as an
`httpx.Auth`: a token fetched from the token endpoint when first needed, kept until shortly before it expires,
fetched again then, or at once when the server answers 401 (the request is sent again with the new token).

Needs the `http` extra (httpx), imported only by `toolkit.ClientCredentials`. The secret and the tokens are never put
in an error or the log: a failure names the token endpoint and its status only.
"""

from __future__ import annotations

import base64
import time
import urllib.parse
from collections.abc import AsyncGenerator, Generator
from typing import Any

import anyio
import httpx

__all__ = ["ClientCredentials"]

#: Seconds before a token's stated expiry at which it is fetched again (a request in flight must not carry a token
#: that expires on the way).
EARLY = 30.0


class ClientCredentials(httpx.Auth):
    """Bearer tokens from the OAuth 2.0 client-credentials grant, for a server that needs one
    (`Client.http(url, auth=...)`, `server.mount(url, auth=...)`).

    The client authenticates with HTTP Basic (`client_secret_basic`, RFC 6749 section 2.3.1). A token is shared by
    every request of the client, fetched once for many concurrent requests, and fetched again when it expires or when
    a request is answered 401.

    Args:
        token_url: The authorization server's token endpoint.
        client_id: The client's id.
        client_secret: The client's secret.
        scope: The scopes to ask for (space-separated), if any.
        audience: The resource the token is for (`audience`, as many providers take it), if any.

    Raises:
        ValueError: `token_url` is not an http(s) URL.
    """

    def __init__(
        self,
        token_url: str,
        client_id: str,
        client_secret: str,
        *,
        scope: str | None = None,
        audience: str | None = None,
    ) -> None:
        if not token_url.startswith(("http://", "https://")):
            raise ValueError(f"token_url must be an http(s) URL, got {token_url!r}")
        self.token_url = token_url
        self.client_id = client_id
        self._secret = client_secret
        self._form = {"grant_type": "client_credentials"}
        if scope:
            self._form["scope"] = scope
        if audience:
            self._form["audience"] = audience
        self._token: str | None = None
        self._expires = 0.0
        self._lock: anyio.Lock | None = None
        self.fetched = 0
        """How many tokens were fetched so far."""

    def __repr__(self) -> str:
        return f"ClientCredentials({self.token_url!r}, {self.client_id!r}, client_secret=...)"

    def sync_auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        raise RuntimeError("ClientCredentials works with httpx.AsyncClient only")

    async def async_auth_flow(self, request: httpx.Request) -> AsyncGenerator[httpx.Request, httpx.Response]:
        if self._lock is None:
            self._lock = anyio.Lock()
        token = self._token
        if token is None or time.monotonic() >= self._expires:
            async with self._lock:  # one fetch for the requests that all found the token missing
                if self._token is None or time.monotonic() >= self._expires:
                    await self._store((yield self._token_request()))
                token = self._token
        request.headers["Authorization"] = f"Bearer {token}"
        response = yield request
        if response.status_code != 401:
            return
        async with self._lock:
            if self._token == token:  # not fetched again by another request meanwhile
                await self._store((yield self._token_request()))
        request.headers["Authorization"] = f"Bearer {self._token}"
        yield request

    def _token_request(self) -> httpx.Request:
        return httpx.Request(
            "POST",
            self.token_url,
            data=self._form,
            headers={"Authorization": _basic(self.client_id, self._secret)},
        )

    async def _store(self, response: httpx.Response) -> None:
        await response.aread()
        body: Any = None
        if response.status_code == 200:
            try:
                body = response.json()
            except ValueError:
                body = None
        token = body.get("access_token") if isinstance(body, dict) else None
        if not isinstance(token, str) or not token:
            raise httpx.HTTPStatusError(
                f"the token endpoint {self.token_url} gave no access token (HTTP {response.status_code})",
                request=response.request,
                response=response,
            )
        lifetime = body.get("expires_in")
        seconds = float(lifetime) if isinstance(lifetime, (int, float)) and lifetime > 0 else 3600.0
        self._token, self._expires = token, time.monotonic() + max(seconds - EARLY, seconds / 2)
        self.fetched += 1


def _basic(client_id: str, secret: str) -> str:
    """HTTP Basic for a client, each part form-urlencoded first (RFC 6749, section 2.3.1)."""
    pair = f"{urllib.parse.quote_plus(client_id)}:{urllib.parse.quote_plus(secret)}"
    return "Basic " + base64.b64encode(pair.encode()).decode("ascii")
