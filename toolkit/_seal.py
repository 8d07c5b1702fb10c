"""Sealed tokens: JSON a client carries for us and hands back unchanged, with its integrity and expiry checked.

Every signed token of toolkit is one of these, each kind with a purpose of its own: 2026-07-28's `requestState`
(basic/patterns/mrtr: "servers **MUST** treat `requestState` as an attacker-controlled input ... **MUST** protect
its integrity (e.g. HMAC or AEAD) and **MUST** reject state that fails verification"), and the `Mcp-Session-Id` of a
2025-11-25 session over HTTP (`_http/sessions.py`). The standard library has HMAC but no AEAD, so a token is signed,
not encrypted: a client can read what it carries (its own answers, its own capabilities), never change it.

A token is `v1.<key id>.<payload>.<mac>`, each part unpadded base64url (visible ASCII, so a token is a valid header
value). The payload is compact JSON with sorted keys, holding the caller's data, an expiry and a keyed digest of
the fields it is bound to (`bind`: the tool, a digest of its arguments, the caller's subject; none when there are
no such fields); the MAC is HMAC-SHA256 over everything before it, cut to 16 bytes (128 bits, as HMAC truncation
guidance allows). The binding is keyed with the key that signs the token, so that it never shows what it is bound
to (a user's name), and a token signed before a rotation is checked with its own key. Each purpose derives its own
key (and so its own key ids) from the secret, so one secret can serve several kinds of token without one kind ever
being accepted as another.

Rotation: the first secret signs; every secret verifies. Deploy `[old, new]` everywhere, then `[new, old]`, then,
after one time-to-live, `[new]`.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

from toolkit._protocol.jsonrpc import decode

__all__ = ["MIN_SECRET_BYTES", "Opened", "SealError", "Sealer", "digest", "secret_keys"]

MIN_SECRET_BYTES = 32
_VERSION = "v1"
_MAC_BYTES = 16


class SealError(ValueError):
    """A token failed verification. `reason` says which check, for logs; callers answer every reason alike.

    Attributes:
        reason: `"malformed"`, `"unknown_key"`, `"bad_mac"`, `"expired"` or `"mismatch"`.
    """

    def __init__(self, reason: str) -> None:
        super().__init__(f"sealed token rejected: {reason}")
        self.reason = reason


class Opened(NamedTuple):
    """What a verified token holds: its data, and until when it is valid (Unix time, whole seconds)."""

    data: Any
    expires: int


SecretOption = bytes | str | Sequence[bytes | str] | None
"""What `Server(secret=...)` takes: one secret, several (the first signs), or None for a random one per process."""


def secret_keys(secret: SecretOption) -> list[bytes]:
    """The secrets as bytes, checked; a fresh random one when `secret` is None.

    Raises:
        ValueError: a secret is shorter than 32 bytes, or the sequence is empty.
    """
    if secret is None:
        return [secrets.token_bytes(MIN_SECRET_BYTES)]
    given = [secret] if isinstance(secret, (bytes, str)) else list(secret)
    if not given:
        raise ValueError("secret= needs at least one secret")
    keys = [s.encode() if isinstance(s, str) else bytes(s) for s in given]
    short = [i for i, key in enumerate(keys) if len(key) < MIN_SECRET_BYTES]
    if short:
        raise ValueError(
            f"secret= needs at least {MIN_SECRET_BYTES} bytes per secret (secret {short[0]} is shorter); make one with "
            "python -c 'import secrets; print(secrets.token_hex(32))'"
        )
    return keys


def digest(value: Any, size: int = 22) -> str:
    """A short, stable digest of a JSON value (sorted keys), base64url: what a token binds arguments with."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False)
    return _b64(hashlib.sha256(text.encode()).digest())[:size]


