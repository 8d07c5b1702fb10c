"""Sealed tokens (requestState): round trip, rotation, tampering, expiry, binding. The clock is injected."""

from __future__ import annotations

import base64

import pytest

from toolkit._seal import Sealer, SealError, digest, secret_keys

OLD = b"o" * 32
NEW = b"n" * 32
PURPOSE = b"toolkit/request-state/v1"
BIND = {"tool": "delete", "args": digest({"path": "/tmp/x"})}


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def test_a_sealed_value_opens_with_the_same_binding() -> None:
    sealer = Sealer([OLD], PURPOSE)
    data = {"log": [{"k": "confirm", "r": {"action": "accept"}}]}
    assert sealer.open(sealer.seal(data, bind=BIND, ttl=60), bind=BIND) == data


def test_rotation_the_first_secret_signs_and_every_secret_verifies() -> None:
    old_token = Sealer([OLD], PURPOSE).seal(1, bind=BIND, ttl=60)
    both = Sealer([NEW, OLD], PURPOSE)
    assert both.open(old_token, bind=BIND) == 1
    new_token = both.seal(2, bind=BIND, ttl=60)
    assert Sealer([NEW], PURPOSE).open(new_token, bind=BIND) == 2
    with pytest.raises(SealError) as caught:
        Sealer([OLD], PURPOSE).open(new_token, bind=BIND)
    assert caught.value.reason == "unknown_key"


def test_a_token_of_another_purpose_is_refused() -> None:
    token = Sealer([OLD], b"toolkit/session/v1").seal(1, bind=BIND, ttl=60)
    with pytest.raises(SealError) as caught:
        Sealer([OLD], PURPOSE).open(token, bind=BIND)
    assert caught.value.reason == "unknown_key"


def test_every_flipped_character_is_refused() -> None:
    sealer = Sealer([OLD], PURPOSE)
    token = sealer.seal({"a": [1, 2, 3]}, bind=BIND, ttl=60)
    for i, char in enumerate(token):
        flipped = token[:i] + ("A" if char != "A" else "B") + token[i + 1 :]
        with pytest.raises(SealError):
            sealer.open(flipped, bind=BIND)
    with pytest.raises(SealError):
        sealer.open(token + "-TAMPERED", bind=BIND)


@pytest.mark.parametrize("token", [None, 12, "", "v1", "v2.a.b.c", "v1.a.b", "v1.a.b.c.d", "x" * 100])
def test_malformed_tokens_are_refused(token: object) -> None:
    with pytest.raises(SealError):
        Sealer([OLD], PURPOSE).open(token, bind=BIND)


def test_a_token_expires_after_its_ttl() -> None:
    clock = Clock()
    sealer = Sealer([OLD], PURPOSE, clock=clock)
    token = sealer.seal("x", bind=BIND, ttl=900)
    clock.now += 899
    assert sealer.open(token, bind=BIND) == "x"
    clock.now += 2
    with pytest.raises(SealError) as caught:
        sealer.open(token, bind=BIND)
    assert caught.value.reason == "expired"


def test_a_token_bound_to_other_arguments_is_refused() -> None:
    sealer = Sealer([OLD], PURPOSE)
    token = sealer.seal("x", bind=BIND, ttl=60)
    with pytest.raises(SealError) as caught:
        sealer.open(token, bind={"tool": "delete", "args": digest({"path": "/tmp/y"})})
    assert caught.value.reason == "mismatch"
    with pytest.raises(SealError):
        sealer.open(token, bind={**BIND, "tool": "other"})


def test_oversized_tokens_are_refused_before_any_work() -> None:
    sealer = Sealer([OLD], PURPOSE)
    token = sealer.seal("x" * 100, bind=BIND, ttl=60)
    with pytest.raises(SealError):
        sealer.open(token, bind=BIND, max_size=50)


def test_secrets_must_be_long_enough_and_none_gives_a_random_one() -> None:
    with pytest.raises(ValueError, match="32 bytes"):
        secret_keys("short")
    with pytest.raises(ValueError, match="at least one"):
        secret_keys([])
    assert secret_keys("s" * 32) == [b"s" * 32]
    assert secret_keys([OLD, NEW.decode()]) == [OLD, NEW]
    first, second = secret_keys(None), secret_keys(None)
    assert len(first[0]) == 32
    assert first != second


def test_digests_ignore_key_order() -> None:
    assert digest({"a": 1, "b": [1, 2]}) == digest({"b": [1, 2], "a": 1})
    assert digest({"a": 1}) != digest({"a": 2})


def test_the_binding_is_a_keyed_digest_that_rotation_keeps() -> None:
    """What a token is bound to (a user's subject, say) cannot be read from it, nor guessed without the key; a
    token signed before a rotation is checked with the key that signed it."""
    bind = {**BIND, "sub": "alice@example.com"}
    token = Sealer([OLD], PURPOSE).seal("x", bind=bind, ttl=60)
    payload = base64.urlsafe_b64decode(token.split(".")[2] + "==")
    assert b"alice" not in payload
    assert BIND["args"].encode() not in payload
    rotated = Sealer([NEW, OLD], PURPOSE)
    assert rotated.open(token, bind=bind) == "x"
    with pytest.raises(SealError) as caught:
        rotated.open(token, bind={**BIND, "sub": "bob@example.com"})
    assert caught.value.reason == "mismatch"


def test_a_token_bound_to_nothing_carries_no_binding_and_is_refused_where_one_is_expected() -> None:
    """A session id without authentication is bound to no user: it carries no binding (shorter), and neither kind
    passes for the other."""
    sealer = Sealer([OLD], PURPOSE)
    unbound = sealer.seal("x", bind={}, ttl=60)
    assert b'"b"' not in base64.urlsafe_b64decode(unbound.split(".")[2] + "==")
    assert sealer.open(unbound, bind={}) == "x"
    bound = sealer.seal("x", bind={"sub": "alice"}, ttl=60)
    for token, bind in [(unbound, {"sub": "alice"}), (bound, {})]:
        with pytest.raises(SealError) as caught:
            sealer.open(token, bind=bind)
        assert caught.value.reason == "mismatch"


def test_unseal_says_until_when_a_token_is_valid() -> None:
    clock = Clock()
    sealer = Sealer([OLD], PURPOSE, clock=clock)
    opened = sealer.unseal(sealer.seal([1], bind=BIND, ttl=90.5), bind=BIND)
    assert opened.data == [1]
    assert opened.expires == int(clock.now + 90.5)
