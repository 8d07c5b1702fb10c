"""`JWTVerifier` on the real path: `server.http_app(auth=JWTVerifier(...))` driven by `Client.http` over the in-process
ASGI transport, with an identity provider whose JWKS is served by an httpx `MockTransport` (the JWKS fetch is the
only thing faked). Each test runs on asyncio and trio.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import Any

import anyio
import anyio.lowlevel
import httpx
import jwt
import pytest
import wire
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from toolkit import Client, Context, InvalidTokenError, JWTVerifier, ProtocolError, Server, StreamingASGITransport

pytestmark = pytest.mark.anyio

ISSUER = "https://idp.example.com/"
JWKS_URL = "https://idp.example.com/.well-known/jwks.json"
RESOURCE = "https://mcp.example.com/mcp"
METADATA = "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
URL = "http://127.0.0.1:8000/mcp"

# Made once: RSA key generation costs tens of milliseconds.
KEY_A = rsa.generate_private_key(public_exponent=65537, key_size=2048)
KEY_B = rsa.generate_private_key(public_exponent=65537, key_size=2048)
KEY_EC = ec.generate_private_key(ec.SECP256R1())


def public_pem(key: rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey) -> bytes:
    return key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)


def jwk(key: rsa.RSAPrivateKey, kid: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key()))
    return {**data, "kid": kid, "use": "sig", "alg": "RS256"}


class IdentityProvider:
    """Signs tokens and publishes its JWKS (counting the fetches); `down` makes the JWKS answer 503."""

    def __init__(self) -> None:
        self.keys = {"a": KEY_A}
        self.unusable: list[dict[str, Any]] = []  # entries listed before the keys, which a verifier must skip
        self.fetches = 0
        self.down = False
        self.gate: anyio.Event | None = None  # when set, a fetch waits for it (after `fetching` is set)
        self.fetching = anyio.Event()
        self.transport = httpx.MockTransport(self.serve)

    async def serve(self, request: httpx.Request) -> httpx.Response:
        assert str(request.url) == JWKS_URL
        await anyio.lowlevel.checkpoint()  # as over a network: other requests run while the keys are fetched
        self.fetches += 1
        self.fetching.set()
        if self.gate is not None:
            await self.gate.wait()
        if self.down:
            return httpx.Response(503)
        return httpx.Response(200, json={"keys": [*self.unusable, *(jwk(key, kid) for kid, key in self.keys.items())]})

    def verifier(self, **options: Any) -> JWTVerifier:
        return JWTVerifier(
            issuer=ISSUER, jwks_url=JWKS_URL, http_client=httpx.AsyncClient(transport=self.transport), **options
        )


def claims(**changes: Any) -> dict[str, Any]:
    now = int(time.time())
    values = {
        "iss": ISSUER,
        "aud": RESOURCE,
        "sub": "alice",
        "scope": "tools read",
        "client_id": "claude",
        "iat": now,
        "exp": now + 300,
    }
    values.update(changes)
    return {name: value for name, value in values.items() if value is not None}


def token(key: Any = KEY_A, kid: str | None = "a", algorithm: str = "RS256", **changes: Any) -> str:
    return jwt.encode(claims(**changes), key, algorithm=algorithm, headers={"kid": kid} if kid else None)


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def hs256_with_public_key(kid: str) -> str:
    """The classic algorithm confusion: HS256 with the issuer's *public* RSA key as the HMAC secret."""
    header = b64(json.dumps({"alg": "HS256", "typ": "JWT", "kid": kid}).encode())
    signing_input = f"{header}.{b64(json.dumps(claims()).encode())}"
    signature = hmac.new(public_pem(KEY_A), signing_input.encode(), hashlib.sha256).digest()
    return f"{signing_input}.{b64(signature)}"


def make_server() -> Server:
    server = Server("jwt-demo")

    @server.tool
    def whoami(ctx: Context) -> str:
        """The caller as the token says."""
        identity = ctx.identity
        assert identity is not None
        return f"{identity.subject} {sorted(identity.scopes)} {identity.client_id} {identity.claims['iss']}"

    @server.tool
    def purge() -> str:
        """Needs the admin scope."""
        return "purged"

    return server


