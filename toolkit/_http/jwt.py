"""JWT access tokens checked on the resource server: signature (a static key or the issuer's JWKS), issuer, audience,
lifetime, then the scopes and subject as an `Identity`.

PyJWT does the cryptography and the registered-claim checks; this module chooses the key, keeps algorithms to the
key's own family (an RSA public key is never an HMAC secret), binds the audience to this server (RFC 8707: the
spec's servers "MUST validate that access tokens were issued specifically for them"), and fetches and caches the
JWKS with httpx. It is imported only when `toolkit.JWTVerifier` is used (the `jwt` extra).
"""

from __future__ import annotations

import copy
import logging
import time
from collections.abc import Collection, Mapping
from typing import Any

import anyio

try:
    import httpx
    import jwt
    from cryptography import x509
    from cryptography.hazmat.primitives.asymmetric import ec, ed448, ed25519, rsa
    from cryptography.hazmat.primitives.serialization import load_pem_public_key
except ImportError as exc:
    raise ImportError(
        f"JWTVerifier needs the jwt extra ({exc.name} is missing): in a clone of toolkit, pip install '.[http,jwt]'"
    ) from None

from toolkit._errors import InvalidTokenError

from .auth import Identity

__all__ = ["JWTVerifier"]

logger = logging.getLogger("toolkit.http")

_RSA = frozenset({"RS256", "RS384", "RS512", "PS256", "PS384", "PS512"})
_CURVES = {"secp256r1": "ES256", "secp384r1": "ES384", "secp521r1": "ES512", "secp256k1": "ES256K"}
_HMAC = frozenset({"HS256", "HS384", "HS512"})
#: What `algorithms=` defaults to: every asymmetric algorithm; each key then allows only those of its own type.
ASYMMETRIC = frozenset({*_RSA, *_CURVES.values(), "EdDSA"})

_PublicKey = rsa.RSAPublicKey | ec.EllipticCurvePublicKey | ed25519.Ed25519PublicKey | ed448.Ed448PublicKey
_Key = _PublicKey | bytes


def _family(key: _Key) -> frozenset[str]:
    """The algorithms a key can verify: the defence against algorithm confusion (RFC 8725 section 3.1).

    Keys shorter than PyJWT's minimum for an algorithm (RFC 7518: RSA 2048 bits, an HMAC secret the hash's size)
    verify nothing, rather than warn on every token.
    """
    if isinstance(key, bytes):
        return frozenset(alg for alg in _HMAC if len(key) * 8 >= int(alg[2:]))
    if isinstance(key, rsa.RSAPublicKey):
        return _RSA if key.key_size >= 2048 else frozenset()
    if isinstance(key, ec.EllipticCurvePublicKey):
        alg = _CURVES.get(key.curve.name)
        return frozenset({alg} if alg else ())
    return frozenset({"EdDSA"})


def _narrowed(algorithms: frozenset[str], jwk: Any) -> frozenset[str]:
    """`algorithms`, narrowed to the one a JWK names in its `alg` (RFC 7517 section 4.4), if it is a JWK naming one."""
    if isinstance(jwk, Mapping) and isinstance(jwk.get("alg"), str):
        return algorithms & {jwk["alg"]}
    return algorithms


def _static_key(key: Any) -> _Key:
    if isinstance(key, Mapping):
        parsed = jwt.PyJWK(dict(key)).key
        return parsed if isinstance(parsed, bytes) else _public(parsed)
    if isinstance(key, str):
        key = key.encode()
    if isinstance(key, bytes):
        if key.lstrip().startswith(b"-----BEGIN CERTIFICATE"):
            return _public(x509.load_pem_x509_certificate(key).public_key())
        if key.lstrip().startswith(b"-----BEGIN"):
            return _public(load_pem_public_key(key))
        if len(key) < 32:  # RFC 7518 section 3.2: at least the hash's size
            raise ValueError("an HMAC secret must be at least 32 bytes (use secrets.token_bytes(32))")
        return key
    return _public(key)


def _public(key: Any) -> _PublicKey:
    if isinstance(key, (rsa.RSAPublicKey, ec.EllipticCurvePublicKey, ed25519.Ed25519PublicKey, ed448.Ed448PublicKey)):
        return key
    raise TypeError(f"key= takes a public key (PEM, JWK or a cryptography public key) or an HMAC secret, got {key!r}")


