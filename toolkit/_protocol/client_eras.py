"""The era a client speaks, as the client asks it (`ClientEra`): each is made from the era's `EraRules` and names
what differs on the client's side: how it learns the server, where its requests carry their state, whether a call's
questions come as results, and how a task is asked for, followed and answered.

The client, its transports, the gateway, the CLI and the testing plugin ask their era; they never compare versions.
A third era is one more `ClientEra` here (beside its `EraRules` in `revisions.py`).
"""

from __future__ import annotations

from dataclasses import dataclass

from .jsonrpc import METHOD_NOT_FOUND, MISSING_CLIENT_CAPABILITY
from .revisions import HANDSHAKE_RULES, STATELESS_RULES, EraRules

__all__ = ["CLIENT_ERAS", "CLIENT_VERSIONS", "HANDSHAKE_ERA", "STATELESS_ERA", "ClientEra", "client_era_of"]


@dataclass(frozen=True, slots=True)
class ClientEra:
    """What one era asks of a client."""

    rules: EraRules
    """What the era's revisions say on the wire."""
    greeting: str
    """How the client learns the server: `server/discover`, or the `initialize` handshake."""
    ping: str
    """The request that checks that the server answers (2026-07-28 has no `ping`)."""
    tasks_by_extension: bool
    """Tasks are the extension `io.modelcontextprotocol/tasks`: the client declares it on its task requests and the
    server decides whether a call is a task (`resultType: "task"`); `tasks/get` carries the task's result, error or
    questions (answered with `tasks/update`); `tasks/cancel` answers nothing of the task. Otherwise (2025-11-25's
    experimental tasks) the client asks for a task with `params.task`, takes its result (and its questions, as server
    requests) from `tasks/result`, and `tasks/cancel` answers the task."""
    only_as_task: int
    """The error code that says a tool runs only as a task (-32021 naming the extension; -32601 before, for a tool
    whose `execution.taskSupport` is `required`)."""

    @property
    def version(self) -> str:
        """The revision the client offers in this era (its newest)."""
        return self.rules.versions[0]

    @property
    def stateless(self) -> bool:
        """Each request carries its state in `_meta` (revision, capabilities, log level): no session, no `ping`,
        list changes heard only on a `subscriptions/listen` stream, HTTP headers read from the request."""
        return self.rules.stateless

    @property
    def logs_per_request(self) -> bool:
        """The log level goes with each request (`_meta`), so every server takes it; else `logging/setLevel` sets it
        for the session, where the server declares `logging`."""
        return self.rules.stateless

    @property
    def questions_are_results(self) -> bool:
        """A call's questions come as its results (`InputRequiredResult`), answered by retrying the call."""
        return self.rules.questions_are_results

    def speaks(self, version: object) -> bool:
        """Whether `version` is one of this era's revisions."""
        return version in self.rules.versions


HANDSHAKE_ERA = ClientEra(
    HANDSHAKE_RULES, greeting="initialize", ping="ping", tasks_by_extension=False, only_as_task=METHOD_NOT_FOUND
)
STATELESS_ERA = ClientEra(
    STATELESS_RULES,
    greeting="server/discover",
    ping="server/discover",
    tasks_by_extension=True,
    only_as_task=MISSING_CLIENT_CAPABILITY,
)
CLIENT_ERAS: tuple[ClientEra, ...] = (STATELESS_ERA, HANDSHAKE_ERA)
"""Newest first: the order a client tries them in."""
CLIENT_VERSIONS: tuple[str, ...] = tuple(version for era in CLIENT_ERAS for version in era.rules.versions)
"""Every revision a client speaks, newest first."""
_BY_VERSION = {version: era for era in CLIENT_ERAS for version in era.rules.versions}


def client_era_of(version: str) -> ClientEra:
    """The era a revision the client speaks belongs to.

    Raises:
        KeyError: a revision of no era.
    """
    return _BY_VERSION[version]