def make_app(verifier: JWTVerifier, **options: Any) -> Any:
    return make_server().http_app(
        auth=verifier,
        authorization_servers=[ISSUER],
        scopes_supported=["tools", "read", "admin"],
        required_scopes={"purge": {"admin"}},
        **{"resource_url": RESOURCE, **options},
    )


class Seen:
    """The HTTP responses the client received: statuses and challenges, checked beside what the client reports."""

    def __init__(self) -> None:
        self.responses: list[httpx.Response] = []

    async def record(self, response: httpx.Response) -> None:
        self.responses.append(response)

    @property
    def last(self) -> httpx.Response:
        return self.responses[-1]


async def call(app: Any, bearer: str, tool: str = "whoami", **options: Any) -> tuple[str | ProtocolError, Seen]:
    """The tool's text, or the error the client got, with the HTTP responses seen."""
    seen = Seen()
    headers = {"Authorization": f"Bearer {bearer}"}
    transport = StreamingASGITransport(app)
    with anyio.fail_after(wire.TIMEOUT):
        async with httpx.AsyncClient(
            transport=transport, base_url=URL, event_hooks={"response": [seen.record]}
        ) as http:
            try:  # refused at the handshake (401) or at the call (403)
                async with Client.http(URL, http_client=http, headers=headers, **options) as client:
                    try:
                        return (await client.call_tool(tool)).text, seen
                    except ProtocolError as exc:
                        return exc, seen
            except ProtocolError as exc:
                return exc, seen


def invalid_token(description: str) -> str:
    return f'Bearer error="invalid_token", error_description="{description}", resource_metadata="{METADATA}"'


async def refused(app: Any, bearer: str, **options: Any) -> str:
    """The `WWW-Authenticate` of a refused token, after checking the refusal end to end."""
    outcome, seen = await call(app, bearer, **options)
    assert isinstance(outcome, ProtocolError)
    assert outcome.code == -32600
    assert seen.last.status_code == 401
    for response in seen.responses:  # nothing the server says repeats the token
        assert bearer not in response.headers.get("www-authenticate", "")
        assert bearer.encode() not in await response.aread()
    challenge: str = seen.last.headers["www-authenticate"]
    reason = challenge.split('error_description="', 1)[1].split('"', 1)[0]
    assert outcome.message == f"Unauthorized: {reason[0].lower()}{reason[1:]}"  # the client is told why too
    return challenge


# -- accepted ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("protocol", ["2026-07-28", "handshake"])
async def test_a_valid_token_is_accepted_and_tools_see_its_subject_scopes_client_and_claims(protocol: str) -> None:
    idp = IdentityProvider()
    outcome, seen = await call(make_app(idp.verifier()), token(), protocol=protocol)
    assert outcome == f"alice ['read', 'tools'] claude {ISSUER}"
    assert all(response.is_success for response in seen.responses)  # every request of the session carried it
    assert idp.fetches == 1  # the key set is fetched once and cached for the connection's every request


async def test_scp_lists_azp_and_an_audience_list_naming_this_server_are_understood() -> None:
    idp = IdentityProvider()
    bearer = token(
        scope=None, scp=["tools", "read"], client_id=None, azp="cursor", aud=["other", "HTTPS://MCP.Example.COM/mcp"]
    )
    outcome, _ = await call(make_app(idp.verifier()), bearer)
    # Scheme and host are case-insensitive (RFC 3986); the path is not.
    assert outcome == f"alice ['read', 'tools'] cursor {ISSUER}"


async def test_a_token_expired_within_the_leeway_is_still_accepted() -> None:
    outcome, _ = await call(make_app(IdentityProvider().verifier(leeway=60)), token(exp=int(time.time()) - 30))
    assert isinstance(outcome, str)


async def test_a_static_public_key_accepts_its_own_algorithm_only() -> None:
    verifier = JWTVerifier(issuer=ISSUER, key=public_pem(KEY_EC), audience=RESOURCE)
    app = make_app(verifier)
    assert isinstance((await call(app, token(KEY_EC, kid=None, algorithm="ES256")))[0], str)
    assert await refused(app, token()) == invalid_token("The token's signing algorithm does not fit its key")


