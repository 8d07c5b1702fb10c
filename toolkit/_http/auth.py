"""Bearer-token authentication for the HTTP app: who is calling, and what they may do.

toolkit is an OAuth 2.0 *resource server* here (the spec's authorization pages): it checks the access token on
every request through a verifier the user gives, answers 401 with `WWW-Authenticate` pointing at its RFC 9728
Protected Resource Metadata, and 403 `insufficient_scope` when a tool needs a scope the token lacks. Getting
tokens (the authorization server, the OAuth flows) is someone else's job.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Awaitable, Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from toolkit._errors import InvalidTokenError
from toolkit._identity import Identity, current_identity
from toolkit._protocol.jsonrpc import INVALID_REQUEST, encode, error_response

__all__ = [
    "BearerAuth",
    "Identity",
    "Refusal",
    "Resource",
    "ResourceBound",
    "StaticTokenVerifier",
    "TokenVerifier",
    "current_identity",
    "to_verifier",
]


@runtime_checkable
class TokenVerifier(Protocol):
    """Turns a bearer token into an [`Identity`][toolkit.Identity], or refuses it."""

    async def verify(self, token: str, /) -> Identity | None:
        """The identity the token stands for, or None to refuse it (the client gets 401 `invalid_token`).

        Check everything that makes the token valid *for this server*: signature, expiry, and audience (the spec:
        servers "MUST validate that access tokens were issued specifically for them"). Raise
        [`InvalidTokenError`][toolkit.InvalidTokenError] instead of returning None to tell the client why.
        """
        ...


@runtime_checkable
class ResourceBound(Protocol):
    """A verifier that checks tokens against the URL of the endpoint it guards (JWTVerifier's default audience)."""

    def for_resource(self, resource_url: str | None, /) -> TokenVerifier:
        """The verifier for the endpoint at `resource_url` (None: `http_app(resource_url=)` was not given).

        Raises:
            ValueError: The verifier cannot check tokens without knowing the URL.
        """
        ...


class _Callable:
    __slots__ = ("_fn",)

    def __init__(self, fn: Callable[[str], Awaitable[Identity | None]]) -> None:
        self._fn = fn

    async def verify(self, token: str, /) -> Identity | None:
        return await self._fn(token)


def to_verifier(auth: TokenVerifier | Callable[[str], Awaitable[Identity | None]]) -> TokenVerifier:
    """A verifier for what `http_app(auth=...)` takes: a `TokenVerifier`, or an async function of the token."""
    if isinstance(auth, TokenVerifier):
        return auth
    if callable(auth):
        return _Callable(auth)
    raise TypeError(f"auth= takes a TokenVerifier or an async function(token) -> Identity | None, got {auth!r}")


class StaticTokenVerifier:
    """Accept a fixed set of tokens: for a server shared by a few people or services, or for tests.

    Tokens are kept as SHA-256 digests and compared in constant time, so neither memory dumps nor timing give
    them away.

    Args:
        tokens: One token (its identity's subject is `"static"`), or a mapping of token to `Identity`.
        scopes: With one token: the scopes it grants.

    Example:
        ```python
        import os
        from toolkit import Server, StaticTokenVerifier

        server = Server("private")
        app = server.http_app(auth=StaticTokenVerifier(os.environ.get("MCP_TOKEN", "a-long-random-token")))
        ```
    """

    def __init__(self, tokens: str | Mapping[str, Identity], *, scopes: Collection[str] = ()) -> None:
        mapping = {tokens: Identity("static", frozenset(scopes))} if isinstance(tokens, str) else dict(tokens)
        if not mapping or any(len(token) < 16 for token in mapping):
            raise ValueError("tokens must be at least 16 characters (use secrets.token_urlsafe(32))")
        self._digests = [(hashlib.sha256(token.encode()).digest(), identity) for token, identity in mapping.items()]

    async def verify(self, token: str, /) -> Identity | None:
        digest = hashlib.sha256(token.encode()).digest()
        found = None
        for known, identity in self._digests:  # every entry is compared: the time taken says nothing
            if hmac.compare_digest(digest, known):
                found = identity
        return found


class Refusal:
    """An HTTP answer that ends a request before it is served."""

    __slots__ = ("body", "headers", "status")

    def __init__(self, status: int, headers: list[tuple[bytes, bytes]], body: bytes) -> None:
        self.status = status
        self.headers = headers
        self.body = body


_WELL_KNOWN = "/.well-known/oauth-protected-resource"


def _quotable(text: str) -> str:
    """`text` as an RFC 6750 `error_description`: printable ASCII without `"` and `\\`, one line, bounded."""
    return "".join(c for c in text if " " <= c <= "~" and c not in '"\\')[:200]


def _scope_tokens(scopes: Collection[str]) -> list[str]:
    """The scopes a header may carry, sorted: RFC 6749 section 3.3's `scope-token = 1*( %x21 / %x23-5B / %x5D-7E )`.

    Scopes come from the token (a JWT's `scp` may hold anything): one with a quote, a backslash, a space, a control
    character or non-ASCII is left out rather than escaped, so that nothing a token says is ever written raw into a
    header (a CR LF would split it, and uvicorn drops a response whose header is not valid).
    """
    return sorted(s for s in scopes if s and all("!" <= c <= "~" and c not in '"\\' for c in s))


def _implied(hierarchy: Mapping[str, Collection[str]]) -> dict[str, frozenset[str]]:
    """Each broader scope with every scope it implies, directly or through others (cycles allowed)."""
    closure: dict[str, frozenset[str]] = {}
    for broad in hierarchy:
        seen: set[str] = set()
        todo = list(hierarchy[broad])
        while todo:
            scope = todo.pop()
            if scope not in seen:
                seen.add(scope)
                todo.extend(hierarchy.get(scope, ()))
        closure[broad] = frozenset(seen)
    return closure


@dataclass(frozen=True)
class Resource:
    """The protected resource an HTTP app describes (RFC 9728), from its options: where it is, who issues its
    tokens, and the scopes its tools need."""

    name: str
    url: str | None
    authorization_servers: Collection[str]
    scopes_supported: Collection[str] | None
    required_scopes: Mapping[str, Collection[str]]
    scope_implies: Mapping[str, Collection[str]] | None = None


class BearerAuth:
    """What the HTTP app does with `auth=`: check each request's token, describe the resource (RFC 9728)."""

    def __init__(self, verifier: TokenVerifier, path: str, described: Resource) -> None:
        resource_url, authorization_servers = described.url, described.authorization_servers
        scopes_supported, scope_implies = described.scopes_supported, described.scope_implies
        if not authorization_servers:
            # authorization: the metadata "MUST include the authorization_servers field containing at least one".
            raise ValueError("auth= needs authorization_servers=[...]: where clients get tokens (RFC 9728)")
        self.resource_url = resource_url.rstrip("/") if resource_url is not None else None
        self.verifier = verifier.for_resource(self.resource_url) if isinstance(verifier, ResourceBound) else verifier
        self.authorization_servers = list(authorization_servers)
        self.scopes_supported = sorted(scopes_supported) if scopes_supported is not None else None
        self.required_scopes = {name: frozenset(scopes) for name, scopes in described.required_scopes.items()}
        self.implied = _implied(scope_implies or {})
        self.resource_name = described.name
        # RFC 9728 section 3.1: the well-known path is inserted before the resource's path; the root form too.
        self.metadata_paths = frozenset({_WELL_KNOWN + (path if path != "/" else ""), _WELL_KNOWN})
        self._path = path

    def resource(self, base: str) -> str:
        """The canonical URL of the MCP endpoint (`base` is scheme://host of the request, when not configured)."""
        return self.resource_url or base + self._path

    def metadata_url(self, base: str) -> str:
        resource = self.resource(base)
        scheme, _, rest = resource.partition("://")
        host, _, path = rest.partition("/")
        return f"{scheme}://{host}{_WELL_KNOWN}{'/' + path if path else ''}"

    def metadata(self, base: str) -> bytes:
        document: dict[str, Any] = {
            "resource": self.resource(base),
            "authorization_servers": self.authorization_servers,
            "bearer_methods_supported": ["header"],
            "resource_name": self.resource_name,
        }
        if self.scopes_supported is not None:
            document["scopes_supported"] = self.scopes_supported
        return encode(document).encode()

    async def authenticate(self, authorization: str | None, base: str) -> Identity | Refusal:
        """The identity of a request's `Authorization: Bearer` token, or the 401 that refuses it."""
        scheme, _, token = (authorization or "").partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            # RFC 6750 section 3: a request without credentials gets the challenge, with no error code.
            challenge = f'Bearer resource_metadata="{self.metadata_url(base)}"'
            if self.scopes_supported:
                challenge += f', scope="{" ".join(_scope_tokens(self.scopes_supported))}"'
            return self._refuse(401, challenge, "Unauthorized: a bearer token is required")
        try:
            identity = await self.verifier.verify(token)
            reason = "The access token is invalid or expired"
        except InvalidTokenError as exc:
            identity, reason = None, _quotable(str(exc)) or "The access token is invalid"
        if identity is None:
            challenge = (
                f'Bearer error="invalid_token", error_description="{reason}", '
                f'resource_metadata="{self.metadata_url(base)}"'
            )
            return self._refuse(401, challenge, f"Unauthorized: {reason[:1].lower()}{reason[1:]}")
        return identity

    def check_scopes(self, tool: Any, identity: Identity, base: str, request_id: Any) -> Refusal | None:
        """The 403 for a call of `tool` whose token lacks a scope the tool needs (authorization: scope challenge)."""
        needed = self.required_scopes.get(tool) if isinstance(tool, str) else None
        if not needed or needed <= identity.scopes:
            return None
        # authorization (2026-07-28): servers "MUST account for scope hierarchies, where a broader scope implies
        # narrower ones": each granted scope counts with all it implies.
        implied = self.implied
        if implied and needed <= identity.scopes.union(*(implied.get(s, ()) for s in identity.scopes)):
            return None
        scope = " ".join(_scope_tokens(needed | identity.scopes))
        description = _quotable(f"{tool} needs the scope{'s' if len(needed) > 1 else ''} {' '.join(sorted(needed))}")
        challenge = (
            f'Bearer error="insufficient_scope", scope="{scope}", resource_metadata="{self.metadata_url(base)}", '
            f'error_description="{description}"'
        )
        return self._refuse(403, challenge, "Forbidden: insufficient scope", request_id)

    @staticmethod
    def _refuse(status: int, challenge: str, message: str, request_id: Any = None) -> Refusal:
        body = encode(error_response(request_id, INVALID_REQUEST, message)).encode()
        headers = [(b"www-authenticate", challenge.encode()), (b"content-type", b"application/json")]
        return Refusal(status, headers, body)
