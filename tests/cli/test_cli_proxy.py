"""`toolkit proxy` serves another server through toolkit; `toolkit list/call/lint/inspect` work on a proxy, and on a
file whose server mounts others, as on any server. The commands on such a file, and the proxy's refusals, run `main`
in the test's process (the mounted server is a process all the same)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import PYTHON, InProcess, outcome, toolkit
from served import Served
from servers import GATEWAY_UPSTREAM, gateway_upstream

from toolkit import Client

PROXY = [PYTHON, "-m", "toolkit", "proxy", "--prefix", "up", "--stdio", "--", PYTHON, str(GATEWAY_UPSTREAM)]


def test_toolkit_call_reaches_a_stdio_server_through_toolkit_proxy() -> None:
    run = toolkit("call", "--stdio", "up_add", "a=20", "b=22", "--", *PROXY)
    assert outcome(run)[:2] == (0, "42\n")


@pytest.mark.anyio
async def test_toolkit_list_shows_the_proxied_servers_tools_under_the_prefix() -> None:
    run = toolkit("list", "--stdio", "--", *PROXY)
    async with Client(gateway_upstream()) as direct:
        upstream = [definition.name for definition in await direct.list_tools()]
    assert run.returncode == 0, run.stderr
    assert [line.split()[0] for line in run.stdout.splitlines()[1:-1]] == [f"up_{name}" for name in upstream]


def test_list_call_lint_and_inspect_work_on_a_file_whose_server_mounts_another(
    tmp_path: Path, in_process: InProcess
) -> None:
    gateway = tmp_path / "gateway.py"
    gateway.write_text(
        "from toolkit import Server\n"
        "server = Server('gateway')\n"
        f"server.mount([{PYTHON!r}, {str(GATEWAY_UPSTREAM)!r}], prefix='up', tools=['add', 'weather'])\n"
    )
    listed = in_process("list", str(gateway))
    called = in_process("call", str(gateway), "up_weather", "city=Oslo")
    linted = in_process("lint", str(gateway))
    card = in_process("inspect", str(gateway), "--name", "io.example/gateway")
    assert [line.split()[0] for line in listed.stdout.splitlines()[1:-1]] == ["up_add", "up_weather"]
    assert json.loads(called.stdout) == {"city": "Oslo", "celsius": 21.5}
    assert linted.stdout.splitlines()[-1] == "3 findings in 2 tools: 0 errors, 3 warnings"
    assert all(line.startswith("up_") for line in linted.stdout.splitlines()[:-1])  # no local code to point at
    assert json.loads(card.stdout)["description"] == "gateway: 2 tools (up_add, up_weather)"


def test_toolkit_proxy_refuses_what_it_cannot_serve_in_one_line(in_process: InProcess) -> None:
    not_url = in_process("proxy", "server.py")
    unset = in_process("proxy", "http://127.0.0.1:9/mcp", "-H", "Authorization: Bearer ${TOOLKIT_TEST_UNSET_TOKEN}")
    assert outcome(not_url) == (
        2,
        "",
        "toolkit: error: toolkit proxy takes a URL (http://... or https://...) or --stdio -- COMMAND, "
        "not 'server.py'\n",
    )
    assert outcome(unset) == (
        2,
        "",
        "toolkit: error: a header names ${TOOLKIT_TEST_UNSET_TOKEN}, which is not set in the environment\n",
    )


@pytest.mark.anyio
@pytest.mark.parametrize("protocol", ["2026-07-28", "handshake"])
async def test_toolkit_proxy_serves_a_stdio_server_over_streamable_http_in_either_era(protocol: Any) -> None:
    # `python -m toolkit proxy --http --port 0 ...`, started as a script is (Served says where it listens).
    upstream = ["--", PYTHON, str(GATEWAY_UPSTREAM)]
    served = Served(
        Path("-m"), "toolkit", "proxy", "--prefix", "up", "--http", "--port", "0", "--stdio", *upstream, script=True
    )
    try:
        async with Client.http(served.url, protocol=protocol) as client:
            names = [t.name for t in await client.list_tools()]
            added = await client.call_tool("up_add", {"a": 20, "b": 22})
        listed = toolkit("list", served.url)
    finally:
        served.close()
    assert names[0] == "up_add"
    assert added.text == "42"
    assert listed.stdout.splitlines()[1].split()[0] == "up_add"
