"""The Host and Origin guards every request passes first: they stop DNS rebinding and foreign pages."""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import SplitResult, urlsplit

from toolkit._protocol.jsonrpc import INVALID_REQUEST

from .response import error_body

__all__ = ["LOOPBACK", "HostGuard"]

LOOPBACK = frozenset({"127.0.0.1", "localhost", "[::1]"})
_PASSED_MAX = 64  # distinct Host values remembered as allowed (a server has a few names; a flood of others is checked)


class HostGuard:
    """The allowed `Host` names (default: loopback; `*` any, `*.example.com` a suffix) and `Origin`s (default: the
    same origin, or a loopback page)."""

    __slots__ = ("_any_host", "_host_suffixes", "_hosts", "_origins", "passed")

    def __init__(self, allowed_hosts: Sequence[str] | None, allowed_origins: Sequence[str] | None) -> None:
        hosts = {h.lower() for h in (allowed_hosts if allowed_hosts is not None else LOOPBACK)}
        self._any_host = "*" in hosts
        self._host_suffixes = tuple(h[1:] for h in hosts if h.startswith("*."))
        self._hosts = frozenset(h for h in hosts if not h.startswith("*"))
        self._origins = frozenset(allowed_origins) if allowed_origins is not None else None
        # The Host values already allowed (bounded): a request that carries one of them and no Origin passes without
        # `check` (`HttpApp`): every request of a server's clients, after its first.
        self.passed: set[str] = set()

    def check(self, headers: dict[str, str]) -> tuple[int, bytes] | None:
        """The refusal (status, body) of a request whose Host or Origin is not allowed; None to serve it."""
        # The Host allow-list stops DNS rebinding (a page of evil.example whose name now points at 127.0.0.1): the
        # browser still sends `Host: evil.example`. 421 Misdirected Request, as the Python SDK answers.
        host = headers.get("host")
        if host is None or not (self._any_host or host in self._hosts or self._host_allowed(host)):
            return 421, error_body(None, INVALID_REQUEST, "Invalid Host header")
        origin = headers.get("origin")
        if origin is not None and not self._origin_allowed(origin, host):
            # transports: "If the Origin header is present and invalid, servers MUST respond with HTTP 403".
            return 403, error_body(None, INVALID_REQUEST, "Forbidden: Origin not allowed")
        if len(self.passed) < _PASSED_MAX:
            self.passed.add(host)
        return None

    def _host_allowed(self, host: str) -> bool:
        host = host.lower()
        if host.startswith("["):
            name = host[: host.find("]") + 1]
        else:
            name = host.rsplit(":", 1)[0] if host.count(":") == 1 else host
        return name in self._hosts or host in self._hosts or (bool(name) and name.endswith(self._host_suffixes))

    def _origin_allowed(self, origin: str, host: str) -> bool:
        """Whether a page of `origin` may call: one `allowed_origins` lists, the same origin (its Host already
        passed the allow-list), or a loopback page when the default list is used."""
        if self._listed(origin):
            return True
        try:
            parts = urlsplit(origin)
        except ValueError:
            return False
        if parts.scheme not in ("http", "https") or not parts.netloc:
            return False  # `null` (a sandboxed page, a file) is never allowed unless listed
        if parts.netloc.lower() == host.lower():
            return True
        return self._origins is None and _host_name(parts) in LOOPBACK

    def _listed(self, origin: str) -> bool:
        """Whether `allowed_origins` lists `origin` (or allows any, `*`)."""
        if self._origins is None:
            return False
        return "*" in self._origins or origin in self._origins


def _host_name(parts: SplitResult) -> str | None:
    """The host of a URL as a Host header writes it (an IPv6 address in brackets)."""
    name = parts.hostname
    if name is not None and ":" in name:
        return f"[{name}]"
    return name