async def test_a_shared_hmac_secret_works_when_its_algorithm_is_named() -> None:
    secret = b"s" * 32
    verifier = JWTVerifier(issuer=ISSUER, key=secret, algorithms=["HS256"])
    app = make_app(verifier)
    assert isinstance((await call(app, token(secret, kid=None, algorithm="HS256")))[0], str)
    assert await refused(app, token(b"t" * 32, kid=None, algorithm="HS256")) == invalid_token(
        "The token's signature is invalid"
    )


# -- refused ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FromNow:
    """A time claim this many seconds from when the test runs: parametrize's values are made at collection, which
    precedes the test by the length of the suite (26 minutes under coverage on a busy machine: a token 'not valid
    for another 10 minutes' had become valid)."""

    seconds: int


@pytest.mark.parametrize(
    ("changes", "description"),
    [
        ({"exp": FromNow(-120)}, "The token has expired"),
        ({"nbf": FromNow(600)}, "The token is not valid yet"),
        ({"aud": "https://other.example.com/mcp"}, "The token was not issued for this server (audience)"),
        ({"aud": "https://mcp.example.com/MCP"}, "The token was not issued for this server (audience)"),
        ({"aud": None}, "The token has no aud claim"),
        ({"iss": "https://evil.example.com/"}, "The token was issued by another authorization server"),
        ({"exp": None}, "The token has no exp claim"),
        ({"sub": None}, "The token has no sub claim"),
        ({"sub": ""}, "The token has no sub claim"),
    ],
)
async def test_a_token_with_bad_claims_gets_401_invalid_token_saying_why(
    changes: dict[str, Any], description: str
) -> None:
    app = make_app(IdentityProvider().verifier())
    claims: dict[str, Any] = {
        k: int(time.time()) + v.seconds if isinstance(v, FromNow) else v for k, v in changes.items()
    }
    assert await refused(app, token(**claims)) == invalid_token(description)


async def test_a_token_signed_by_another_key_under_a_known_kid_has_an_invalid_signature() -> None:
    app = make_app(IdentityProvider().verifier())
    assert await refused(app, token(KEY_B, kid="a")) == invalid_token("The token's signature is invalid")


async def test_alg_none_and_garbage_are_refused() -> None:
    app = make_app(IdentityProvider().verifier())
    unsigned = jwt.encode(claims(), "", algorithm="none")
    assert await refused(app, unsigned) == invalid_token("The token's signing algorithm is not accepted")
    assert await refused(app, "not-a-jwt-at-all") == invalid_token("The token is not a well-formed JWT")


async def test_hs256_signed_with_the_public_key_is_refused_even_when_hs256_is_accepted() -> None:
    default = make_app(IdentityProvider().verifier())
    confused = hs256_with_public_key("a")
    assert await refused(default, confused) == invalid_token("The token's signing algorithm is not accepted")
    # Accepting HS256 too does not turn the published RSA key into an HMAC secret.
    lenient = make_app(IdentityProvider().verifier(algorithms=["RS256", "HS256"]))
    assert await refused(lenient, confused) == invalid_token("The token's signing algorithm does not fit its key")


async def test_a_tool_needing_a_scope_the_token_lacks_gets_403_insufficient_scope() -> None:
    app = make_app(IdentityProvider().verifier())
    outcome, seen = await call(app, token(), tool="purge")
    assert isinstance(outcome, ProtocolError)
    assert seen.last.status_code == 403
    assert seen.last.headers["www-authenticate"] == (
        f'Bearer error="insufficient_scope", scope="admin read tools", resource_metadata="{METADATA}", '
        'error_description="purge needs the scope admin"'
    )
    assert (await call(app, token(scope="tools admin"), tool="purge"))[0] == "purged"


# -- the key set --------------------------------------------------------------------------------------


