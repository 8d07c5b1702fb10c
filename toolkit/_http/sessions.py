"""Signed session ids for handshake-era (2025-11-25) HTTP sessions: any worker with the key serves any request.

An id is `v1.<payload>.<mac>` (base64url, visible ASCII as the transport page requires). The payload holds what a
connection needs to serve the session without having seen its `initialize` (negotiated revision, the client
capabilities the server uses, the client's name and version), a random nonce (so the id is unguessable), an expiry
and, with authentication, a keyed hash of the identity it belongs to. The MAC (HMAC-SHA256 under a key derived for
this purpose only) makes it tamper-proof; nothing secret is in it. Pure code: no I/O.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import logging
import secrets
import time
from collections.abc import Sequence
from typing import Any

from toolkit._engine.session import SessionState
from toolkit._protocol.jsonrpc import decode, encode
from toolkit._protocol.types import HANDSHAKE_VERSIONS

__all__ = ["SessionCodec", "SessionId"]

logger = logging.getLogger("toolkit.http")

_PREFIX = "v1."
_PURPOSE = b"toolkit/session/v1"
_MAC_BYTES = 16
# The client capabilities a server acts on (server-to-client requests check them); anything else a client
# declares (`experimental`, extensions) is unbounded and stays out of a header.
_CAPABILITY_KEYS = ("sampling", "elicitation", "roots", "tasks")
_CAPABILITY_SIZE = 256
_INFO_SIZE = 64


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class SessionId:
    """What a verified session id says."""

    __slots__ = ("expires", "key_id", "nonce", "state", "subject_hash", "token")

    def __init__(
        self, token: str, nonce: str, state: SessionState, expires: float, subject_hash: str | None, *, key_id: str
    ) -> None:
        self.token = token
        """The id itself, as sent in `Mcp-Session-Id`."""
        self.nonce = nonce
        """Its random part: the key of what a process keeps about the session."""
        self.state = state
        self.expires = expires
        self.subject_hash = subject_hash
        """The keyed hash of the user it belongs to (with authentication), made with the key `key_id` names."""
        self.key_id = key_id


class SessionCodec:
    """Mints and verifies session ids with a key ring: the first key signs, every key verifies (rotation).

    Args:
        secrets_: The shared key(s), checked (`Server.share_secret`); `None` makes one random key for this process.
        ttl: Seconds a session id stays valid after `initialize`.
    """

    def __init__(self, secrets_: Sequence[bytes] | None, ttl: float) -> None:
        if secrets_ is None:
            ring: Sequence[bytes] = [secrets.token_bytes(32)]
            self.shared = False
        else:
            ring = secrets_
            if not ring:
                raise ValueError("a SessionCodec needs at least one secret")
            self.shared = True
        self.ttl = ttl
        # Per-purpose keys: a session MAC can never be replayed as a MAC of anything else made from the secret.
        self._keys = {
            hashlib.sha256(s).digest()[:4].hex(): hmac.new(s, _PURPOSE, hashlib.sha256).digest() for s in ring
        }
        self._signing = next(iter(self._keys))
        self._warned = False

    def subject_hash(self, subject: str, key_id: str | None = None) -> str:
        """`subject`'s hash under the key `key_id` (default: the signing key). A session's user is checked with the
        key that signed its id: after a rotation (`[new, old]`) the old sessions go on (docs/deploy.md#keys)."""
        key = self._keys[key_id if key_id is not None else self._signing]
        return _b64(hmac.new(key, subject.encode(), hashlib.sha256).digest()[:8])

    def mint(self, state: SessionState, subject: str | None = None) -> SessionId:
        nonce = _b64(secrets.token_bytes(16))
        expires = time.time() + self.ttl
        payload: dict[str, Any] = {
            "k": self._signing,
            "n": nonce,
            "e": int(expires),
            "v": state.version,
            "c": _bounded_capabilities(state.client_capabilities),
        }
        if state.client_info is not None:
            payload["i"] = [str(state.client_info.get(key, ""))[:_INFO_SIZE] for key in ("name", "version")]
        subject_hash = self.subject_hash(subject) if subject is not None else None
        if subject_hash is not None:
            payload["u"] = subject_hash
        body = _PREFIX + _b64(encode(payload).encode())
        mac = hmac.new(self._keys[self._signing], body.encode(), hashlib.sha256).digest()[:_MAC_BYTES]
        token = f"{body}.{_b64(mac)}"
        return SessionId(token, nonce, state, int(expires), subject_hash, key_id=self._signing)

    def verify(self, token: str) -> SessionId | None:
        """The session an id names, or None when it is malformed, forged, signed with an unknown key, or expired."""
        body, _, mac_text = token.rpartition(".")
        try:
            if not body.startswith(_PREFIX) or len(token) > 2048:
                raise ValueError(token)
            payload = decode(_unb64(body[len(_PREFIX) :]))
            mac = _unb64(mac_text)
            key = self._keys.get(payload["k"]) if isinstance(payload, dict) else None
        except (ValueError, binascii.Error, KeyError, TypeError):
            return None
        if key is None:
            if isinstance(payload, dict) and not self._warned:
                self._warned = True
                logger.warning(
                    "a session id signed with another key reached this process: give every worker the same secret "
                    "(Server(secret=...) or http_app(secret=...), see docs/deploy.md#keys); such sessions get 404"
                )
            return None
        expected = hmac.new(key, body.encode(), hashlib.sha256).digest()[:_MAC_BYTES]
        expires, version, nonce = payload.get("e"), payload.get("v"), payload.get("n")
        if (
            not hmac.compare_digest(mac, expected)
            or not isinstance(expires, int)
            or expires < time.time()
            or version not in HANDSHAKE_VERSIONS
        ):
            return None
        info = payload.get("i")
        client_info = {"name": info[0], "version": info[1]} if isinstance(info, list) and len(info) == 2 else None
        capabilities = payload.get("c")
        # A valid id means initialize succeeded; `initialized` may have gone to another worker: take it as sent.
        caps = capabilities if isinstance(capabilities, dict) else {}
        state = SessionState(str(version), caps, client_info, initialized=True)
        subject_hash = payload.get("u")
        subject_hash = subject_hash if isinstance(subject_hash, str) else None
        return SessionId(token, str(nonce), state, expires, subject_hash, key_id=payload["k"])


def _bounded_capabilities(capabilities: dict[str, Any]) -> dict[str, Any]:
    kept: dict[str, Any] = {}
    for key in _CAPABILITY_KEYS:
        value = capabilities.get(key)
        if isinstance(value, dict):
            kept[key] = value if len(encode(value)) <= _CAPABILITY_SIZE else {}
    return kept
