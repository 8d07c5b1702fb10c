"""`Mount`: a mounted server's tools served as the mounting server's own (`Server.mount`).

Each tool the upstream lists becomes a `Tool` of the mounting server's registry (`forwarded`: its definition renamed
`{prefix}_{name}`, its calls forwarded), so that it is listed, filtered, profiled, linted and called as a local tool
is: through the server's middleware, `tool_filter`, timeouts, rate limits, scopes and telemetry.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from typing_extensions import TypedDict

from toolkit._call.context import Context
from toolkit._client.client import Client, ClientOptions, ProtocolMode, Servable
from toolkit._definition.tool import Tool, forwarded
from toolkit._engine.registry import Registry
from toolkit._errors import ToolDefinitionError
from toolkit._protocol.types import ToolDefinition

from .inprocess import InProcess
from .upstream import Reconnect, Upstream, upstream_label

__all__ = ["Mount", "MountOptions", "ToolSelection", "UpstreamTarget"]

logger = logging.getLogger("toolkit.gateway")

UpstreamTarget = Servable | Sequence[str] | str
"""What `Server.mount` takes: a toolkit `Server` (in memory), a command to start (stdio), or a URL (Streamable HTTP)."""

ToolSelection = Sequence[str] | Callable[[ToolDefinition], bool] | None
"""Which of the upstream's tools to serve: their names (upstream names), a predicate of each definition, or all."""


class MountOptions(TypedDict, total=False):
    """The keyword options of `Server.mount` (documented there), declared once."""

    prefix: str | None
    tools: ToolSelection
    env: Mapping[str, str] | None
    cwd: str | os.PathLike[str] | None
    headers: Mapping[str, str] | None
    auth: Any
    connect_timeout: float
    protocol: ProtocolMode


class Mount:
    """One mounted server: its connection (`Upstream`) and the tools of it this server serves."""

    def __init__(self, registry: Registry, target: UpstreamTarget, options: MountOptions) -> None:
        _check_options(options)
        self._registry = registry
        prefix = options.get("prefix")
        self._prefix = f"{prefix}_" if prefix else ""
        self._select = _selection(options.get("tools"))
        self._names: set[str] = set()  # the names its tools are served as now
        make, reconnect = _client_maker(target, options)
        protocol = options.get("protocol", "auto")
        if protocol not in ("auto", "2026-07-28", "handshake"):
            raise ValueError(f"protocol= is 'auto', '2026-07-28' or 'handshake', got {protocol!r}")
        # A toolkit server in memory: its calls served by its own pipeline (`inprocess.py`), its tools' task support
        # read from its own tools (a 2026-07-28 listing says nothing of tasks).
        local = getattr(target, "registry", None)
        self._local = local if isinstance(local, Registry) else None
        in_process = functools.partial(InProcess, self._local, registry) if self._local is not None else None
        timeout = options.get("connect_timeout", 30.0)
        self.upstream = Upstream(
            # The gateway's providers: a call's CLIENT span upstream continues the trace of its SERVER span here.
            lambda client_options: make(
                {
                    **client_options,
                    "protocol": protocol,
                    "tracer_provider": registry.tracer_provider,
                    "meter_provider": registry.meter_provider,
                }
            ),
            upstream_label(target),
            self._serve,
            reconnect=reconnect,
            connect_timeout=timeout,
            in_process=in_process,
        )

    def connected(self) -> contextlib.AbstractAsyncContextManager[None]:
        """Connected while the mounting server runs (the registry enters it with the lifespan)."""
        return self.upstream.running()

    def _serve(self, definitions: list[ToolDefinition]) -> None:
        """Serve the upstream's tools (the ones selected) instead of those it listed before, in the registry."""
        registry = self._registry
        kept = {name: t for name, t in registry.tools.items() if name not in self._names}
        mine = self._tools_of(definitions, kept)
        old = [(n, registry.tools[n].definition) for n in self._names if n in registry.tools]
        changed = old != [(n, t.definition) for n, t in mine.items()]
        self._names = set(mine)
        if changed:
            registry.set_tools({**kept, **mine})

    def _tools_of(self, definitions: list[ToolDefinition], taken: Mapping[str, Any]) -> dict[str, Tool[Any, Any]]:
        """The selected tools of `definitions`, by the names they are served as; one whose name is `taken` (or
        appears twice) or is no valid tool name is left out, and logged."""
        mine: dict[str, Tool[Any, Any]] = {}
        for definition in definitions:
            if not self._select(definition):
                continue
            name = self._prefix + definition.name
            if name in taken or name in mine:
                logger.error("upstream %s: its tool %r is not served: the name is taken", self.upstream.label, name)
                continue
            try:
                mine[name] = self._tool(definition, name)
            except ToolDefinitionError as exc:  # a name MCP does not allow (too long with the prefix, a space)
                logger.error("upstream %s: its tool %r is not served: %s", self.upstream.label, name, exc)
        return mine

    def _tool(self, definition: ToolDefinition, name: str) -> Tool[Any, Any]:
        upstream, upstream_name = self.upstream, definition.name

        async def forward(arguments: dict[str, Any], ctx: Context) -> dict[str, Any]:
            return await upstream.call(upstream_name, arguments, ctx)

        # A tool the upstream may run as a task (2025-11-25's `execution.taskSupport`) may be one here too: the
        # gateway's task waits for the upstream's call, which runs as the upstream's task when it must. A 2026-07-28
        # listing says nothing of tasks (its server decides per call); a toolkit server in memory says it still, in
        # its own tool's definition.
        own = self._local.tools.get(definition.name) if self._local is not None else None
        execution = definition.execution or (own.definition.execution if own is not None else None)
        support = (execution or {}).get("taskSupport")
        task = support if support in ("optional", "required") else None
        return forwarded(definition.model_copy(update={"name": name, "execution": execution}), forward, task=task)