def _canonical(uri: str) -> str:
    """`uri` with the parts RFC 3986 section 6.2 calls case-insensitive lowered, and `/` for an empty path."""
    scheme, sep, rest = uri.partition("://")
    if not sep:
        return uri
    authority, _, path = rest.partition("/")
    return f"{scheme.lower()}://{authority.lower()}/{path}"


class _KeySet:
    """An issuer's JWKS, fetched on first use, kept `ttl` seconds, fetched again for an unknown `kid` but never
    more often than once every `refetch_interval` seconds (so that tokens with made-up `kid`s cannot make the
    server flood the issuer), and kept when a fetch fails."""

    def __init__(
        self,
        url: str,
        ttl: float,
        refetch_interval: float,
        algorithms: frozenset[str],
        client: httpx.AsyncClient | None,
    ) -> None:
        self.url = url
        self._ttl = ttl
        self._interval = refetch_interval
        self._algorithms = algorithms
        self._client = client
        self._keys: list[tuple[str | None, _PublicKey, frozenset[str]]] = []
        self._fetched: float | None = None
        self._tried: float | None = None
        # Set while a fetch is under way, so that the requests arriving meanwhile wait for its keys instead of
        # fetching too. Made per fetch, inside the running event loop: the verifier itself belongs to no loop.
        self._fetching: anyio.Event | None = None

    async def find(self, kid: str | None, alg: str) -> tuple[_Key, frozenset[str]]:
        """The key named `kid` (or the only one that fits `alg`) and the algorithms it verifies; the set is fetched
        first when it is unknown or stale, or when it lacks that key.

        Raises:
            InvalidTokenError: no such key, or no key set could be fetched.
        """
        found = self._lookup(kid, alg)
        now = time.monotonic()
        if found is None or self._stale(now):
            await self._refresh(now)
            found = self._lookup(kid, alg)
        if found is not None:
            return found
        if self._fetched is None:
            raise InvalidTokenError("The authorization server's signing keys could not be fetched")
        raise InvalidTokenError("The token's signing key is unknown" if kid is not None else "The token names no key")

    def _stale(self, now: float) -> bool:
        """Whether the keys were fetched `ttl` seconds ago or more (or never)."""
        return self._fetched is None or now - self._fetched >= self._ttl

    async def _refresh(self, now: float) -> None:
        """Fetch the key set, unless a fetch is under way (then wait for it) or one was tried too recently."""
        if self._fetching is not None:
            await self._fetching.wait()
            return
        if self._tried is not None and now - self._tried < self._interval:
            return
        tried, self._tried = self._tried, now
        self._fetching = anyio.Event()
        try:
            await self._fetch()
        except BaseException:  # cancelled (its client went away): that was no try, the next one fetches
            self._tried = tried
            raise
        finally:
            self._fetching.set()
            self._fetching = None

    def _lookup(self, kid: str | None, alg: str) -> tuple[_Key, frozenset[str]] | None:
        """The key for a token's `kid` and `alg` among the keys fetched, or None."""
        if kid is None:  # unambiguous only when one key can verify this algorithm
            fitting = [(key, algs) for _, key, algs in self._keys if alg in algs]
            return fitting[0] if len(fitting) == 1 else None
        named = [(key, algs) for key_id, key, algs in self._keys if key_id == kid]
        # RFC 7517 lets keys of several types share a kid: the one that fits, else one that will be refused for it.
        fitting = [entry for entry in named if alg in entry[1]]
        return next(iter(fitting + named), None)

    async def _fetch(self) -> None:
        """Fetch the key set and keep its usable signing keys; keep the old ones (and log why) when that fails."""
        try:
            document = await self._download()
        except (httpx.HTTPError, ValueError) as exc:
            logger.warning("could not fetch the JWKS at %s: %s", self.url, exc)
            return
        keys = self._signing_keys(document)
        if not keys:
            logger.warning("the JWKS at %s has no usable signing key", self.url)
            return
        self._keys = keys
        self._fetched = time.monotonic()

    async def _download(self) -> Any:
        """The key set's JSON document, with the configured client or a new one.

        Raises:
            httpx.HTTPError: the request failed or was answered with an error status.
            ValueError: the body is not JSON.
        """
        if self._client is not None:
            response = await self._client.get(self.url, headers={"accept": "application/json"})
        else:
            async with httpx.AsyncClient(timeout=10.0) as client:
                response = await client.get(self.url, headers={"accept": "application/json"})
        response.raise_for_status()
        return response.json()

    def _signing_keys(self, document: Any) -> list[tuple[str | None, _PublicKey, frozenset[str]]]:
        """`(kid, key, algorithms)` of each usable signing key of a JWKS document, in its order."""
        entries = document.get("keys") if isinstance(document, dict) else None
        if not isinstance(entries, list):
            return []
        keys = [self._signing_key(entry) for entry in entries]
        return [key for key in keys if key is not None]

    def _signing_key(self, entry: Any) -> tuple[str | None, _PublicKey, frozenset[str]] | None:
        """`(kid, key, algorithms)` of one JWK, or None when it is no signing key of a type PyJWT reads."""
        # Symmetric keys have no place in a published key set.
        if not isinstance(entry, dict) or entry.get("use", "sig") != "sig" or entry.get("kty") == "oct":
            return None
        try:
            key = _public(jwt.PyJWK(entry).key)
        except (jwt.PyJWTError, TypeError, ValueError):
            return None
        kid = entry.get("kid")
        return (kid if isinstance(kid, str) else None, key, _narrowed(_family(key) & self._algorithms, entry))