async def test_an_unknown_kid_refetches_the_key_set_so_a_rotated_key_is_accepted() -> None:
    idp = IdentityProvider()
    app = make_app(idp.verifier(jwks_refetch_interval=0))
    modern = {"protocol": "2026-07-28"}  # one request per connection: one fetch per unknown kid
    assert isinstance((await call(app, token(), **modern))[0], str)
    assert idp.fetches == 1
    assert await refused(app, token(KEY_B, kid="b"), **modern) == invalid_token("The token's signing key is unknown")
    assert idp.fetches == 2
    idp.keys["b"] = KEY_B  # the issuer rotates: the new key is published
    assert isinstance((await call(app, token(KEY_B, kid="b"), **modern))[0], str)
    assert idp.fetches == 3
    assert isinstance((await call(app, token(), **modern))[0], str)  # the old key is still served
    assert idp.fetches == 3


async def test_unknown_kids_refetch_at_most_once_per_interval() -> None:
    idp = IdentityProvider()
    app = make_app(idp.verifier(jwks_refetch_interval=3600))
    for kid in ["made-up-1", "made-up-2", "made-up-3"]:
        assert await refused(app, token(KEY_B, kid=kid)) == invalid_token("The token's signing key is unknown")
    assert idp.fetches == 1


async def test_a_key_dropped_from_the_key_set_is_refused_once_the_cache_is_stale() -> None:
    idp = IdentityProvider()
    app = make_app(idp.verifier(jwks_ttl=0, jwks_refetch_interval=0))
    assert isinstance((await call(app, token()))[0], str)
    idp.keys = {"b": KEY_B}
    assert await refused(app, token()) == invalid_token("The token's signing key is unknown")


async def test_an_unreachable_key_set_refuses_tokens_until_it_answers_and_a_cached_one_outlives_outages() -> None:
    idp = IdentityProvider()
    idp.down = True
    app = make_app(idp.verifier(jwks_ttl=0, jwks_refetch_interval=0))
    assert await refused(app, token()) == invalid_token("The authorization server's signing keys could not be fetched")
    idp.down = False
    assert isinstance((await call(app, token()))[0], str)
    idp.down = True  # stale and unreachable: the keys it had still verify
    assert isinstance((await call(app, token()))[0], str)


@pytest.mark.parametrize("document", [{"keys": []}, {"keys": "a"}, ["not", "an", "object"]])
async def test_a_key_set_without_a_usable_key_is_no_key_set(document: Any) -> None:
    served = httpx.MockTransport(lambda request: httpx.Response(200, json=document))
    client = httpx.AsyncClient(transport=served)
    verifier = JWTVerifier(issuer=ISSUER, jwks_url=JWKS_URL, audience=RESOURCE, http_client=client)
    with pytest.raises(InvalidTokenError, match="signing keys could not be fetched"):
        await verifier.verify(token())


async def test_concurrent_first_requests_fetch_the_key_set_once() -> None:
    idp = IdentityProvider()
    verifier = idp.verifier(audience=RESOURCE)
    subjects: list[str] = []

    async def verify(subject: str) -> None:
        identity = await verifier.verify(token(sub=subject))
        subjects.append(identity.subject)

    with anyio.fail_after(wire.TIMEOUT):
        async with anyio.create_task_group() as tg:
            for i in range(5):
                tg.start_soon(verify, f"user-{i}")
    assert sorted(subjects) == [f"user-{i}" for i in range(5)]
    assert idp.fetches == 1


async def test_verify_raises_invalid_token_error_for_direct_use() -> None:
    verifier = IdentityProvider().verifier(audience=[RESOURCE, "https://api.example.com"])
    identity = await verifier.verify(token(aud="https://api.example.com"))
    assert (identity.subject, identity.scopes, identity.client_id) == ("alice", frozenset({"tools", "read"}), "claude")
    with pytest.raises(InvalidTokenError, match="expired"):
        await verifier.verify(token(exp=int(time.time()) - 120))


# -- configuration ------------------------------------------------------------------------------------


