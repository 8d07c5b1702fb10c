"""The pytest plugin of `toolkit.testing`: its option and fixtures.

pytest loads this module through the `pytest11` entry point `toolkit` (`-p no:toolkit` turns it off). The
fixtures are methods of `Plugin`, registered by `pytest_configure`, so that they share the run's state (the
snapshots it wrote, for the summary).
"""

from __future__ import annotations

import os
import re
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from toolkit import Client, Lifespan, Server
from toolkit._protocol.client_eras import CLIENT_VERSIONS

from ._scripts import Scripted
from ._snapshots import Definitions, Snapshot, compare_snapshot
from ._stdio import stdio_command, stdio_environment
from ._tester import ToolTester

__all__ = ["Plugin", "pytest_addoption", "pytest_configure"]

_UNSAFE = re.compile(r'[<>:"/\\|?*\s]')


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("toolkit")
    group.addoption(
        "--toolkit-update-snapshots",
        action="store_true",
        default=False,
        help="toolkit: rewrite tool-definition snapshots that differ, instead of failing.",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(Plugin(config), "toolkit-fixtures")


class Plugin:
    """The fixtures, and the state of one pytest run (the snapshots it wrote)."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.update: bool = config.getoption("toolkit_update_snapshots")
        self.written: list[tuple[str, str]] = []

    @pytest.fixture
    def toolkit_server(self) -> Server:
        """The server under test: override this fixture (in `conftest.py`) to return yours."""
        pytest.fail(
            "toolkit: no server to test. Define a `toolkit_server` fixture (in conftest.py, for example) "
            "that returns your toolkit.Server.",
            pytrace=False,
        )

    @pytest.fixture
    def toolkit_transport(self) -> str:
        """How `toolkit_client` reaches the server: `"memory"` or `"stdio"` (a subprocess).

        Parametrize it to run a test over both: `@pytest.mark.parametrize("toolkit_transport", ["memory", "stdio"])`.
        """
        return "memory"

    @pytest.fixture
    def toolkit_protocol(self) -> str:
        """The protocol `toolkit_client` and `toolkit_tester` speak: `"auto"`, `"2026-07-28"` or `"handshake"`."""
        return "auto"

    @pytest.fixture
    def toolkit_lifespan(self) -> Lifespan | None:
        """A lifespan to run instead of the server's own in `toolkit_client` and `toolkit_tester`; `None` (the
        default) runs the server's. Override it to give the tools a fake state instead of a real database."""
        return None

    @pytest.fixture
    def toolkit_elicitation(self) -> Any:
        """How `toolkit_tester` and `toolkit_client` answer the tools' questions to the user: a script (`"accept"`,
        `"decline"`, `"cancel"`, a dict, a list, ...) or a handler; `None` (default): the client cannot elicit.

        Parametrize it to run a test with several answers:
        `@pytest.mark.parametrize("toolkit_elicitation", ["accept", "decline"])`.
        """
        return None

    @pytest.fixture
    def toolkit_sampling(self) -> Any:
        """How `toolkit_tester` and `toolkit_client` answer sampling requests: a reply's text, a list of them, or a
        handler; `None` (default): the client cannot sample."""
        return None

    @pytest.fixture
    def toolkit_stdio_command(self, toolkit_server: Server) -> list[str]:
        """The command that serves `toolkit_server` over stdio; by default `python -m toolkit serve module:name`."""
        try:
            return stdio_command(toolkit_server)
        except LookupError as exc:
            pytest.fail(f"toolkit: {exc}", pytrace=False)

    @pytest.fixture
    async def toolkit_client(  # noqa: PLR0913 - pytest sees a fixture's dependencies only in its parameters
        self,
        request: pytest.FixtureRequest,
        *,
        toolkit_server: Server,
        toolkit_transport: str,
        toolkit_protocol: Any,
        toolkit_elicitation: Any,
        toolkit_sampling: Any,
        anyio_backend: Any,
    ) -> AsyncIterator[Client]:
        """A `toolkit.Client` connected to `toolkit_server` over `toolkit_transport` (use in `anyio` tests)."""
        # Declared, not asked for by name: a test may parametrize toolkit_elicitation or toolkit_sampling directly,
        # which pytest allows only for a fixture it sees among the parameters.
        toolkit_lifespan: Lifespan | None = request.getfixturevalue("toolkit_lifespan")
        scripted = Scripted(toolkit_elicitation, toolkit_sampling)
        handlers: dict[str, Any] = {
            "elicitation_handler": scripted.elicitation_handler,
            "sampling_handler": scripted.sampling_handler,
            "sampling_tools": True,  # a script answers what it is told, tool uses included
        }
        if toolkit_transport == "memory":
            client = Client(toolkit_server, protocol=toolkit_protocol, lifespan=toolkit_lifespan, **handlers)
        elif toolkit_transport == "stdio":
            if toolkit_lifespan is not None:
                pytest.fail(
                    "toolkit: toolkit_lifespan cannot replace the lifespan of a server in another process "
                    "(toolkit_transport='stdio'); override toolkit_lifespan to return None for this test",
                    pytrace=False,
                )
            command = request.getfixturevalue("toolkit_stdio_command")
            client = Client.stdio(command, env=stdio_environment(), protocol=toolkit_protocol, **handlers)
        else:
            pytest.fail(f"toolkit: unknown toolkit_transport {toolkit_transport!r}; use 'memory' or 'stdio'")
        async with client:
            yield client

    @pytest.fixture
    def toolkit_tester(
        self,
        *,
        toolkit_server: Server,
        toolkit_protocol: Any,
        toolkit_lifespan: Lifespan | None,
        toolkit_elicitation: Any,
        toolkit_sampling: Any,
    ) -> Iterator[ToolTester]:
        """A [`ToolTester`][toolkit.testing.ToolTester] over `toolkit_server`, for plain (synchronous) tests."""
        with ToolTester(
            toolkit_server,
            protocol=toolkit_protocol,
            lifespan=toolkit_lifespan,
            elicitation=toolkit_elicitation,
            sampling=toolkit_sampling,
        ) as tester:
            yield tester

    @pytest.fixture
    def toolkit_snapshot(self, request: pytest.FixtureRequest) -> Snapshot:
        """Compare tool definitions with a stored JSON snapshot: `toolkit_snapshot(server)`.

        The snapshot is `snapshots/<test module>.<test name>.json` next to the test file, or
        `snapshots/<name>.json` with `toolkit_snapshot(server, "name")`. A missing snapshot is written (and
        reported at the end of the run); one that differs fails the test with a diff, unless pytest runs with
        `--toolkit-update-snapshots`, which rewrites it.
        """

        def check(target: Definitions, name: str | None = None, *, protocol: str = CLIENT_VERSIONS[0]) -> None:
            __tracebackhide__ = True
            stem = name if name is not None else f"{request.path.stem}.{request.node.name}"
            path = request.path.parent / "snapshots" / f"{_UNSAFE.sub('_', stem)}.json"
            shown_as = os.path.relpath(path, request.config.invocation_params.dir)
            outcome, diff = compare_snapshot(target, path, update=self.update, protocol=protocol, shown_as=shown_as)
            if outcome == "differs":
                pytest.fail(f"{diff}\n(run pytest with --toolkit-update-snapshots to accept the change)", pytrace=False)
            if outcome != "matched":
                self.written.append((outcome, shown_as))

        return check

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not self.written:
            return
        terminalreporter.ensure_newline()
        terminalreporter.section("toolkit snapshots")
        for outcome, shown_as in self.written:
            terminalreporter.write_line(f"{outcome} {shown_as}")