class _StaticKey:
    """The one key given as `key=`, and the algorithms it verifies: found for every token."""

    def __init__(self, key: Any, accepted: frozenset[str]) -> None:
        """Parse `key`, keeping the algorithms of `accepted` that fit it.

        Raises:
            ValueError: the key verifies none of `accepted` (or is an HMAC secret under 32 bytes).
            TypeError: `key` is no key toolkit reads.
        """
        self.key = _static_key(key)
        self.algorithms = _narrowed(_family(self.key) & accepted, key)
        if not self.algorithms:
            kind = "an HMAC secret" if isinstance(self.key, bytes) else "this key"
            raise ValueError(
                f"{kind} verifies none of algorithms={sorted(accepted)}: name its algorithm (RSA keys need"
                " 2048 bits, HMAC secrets the hash's size: 32 bytes for HS256, 48 for HS384, 64 for HS512)"
            )

    async def find(self, kid: str | None, alg: str) -> tuple[_Key, frozenset[str]]:
        """The key and the algorithms it verifies, whatever the token names (`_KeySet.find`'s signature)."""
        return self.key, self.algorithms


def _scopes(claims: Mapping[str, Any]) -> frozenset[str]:
    # RFC 9068 / RFC 8693: `scope` is one space-separated string; Microsoft Entra and Okta send `scp`, as a
    # string or a list.
    found = claims.get("scope", claims.get("scp"))
    if isinstance(found, str):
        return frozenset(found.split())
    if isinstance(found, list):
        return frozenset(item for item in found if isinstance(item, str))
    return frozenset()


_REASONS: list[tuple[type[jwt.PyJWTError], str]] = [
    (jwt.ExpiredSignatureError, "The token has expired"),
    (jwt.ImmatureSignatureError, "The token is not valid yet"),
    (jwt.InvalidIssuerError, "The token was issued by another authorization server"),
    (jwt.InvalidSignatureError, "The token's signature is invalid"),
    (jwt.InvalidAlgorithmError, "The token's signing algorithm is not accepted"),
    (jwt.DecodeError, "The token is not a well-formed JWT"),
]