def test_without_resource_url_or_audience_the_app_refuses_to_start() -> None:
    with pytest.raises(ValueError, match="resource_url"):
        make_app(IdentityProvider().verifier(), resource_url=None)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({}, "jwks_url= .* or key="),
        ({"jwks_url": JWKS_URL, "key": public_pem(KEY_A)}, "not both"),
        ({"jwks_url": JWKS_URL, "audience": []}, "at least one audience"),
        ({"jwks_url": JWKS_URL, "algorithms": ["RS256", "none"]}, "'none' is never accepted"),
        ({"jwks_url": JWKS_URL, "algorithms": ["RS257"]}, "unknown signing algorithms"),
        ({"key": b"s" * 32}, "an HMAC secret verifies none"),
        ({"key": b"short", "algorithms": ["HS256"]}, "at least 32 bytes"),
        ({"key": b"s" * 32, "algorithms": ["HS512"]}, "64 for HS512"),
        ({"key": public_pem(KEY_EC), "algorithms": ["RS256"]}, "this key verifies none"),
    ],
)
def test_configuration_mistakes_are_reported_when_the_verifier_is_made(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        JWTVerifier(issuer=ISSUER, **options)


def test_a_verifier_made_outside_any_event_loop_serves_asyncio_and_trio_in_turn() -> None:
    # A module-level `app = server.http_app(auth=JWTVerifier(...))` belongs to no loop; nor may its key cache.
    idp = IdentityProvider()
    verifier = idp.verifier(audience=RESOURCE, jwks_ttl=0, jwks_refetch_interval=0)

    async def verify_two() -> list[str]:
        subjects: list[str] = []

        async def verify(subject: str) -> None:
            subjects.append((await verifier.verify(token(sub=subject))).subject)

        with anyio.fail_after(wire.TIMEOUT):
            async with anyio.create_task_group() as tg:
                tg.start_soon(verify, "one")
                tg.start_soon(verify, "two")
        return sorted(subjects)

    assert anyio.run(verify_two, backend="asyncio") == ["one", "two"]
    assert anyio.run(verify_two, backend="trio") == ["one", "two"]
    assert idp.fetches == 2  # one per cold start: the concurrent request waited for the first one's keys


async def test_a_custom_verifiers_reason_is_sent_as_one_quoted_ascii_line() -> None:
    async def verify(token: str) -> None:
        raise InvalidTokenError('Account "bob" is\r\n locked \\ café')

    app = make_server().http_app(auth=verify, authorization_servers=[ISSUER], resource_url=RESOURCE)
    assert await refused(app, "opaque-token") == invalid_token("Account bob is locked  caf")


async def test_a_token_without_kid_uses_the_only_key_that_fits_and_symmetric_or_encryption_keys_are_skipped() -> None:
    idp = IdentityProvider()
    secret = b"s" * 32
    idp.unusable = [
        {"kty": "oct", "kid": "a", "k": b64(secret)},  # an HMAC "key" under the RSA key's kid: never used
        {**jwk(KEY_B, "enc"), "use": "enc"},
        {"kty": "RSA", "kid": "broken", "n": "AQAB"},
    ]
    app = make_app(idp.verifier(algorithms=["RS256", "HS256"]))
    assert isinstance((await call(app, token(kid=None)))[0], str)
    assert await refused(app, token(secret, kid="a", algorithm="HS256")) == invalid_token(
        "The token's signing algorithm does not fit its key"
    )
    idp.keys["b"] = KEY_B
    lenient = make_app(idp.verifier(jwks_refetch_interval=0))
    assert await refused(lenient, token(kid=None)) == invalid_token("The token names no key")


async def test_a_fetch_cancelled_with_its_request_does_not_hold_back_the_next_one() -> None:
    idp = IdentityProvider()
    idp.gate = anyio.Event()
    verifier = idp.verifier(audience=RESOURCE)  # the default 30 s between fetches
    with anyio.fail_after(wire.TIMEOUT):
        async with anyio.create_task_group() as tg:
            tg.start_soon(verifier.verify, token())
            await idp.fetching.wait()
            tg.cancel_scope.cancel()  # the client went away while its request fetched the keys
        idp.gate.set()
        assert (await verifier.verify(token())).subject == "alice"
    assert idp.fetches == 2


def test_without_the_jwt_extra_the_import_error_names_it() -> None:
    code = "import sys\nsys.modules['jwt'] = None\nimport toolkit\ntoolkit.JWTVerifier\n"
    out = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True, timeout=60)
    assert out.returncode == 1
    assert (
        "ImportError: JWTVerifier needs the jwt extra (jwt is missing): "
        "in a clone of toolkit, pip install '.[http,jwt]'" in out.stderr
    )