class Sealer:
    """Seals and opens tokens for one purpose with a list of secrets.

    Args:
        secrets: The secrets, first one signing (see [`secret_keys`][toolkit._seal.secret_keys]).
        purpose: A label that keeps tokens of one kind from being accepted as another (`b"toolkit/request-state/v1"`).
        clock: Seconds since the epoch; tests inject one instead of sleeping.
    """

    __slots__ = ("_clock", "_keys", "_signing")

    def __init__(self, secrets: Sequence[bytes], purpose: bytes, *, clock: Callable[[], float] = time.time) -> None:
        keys: dict[str, bytes] = {}
        for secret in secrets:
            key = hmac.digest(secret, purpose, "sha256")
            keys.setdefault(_b64(hashlib.sha256(key).digest()[:4]), key)
        if not keys:
            raise ValueError("a Sealer needs at least one secret")
        self._keys = keys
        self._signing = next(iter(keys))
        self._clock = clock

    def seal(self, data: Any, *, bind: Mapping[str, Any], ttl: float) -> str:
        """A token carrying `data` (any JSON value), valid for `ttl` seconds, for the fields in `bind` only (with no
        fields, bound to nothing: the token carries no binding at all)."""
        key = self._keys[self._signing]
        payload = {"d": data, "x": int(self._clock() + ttl)}
        if bind:
            payload["b"] = self._binding(key, bind)
        body = _b64(json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode())
        head = f"{_VERSION}.{self._signing}.{body}"
        return f"{head}.{self._mac(key, head)}"

    def open(self, token: Any, *, bind: Mapping[str, Any], max_size: int = 1 << 20) -> Any:
        """The data sealed in `token`, once every check passes (`unseal` also says until when it is valid).

        Raises:
            SealError: the token is not a string of our format, its key is unknown, its MAC is wrong, it has
                expired, or it was sealed for other `bind` fields.
        """
        return self.unseal(token, bind=bind, max_size=max_size).data

    def unseal(self, token: Any, *, bind: Mapping[str, Any], max_size: int = 1 << 20) -> Opened:
        """`open`, with the token's expiry.

        Raises:
            SealError: as `open`.
        """
        key, payload = self._verified(token, max_size)
        if payload["x"] < self._clock():
            raise SealError("expired")
        bound = payload.get("b")
        if not bind:
            if bound is not None:
                raise SealError("mismatch")
        elif not isinstance(bound, str) or not hmac.compare_digest(bound, self._binding(key, bind)):
            raise SealError("mismatch")
        return Opened(payload.get("d"), payload["x"])

    def _verified(self, token: Any, max_size: int) -> tuple[bytes, dict[str, Any]]:
        """The signing key and the payload of a token whose MAC is right (nothing is parsed before)."""
        if not isinstance(token, str) or len(token) > max_size:
            raise SealError("malformed")
        parts = token.split(".")
        if len(parts) != 4 or parts[0] != _VERSION:
            raise SealError("malformed")
        _, kid, body, mac = parts
        key = self._keys.get(kid)
        if key is None:
            raise SealError("unknown_key")
        if not hmac.compare_digest(self._mac(key, f"{_VERSION}.{kid}.{body}"), mac):
            raise SealError("bad_mac")
        try:
            payload = decode(_unb64(body))
        except ValueError:
            raise SealError("malformed") from None
        if not isinstance(payload, dict) or not isinstance(payload.get("x"), int):
            raise SealError("malformed")
        return key, payload

    @staticmethod
    def _binding(key: bytes, bind: Mapping[str, Any]) -> str:
        # Apart from the MAC's input, which always starts with the version ("v1."), by its first byte.
        text = json.dumps(bind, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False)
        return _b64(hmac.digest(key, b"\0bind" + text.encode(), "sha256")[:_MAC_BYTES])

    @staticmethod
    def _mac(key: bytes, head: str) -> str:
        return _b64(hmac.digest(key, head.encode("ascii"), "sha256")[:_MAC_BYTES])


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    """Strict: a text that does not re-encode to itself (padding, stray bits, other alphabets) is refused."""
    try:
        data = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        raise ValueError("not base64url") from None
    if _b64(data) != text:
        raise ValueError("not canonical base64url")
    return data