class JWTVerifier:
    """Check JWT access tokens issued by an OAuth authorization server, for `http_app(auth=...)`.

    A token is accepted when its signature verifies with the issuer's key, `iss` is `issuer`, `aud` names this
    server, and it is within `exp`/`nbf` (give or take `leeway`). Its `sub` becomes the identity's subject, its
    `scope` (or `scp`) the identity's scopes, `client_id` (or `azp`) its client, and every claim is in
    `Identity.claims`. A refusal tells the client why (`error_description`) without repeating the token.

    Needs the `jwt` extra: `pip install '.[http,jwt]'` in a clone of toolkit.

    Args:
        issuer: The authorization server's issuer identifier, exactly as it puts it in `iss`.
        jwks_url: Where the issuer publishes its signing keys (its metadata's `jwks_uri`). Fetched with httpx on
            first use and kept for `jwks_ttl` seconds.
        key: Instead of `jwks_url`: one verification key, as PEM, a JWK mapping, a `cryptography` public key,
            or a shared HMAC secret of at least 32 bytes (then `algorithms` must name the HS algorithm).
        audience: The `aud` value(s) a token must carry. Default: the app's `resource_url`, the URL clients
            connect to (RFC 8707), compared with scheme and host case-insensitive.
        algorithms: The signing algorithms accepted; default all asymmetric ones. Each key accepts only those of
            its own type (and its JWK `alg`, if it names one); `none` is never accepted.
        leeway: Seconds of clock skew allowed on `exp`, `nbf` and `iat`.
        jwks_ttl: Seconds the fetched key set is trusted before it is fetched again.
        jwks_refetch_interval: The least number of seconds between two fetches, also when a token names an unknown
            `kid` (a key rotation): tokens with made-up key ids cannot make the server hammer the issuer.
        http_client: The httpx client to fetch the JWKS with (proxies, custom CAs); default a new one per fetch.

    Raises:
        ValueError: Neither or both of `jwks_url` and `key`, `none` among the algorithms, a key that fits none
            of them, or an empty `audience`.

    Example:
        ```python
        from toolkit import JWTVerifier, Server

        server = Server("private")
        app = server.http_app(
            auth=JWTVerifier(
                issuer="https://example.eu.auth0.com/",
                jwks_url="https://example.eu.auth0.com/.well-known/jwks.json",
            ),
            authorization_servers=["https://example.eu.auth0.com/"],
            resource_url="https://mcp.example.com/mcp",
        )
        ```
    """

    def __init__(  # noqa: PLR0913 - the public keywords of JWTVerifier, documented in the API reference (docs/api.md)
        self,
        *,
        issuer: str,
        jwks_url: str | None = None,
        key: Any = None,
        audience: str | Collection[str] | None = None,
        algorithms: Collection[str] = ASYMMETRIC,
        leeway: float = 30.0,
        jwks_ttl: float = 600.0,
        jwks_refetch_interval: float = 30.0,
        http_client: httpx.AsyncClient | None = None,
    ) -> None:
        accepted = _accepted_algorithms(algorithms)
        self.issuer = issuer
        self.audience = _audiences(audience)
        self._algorithms = accepted
        self._leeway = leeway
        self._keys: _StaticKey | _KeySet
        if jwks_url is not None and key is None:
            self._keys = _KeySet(jwks_url, jwks_ttl, jwks_refetch_interval, accepted - _HMAC, http_client)
        elif key is not None and jwks_url is None:
            self._keys = _StaticKey(key, accepted)
        else:
            raise ValueError("JWTVerifier takes jwks_url= (the issuer's key set) or key= (one key), not both")
        self._accepted: frozenset[str] = frozenset(_canonical(aud) for aud in self.audience or ())

    def for_resource(self, resource_url: str | None, /) -> JWTVerifier:
        """This verifier with the app's resource URL as the audience, unless `audience=` was given.

        `http_app(auth=...)` calls it; the copy shares the cached key set.

        Raises:
            ValueError: No `audience=` and no `resource_url`: the audience would be whatever `Host` a request
                names, which an attacker chooses.
        """
        if self.audience is not None:
            return self
        if resource_url is None:
            raise ValueError(
                "JWTVerifier checks that tokens were issued for this server: give http_app(resource_url=...) "
                "(the URL clients connect to) or JWTVerifier(audience=...)"
            )
        bound = copy.copy(self)
        bound.audience = [resource_url]
        bound._accepted = frozenset({_canonical(resource_url)})
        return bound

    async def verify(self, token: str, /) -> Identity:
        """The identity of a valid token.

        Raises:
            InvalidTokenError: The token is not valid for this server; the message says why.
        """
        if self.audience is None:
            raise RuntimeError("JWTVerifier(audience=None) is bound to a resource by http_app(auth=...) only")
        alg, kid = _signing_header(token, self._algorithms)
        key, fitting = await self._keys.find(kid, alg)
        if alg not in fitting:
            raise InvalidTokenError("The token's signing algorithm does not fit its key")
        claims = self._decode(token, key, alg)
        if not claims["sub"]:  # sessions and rate limits are keyed by it
            raise InvalidTokenError("The token has no sub claim")
        if not self._issued_for_me(claims["aud"]):
            raise InvalidTokenError("The token was not issued for this server (audience)")
        return _identity(claims)

    def _decode(self, token: str, key: _Key, alg: str) -> dict[str, Any]:
        """The token's claims, once its signature, issuer and lifetime are checked and its required claims present.

        Raises:
            InvalidTokenError: one of these fails; the message says which.
        """
        try:
            claims: dict[str, Any] = jwt.decode(
                token,
                key,
                algorithms=[alg],
                issuer=self.issuer,
                leeway=self._leeway,
                # The audience is checked by `_issued_for_me`, with RFC 3986's case rules.
                options={"require": ["exp", "iss", "aud", "sub"], "verify_aud": False},
            )
        except jwt.MissingRequiredClaimError as exc:
            raise InvalidTokenError(f"The token has no {exc.claim} claim") from None
        except jwt.PyJWTError as exc:
            raise InvalidTokenError(_reason(exc)) from None
        return claims

    def _issued_for_me(self, aud: Any) -> bool:
        """Whether a token's `aud` (one audience or a list) names this server."""
        audiences = aud if isinstance(aud, list) else [aud]
        return any(_canonical(one) in self._accepted for one in audiences if isinstance(one, str))

    def __repr__(self) -> str:
        source = f"jwks_url={self._keys.url!r}" if isinstance(self._keys, _KeySet) else "key=..."
        return f"JWTVerifier(issuer={self.issuer!r}, {source}, audience={self.audience!r})"


