"""A client's OpenTelemetry (docs/observability.md): a CLIENT span per request and notification it sends, its context
in `params._meta`; a SERVER span per question of the server it answers; the session's duration."""

from __future__ import annotations

import time
from contextlib import AsyncExitStack
from typing import Any, Protocol

from toolkit._engine.telemetry import CLIENT_SESSION_DURATION, MCP_PROTOCOL_VERSION, Telemetry, find, network_attributes
from toolkit._protocol.client_eras import ClientEra

from .peer import ClientPeer, OnRequest

__all__ = ["ClientTracing"]


class _Connected(Protocol):
    """What the tracing reads of its client: the revision in use once connected."""

    @property
    def protocol_version(self) -> str | None: ...


class ClientTracing:
    """A client's telemetry, looked for each time it connects (`connecting`): while OpenTelemetry is not configured
    (no provider given, none set globally) requests go out as they are, with no span.

    Args:
        providers: The client's `tracer_provider` and `meter_provider` options.
        network: The transport's `network.transport` and `network.protocol.name` (`Client.stdio`, `Client.http` and
            an in-memory server set theirs).
        client: The client traced, for its protocol version.
    """

    def __init__(self, providers: tuple[Any, Any], network: tuple[str | None, str | None], client: _Connected) -> None:
        self._providers = providers
        self.network = network
        self._client = client
        self._telemetry: Telemetry | None = None

    def connecting(self, stack: AsyncExitStack) -> None:
        """The client connects: look for the telemetry to use; its session ends (its duration recorded) with `stack`."""
        self._telemetry = find(*self._providers, known=self._telemetry)
        if self._telemetry is not None:
            stack.callback(self._session_ended, self._telemetry, time.perf_counter())

    def answerer(self, answer: OnRequest) -> OnRequest:
        """What answers the server's questions: `answer`, inside a SERVER span of the server's trace when traced."""
        if self._telemetry is None:
            return answer
        telemetry = self._telemetry

        async def answer_traced(method: str, params: Any) -> dict[str, Any]:
            version = self._client.protocol_version
            return await telemetry.answering(answer, method, params, version, self.network)

        return answer_traced

    async def request(
        self, peer: ClientPeer, method: str, params: dict[str, Any], *, era: ClientEra, stream: bool
    ) -> Any:
        """Send a request through `peer` and wait for its result: a CLIENT span of its own when traced (an MRTR call's
        rounds are one each), its context sent in `params._meta`."""
        if self._telemetry is None:
            return await peer.request(method, params, stream=stream)
        with self._telemetry.sending(method, params, self._attributes(era)) as sending:
            sending.result = await peer.request(method, sending.params, stream=stream, send=sending.stamped(peer.send))
        return sending.result

    async def notify(self, peer: ClientPeer, method: str) -> None:
        """Send a notification through `peer` (a CLIENT span of its own when traced)."""
        if self._telemetry is None:
            await peer.notify(method)
            return
        with self._telemetry.sending(method, {}, self._attributes(None)) as sending:
            await peer.notify(method, sending.params or None)

    def _attributes(self, era: ClientEra | None) -> dict[str, Any]:
        """mcp.protocol.version (once known, or named by a stateless request of `era`) and the network attributes
        of the client's CLIENT spans."""
        attributes = network_attributes(self.network)
        version = self._client.protocol_version or (era.version if era is not None and era.stateless else None)
        if version is not None:
            attributes[MCP_PROTOCOL_VERSION] = version
        return attributes

    def _session_ended(self, telemetry: Telemetry, started: float) -> None:
        """mcp.client.session.duration: from connecting to closing."""
        seconds = time.perf_counter() - started
        telemetry.session_ended(CLIENT_SESSION_DURATION, seconds, self._client.protocol_version, self.network)