def _check_options(options: MountOptions) -> None:
    unknown = sorted(options.keys() - MountOptions.__optional_keys__)
    if unknown:
        import difflib

        close = difflib.get_close_matches(unknown[0], sorted(MountOptions.__optional_keys__), n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise TypeError(f"mount() got an unexpected keyword argument {unknown[0]!r}{hint}")
    prefix = options.get("prefix")
    if prefix is not None and not re.fullmatch(r"[A-Za-z0-9_.-]{1,64}", prefix):
        raise ValueError(f"prefix= must be 1-64 characters of A-Z, a-z, 0-9, '_', '.' or '-', got {prefix!r}")


def _selection(tools: ToolSelection) -> Callable[[ToolDefinition], bool]:
    if tools is None:
        return lambda definition: True
    if callable(tools):
        return tools
    if isinstance(tools, str):
        raise TypeError("tools= takes a sequence of tool names or a predicate, not one string")
    wanted = frozenset(tools)
    return lambda definition: definition.name in wanted


def _client_maker(target: UpstreamTarget, mount: MountOptions) -> tuple[Callable[[ClientOptions], Client], Reconnect]:
    """How to make a client of `target`, and when to reconnect after the connection is lost.

    Raises:
        ValueError: a string that is no http(s) URL.
        TypeError: an option that does not fit the kind of target, or a target of no known kind.
    """
    if isinstance(target, str):
        return _http_client(target, mount), "backoff"
    _refuse(mount, ("headers", "auth"), "headers= and auth= are for a URL (Streamable HTTP), not a command or a server")
    if isinstance(target, Sequence):
        return _stdio_client(target, mount), "on_call"
    return _memory_client(target, mount), "on_call"


def _refuse(mount: MountOptions, names: tuple[str, ...], problem: str) -> None:
    """Refuse the options `names` of `mount`, for a target they do not fit.

    Raises:
        TypeError: one of them is given (not None): `problem`.
    """
    if any(mount.get(name) is not None for name in names):
        raise TypeError(problem)


def _http_client(url: str, mount: MountOptions) -> Callable[[ClientOptions], Client]:
    """How to make a Streamable HTTP client of `url`, with the mount's headers and auth."""
    if not url.startswith(("http://", "https://")):
        raise ValueError(f"mount() takes a URL starting with http:// or https://, or a command list; got {url!r}")
    _refuse(mount, ("env", "cwd"), "env= and cwd= are for a command (stdio), not a URL")
    headers, auth = mount.get("headers"), mount.get("auth")
    return lambda options: Client.http(url, headers=headers, auth=auth, **options)


def _stdio_client(target: Sequence[str], mount: MountOptions) -> Callable[[ClientOptions], Client]:
    """How to make a stdio client of the command `target`, with the mount's env and cwd."""
    command = list(target)
    if not command or not all(isinstance(word, str) for word in command):
        raise TypeError(f"a command to mount is a non-empty list of strings, got {target!r}")
    env, cwd = mount.get("env"), mount.get("cwd")
    return lambda options: Client.stdio(command, env=env, cwd=cwd, **options)


def _memory_client(target: Servable, mount: MountOptions) -> Callable[[ClientOptions], Client]:
    """How to make an in-memory client of the toolkit server `target`."""
    _refuse(mount, ("env", "cwd"), "env= and cwd= are for a command (stdio), not a server")
    if not (hasattr(target, "running") and hasattr(target, "serve")):
        raise TypeError(f"mount() takes a toolkit Server, a command list or a URL, got {target!r}")
    return lambda options: Client(target, **options)