def _accepted_algorithms(algorithms: Collection[str]) -> frozenset[str]:
    """`algorithms=`, checked: real signing algorithms toolkit knows.

    Raises:
        ValueError: none given, `none` among them, or one unknown.
    """
    accepted = frozenset(algorithms)
    if not accepted or any(alg.lower() == "none" for alg in accepted):
        raise ValueError("algorithms= must name real signing algorithms; 'none' is never accepted")
    unknown = accepted - ASYMMETRIC - _HMAC
    if unknown:
        raise ValueError(f"unknown signing algorithms {sorted(unknown)}; known: {sorted(ASYMMETRIC | _HMAC)}")
    return accepted


def _audiences(audience: str | Collection[str] | None) -> list[str] | None:
    """`audience=` as a list, or None when it is left to the app's resource URL.

    Raises:
        ValueError: an empty collection.
    """
    if audience is None:
        return None
    audiences = [audience] if isinstance(audience, str) else list(audience)
    if not audiences:
        raise ValueError("audience= must name at least one audience (or leave it out: the app's resource_url)")
    return audiences


def _signing_header(token: str, accepted: frozenset[str]) -> tuple[str, str | None]:
    """The algorithm and key id a token's header names, before its signature is checked.

    Raises:
        InvalidTokenError: no JWT header, an algorithm not `accepted`, or a key id that is not a string.
    """
    try:
        header = jwt.get_unverified_header(token)
    except jwt.PyJWTError:
        raise InvalidTokenError("The token is not a well-formed JWT") from None
    alg, kid = header.get("alg"), header.get("kid")
    if not isinstance(alg, str) or alg not in accepted:
        raise InvalidTokenError("The token's signing algorithm is not accepted")
    if kid is not None and not isinstance(kid, str):
        raise InvalidTokenError("The token is not a well-formed JWT")
    return alg, kid


def _reason(exc: jwt.PyJWTError) -> str:
    """What a refusal tells the client for PyJWT's error `exc` (never the token itself)."""
    for kind, text in _REASONS:
        if isinstance(exc, kind):
            return text
    return "The token is invalid"


def _identity(claims: dict[str, Any]) -> Identity:
    """The identity of a verified token's claims."""
    client_id = claims.get("client_id", claims.get("azp"))
    exp = claims["exp"]
    return Identity(
        subject=claims["sub"],
        scopes=_scopes(claims),
        client_id=client_id if isinstance(client_id, str) else None,
        expires_at=float(exp) if isinstance(exp, (int, float)) else None,
        claims=claims,
    )
