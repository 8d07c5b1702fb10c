"""The `toolkit` command and HTTP: URL targets that cannot be reached or refuse, `-H`, the `http` extra missing,
and `toolkit serve --http` starting and stopping (`toolkit serve FILE --http --port 0` on 127.0.0.1); and the official
SDK snippet of docs/http.md, run against that server."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any

import anyio
import pytest
from cli_helpers import ROOT, outcome, toolkit
from served import Served

from toolkit import Client

DEMO = ROOT / "tests" / "servers" / "http_demo.py"
# A port nothing listens on: loopback refuses the connection at once.
UNREACHABLE = "http://127.0.0.1:1/mcp"
EXTRA = "install toolkit's http extra (in a clone of toolkit: pip install '.[http]')"


@pytest.fixture(scope="module")
def served() -> Iterator[Served]:
    server = Served(DEMO)
    yield server
    server.close()


def origin(served: Served) -> str:
    return served.url.removesuffix("/mcp")


@pytest.mark.parametrize("command", [["list"], ["call", "add"]])
def test_a_url_nothing_listens_on_is_one_line_with_status_2(command: list[str]) -> None:
    run = toolkit(*command[:1], UNREACHABLE, *command[1:])
    assert (run.returncode, run.stdout) == (2, "")
    assert run.stderr.startswith(f"toolkit: error: cannot connect to {UNREACHABLE}: ConnectError: ")
    assert run.stderr.count("\n") == 1


def test_traceback_still_shows_where_the_connection_failed() -> None:
    run = toolkit("list", UNREACHABLE, "--traceback")
    assert run.returncode == 2
    assert run.stderr.startswith("Traceback (most recent call last):\n")
    assert run.stderr.splitlines()[-1].startswith(f"toolkit: error: cannot connect to {UNREACHABLE}: ConnectError: ")


@pytest.mark.parametrize("path", ["", "/", "/foo"])
def test_a_url_without_the_mcp_path_is_a_404_that_points_at_it(served: Served, path: str) -> None:
    url = origin(served) + path
    assert outcome(toolkit("list", url)) == (
        2,
        "",
        f"toolkit: error: cannot connect to {url}: HTTP 404 Not Found; the endpoint is usually /mcp: {served.url}\n",
    )


def test_https_to_a_plain_http_server_says_to_try_http(served: Served) -> None:
    url = served.url.replace("http://", "https://", 1)
    run = toolkit("list", url)
    assert (run.returncode, run.stdout) == (2, "")
    assert run.stderr.startswith(f"toolkit: error: cannot connect to {url}: ConnectError: [SSL: WRONG_VERSION_NUMBER]")
    assert run.stderr.endswith(f"; is it a plain HTTP server? try {served.url}\n")
    assert run.stderr.count("\n") == 1


def test_a_server_that_refuses_the_connection_is_one_line_with_its_answer() -> None:
    strict = Served(DEMO, "--allowed-host", "mcp.example.com")
    try:
        refused = toolkit("list", strict.url)
        accepted = toolkit("call", strict.url, "add", "a=1", "b=2", "-H", "Host: mcp.example.com")
    finally:
        strict.close()
    assert outcome(refused) == (
        2,
        "",
        f"toolkit: error: {strict.url} refused the connection: Invalid Host header (code -32600)\n",
    )
    assert outcome(accepted) == (0, "3\n", "")


HEADER = ("-H", "Authorization: Bearer t")
SERVER = ("--", sys.executable, "examples/calculator.py")


@pytest.mark.parametrize(
    ("args", "what"),
    [
        (["list", "examples/calculator.py", *HEADER], "'examples/calculator.py'"),
        (["call", *HEADER, "examples/calculator.py", "add", "a=1", "b=2"], "'examples/calculator.py'"),
        (["docs", "--stdio", *HEADER, *SERVER], "a server started with --stdio"),
        (["call", "--stdio", "add", "a=1", "b=2", *HEADER, *SERVER], "a server started with --stdio"),
    ],
)
def test_a_header_for_a_target_that_is_not_a_url_is_refused(args: list[str], what: str) -> None:
    message = f"toolkit: error: -H applies to URL targets (http://... or https://...), not to {what}\n"
    assert outcome(toolkit(*args)) == (2, "", message)


def test_without_the_http_extra_a_url_target_says_what_to_install() -> None:
    run = toolkit("list", UNREACHABLE, without=("httpx",))
    assert outcome(run) == (2, "", f"toolkit: error: connecting over HTTP needs httpx: {EXTRA}\n")


@pytest.mark.parametrize("workers", ["1", "2"])
def test_without_the_http_extra_serving_over_http_says_what_to_install(workers: str) -> None:
    run = toolkit("serve", "examples/calculator.py", "--http", "--workers", workers, without=("uvicorn",))
    assert outcome(run) == (2, "", f"toolkit: error: serving over HTTP needs uvicorn: {EXTRA}\n")


@pytest.mark.parametrize("workers", ["1", "2"])
def test_serve_over_http_says_where_it_listens_and_that_it_stopped(workers: str) -> None:
    server = Served(DEMO, "--workers", workers)
    try:
        # Once a call is answered, the server handles signals (uvicorn installs its handlers as it starts).
        assert outcome(toolkit("call", server.url, "add", "a=1", "b=2")) == (0, "3\n", "")
    finally:
        server.close()  # SIGTERM, as a process manager stops it
    assert server.stderr == [
        f"toolkit: serving on {server.url}\n",
        "toolkit: stopping: calls in flight have 5 s to answer (Ctrl-C or SIGTERM again stops at once)\n",
        "toolkit: stopped\n",
    ]


@pytest.mark.parametrize("protocol", ["handshake", "2026-07-28"])
def test_a_client_that_stays_connected_does_not_hold_up_a_graceful_stop(protocol: Any) -> None:
    # A 2025-11-25 session keeps its GET stream open, a 2026-07-28 client its subscriptions/listen: no call is in
    # flight, so the stop ends them at once instead of waiting out the grace (uvicorn then cancels what is left and
    # logs an ERROR line, which must not appear).
    server = Served(DEMO)

    async def connected() -> None:
        with anyio.fail_after(60):
            async with Client.http(server.url, protocol=protocol, on_tools_changed=lambda: None) as client:
                assert (await client.call_tool("add", {"a": 1, "b": 2})).text == "3"
                await anyio.to_thread.run_sync(server.close)  # SIGTERM, and the process's exit

    try:
        anyio.run(connected)
    finally:
        server.close()
    assert server.stderr == [
        f"toolkit: serving on {server.url}\n",
        "toolkit: stopping: calls in flight have 5 s to answer (Ctrl-C or SIGTERM again stops at once)\n",
        "toolkit: stopped\n",
    ]


def test_the_sdk_snippet_of_the_http_docs_runs_in_both_modes(
    served: Served, capsys: pytest.CaptureFixture[str]
) -> None:
    # docs/http.md shows the official SDK's HTTP client against `toolkit serve --http`: here it runs, on that server.
    docs = (ROOT / "docs" / "http.md").read_text(encoding="utf-8")
    code = next(block for block in docs.split("```python\n")[1:] if "streamable_http_client(URL)" in block)
    code = code.split("```", 1)[0].replace('"http://127.0.0.1:8000/mcp"', repr(served.url))
    exec(compile(code, "docs/http.md", "exec"), {"__name__": "sdk_snippet"})
    assert capsys.readouterr().out == "2025-11-25 3\n2026-07-28 3\n"
