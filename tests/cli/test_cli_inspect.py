"""`toolkit inspect`: the server's card (SEP-2127's Server Card extension) and its tools/list result, from the CLI
(as a process for a module's card and a server's over stdio; the others read what `main` says, in this process).

Every card is validated against `SERVER_CARD`, our own JSON Schema of the draft's rules for the fields a card of
toolkit uses (written from the draft, not copied from it), every tools/list result against the MCP schema of its
revision (`tests/mcp_schema/`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

import jsonschema
import pytest
import wire
from cli_helpers import PYTHON, ROOT, InProcess, help_text, outcome, serving, toolkit
from test_cli import PROGRESS_TOOLS

# Our own check of a Server Card's shape, hand-written from the draft's `ServerCard` definition (SEP-2127 revision
# a6c26fa6, whose source of truth is schema.ts/schema.json of modelcontextprotocol/experimental-ext-server-card at
# 8924e08): not a copy of that schema. It states the draft's rules for the fields toolkit's cards use, and no more;
# the draft does not forbid other fields, so neither does this. "format": "uri" is the draft's word, which
# jsonschema does not check without an extra package.
_TEXT = {"type": "string", "minLength": 1, "maxLength": 100}
SERVER_CARD: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": ["$schema", "name", "version", "description"],
    "properties": {
        "$schema": {"const": "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json"},
        "name": {"type": "string", "minLength": 3, "maxLength": 200, "pattern": "^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$"},
        "version": {"type": "string", "maxLength": 255},
        "description": _TEXT,
        "title": _TEXT,
        "websiteUrl": {"type": "string", "format": "uri"},
        "icons": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["src"],
                "properties": {
                    "src": {"type": "string", "format": "uri"},
                    "mimeType": {"type": "string"},
                    "sizes": {"type": "array", "items": {"type": "string"}},
                    "theme": {"enum": ["light", "dark"]},
                },
            },
        },
        "remotes": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["type", "url"],
                "properties": {
                    "type": {"enum": ["streamable-http", "sse"]},
                    # http(s), or a URL template that starts with a {variable}; no whitespace
                    "url": {"type": "string", "pattern": r"^(https?://\S+|\{[a-zA-Z_][a-zA-Z0-9_]*\}\S*)$"},
                    "supportedProtocolVersions": {"type": "array", "items": {"type": "string"}},
                },
            },
        },
    },
}

ALL_VERSIONS = ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"]

DESCRIBED = '''
from toolkit import Server

server = Server(
    "io.example/weather",
    version="2.1.0",
    title="Weather",
    description="Forecasts for any city, by the hour and by the day, from the open data of every national "
    "weather service.",
    website_url="https://weather.example.com",
    icons=[{"src": "https://weather.example.com/icon.png", "mimeType": "image/png", "sizes": ["48x48"]}],
)


@server.tool
def forecast(city: str) -> str:
    """Tomorrow's weather in a city."""
    return "sunny"
'''


def card_errors(card: dict[str, Any]) -> list[str]:
    """What `SERVER_CARD` finds wrong with a card."""
    return [error.message for error in jsonschema.Draft202012Validator(SERVER_CARD).iter_errors(card)]


def valid_card(text: str) -> dict[str, Any]:
    """The card printed, after checking it against `SERVER_CARD`."""
    card = cast("dict[str, Any]", json.loads(text))
    assert card_errors(card) == []
    return card


GOOD_CARD = {
    "$schema": "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json",
    "name": "io.example/weather",
    "version": "2.1.0",
    "description": "d" * 100,
    "remotes": [{"type": "streamable-http", "url": "https://weather.example.com/mcp"}],
}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"name": "weather"}, "'weather' does not match '^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$'"),
        ({"description": "d" * 101}, f"'{'d' * 101}' is too long"),
        (
            {"$schema": "https://json-schema.org/draft/2020-12/schema"},
            "'https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json' was expected",
        ),
        (
            {"remotes": [{"type": "stdio", "url": "https://weather.example.com/mcp"}]},
            "'stdio' is not one of ['streamable-http', 'sse']",
        ),
        ({"version": None}, "None is not of type 'string'"),
    ],
    ids=["name-without-namespace", "description-of-101-characters", "other-schema", "stdio-remote", "no-version"],
)
def test_the_card_check_refuses_a_card_the_draft_refuses(change: dict[str, Any], message: str) -> None:
    assert card_errors(GOOD_CARD) == []  # a 100-character description is the most the draft allows
    assert card_errors({**GOOD_CARD, **change}) == [message]


def test_the_card_of_a_module_names_its_remote_and_every_revision_toolkit_serves() -> None:
    run = toolkit(
        "inspect", "examples/notes.py", "--name", "io.github.toolkit/notes", "--url", "https://notes.test/mcp"
    )

    assert (run.returncode, run.stderr) == (0, "")
    assert valid_card(run.stdout) == {
        "$schema": "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json",
        "name": "io.github.toolkit/notes",
        "version": "0.0.0",
        "description": "A notebook: add, search, update and delete notes.",
        "remotes": [
            {"type": "streamable-http", "url": "https://notes.test/mcp", "supportedProtocolVersions": ALL_VERSIONS}
        ],
    }


def test_the_card_carries_the_servers_own_identity_and_keeps_the_schemas_length_limits(
    tmp_path: Path, in_process: InProcess
) -> None:
    (tmp_path / "weather.py").write_text(DESCRIBED, encoding="utf-8")

    run = in_process("inspect", "weather.py", cwd=tmp_path)

    assert (run.returncode, run.stderr) == (
        0,
        "toolkit: warning: the card's description is cut to 100 characters, the most the schema allows (it has "
        "105); give the server a shorter description\n",
    )
    assert valid_card(run.stdout) == {
        "$schema": "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json",
        "name": "io.example/weather",
        "version": "2.1.0",
        "description": "Forecasts for any city, by the hour and by the day, from the open data of every national "
        "weather...",
        "title": "Weather",
        "websiteUrl": "https://weather.example.com",
        "icons": [{"src": "https://weather.example.com/icon.png", "mimeType": "image/png", "sizes": ["48x48"]}],
    }


def test_a_server_without_namespace_or_description_still_gets_a_valid_card_and_a_warning(tmp_path: Path) -> None:
    (tmp_path / "progress_tools.py").write_text(PROGRESS_TOOLS, encoding="utf-8")

    run = toolkit("inspect", "--stdio", "--", PYTHON, "-m", "toolkit", "serve", "progress_tools.py", cwd=tmp_path)

    assert (run.returncode, valid_card(run.stdout)) == (
        0,
        {
            "$schema": "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json",
            "name": "local/progress_tools",
            "version": "0.0.0",
            "description": "progress_tools: 3 tools (count, fail, echo)",
        },  # and no remotes: a server started over stdio has no URL to give
    )
    assert run.stderr == (
        "toolkit: warning: the card is named 'local/progress_tools': give --name with your namespace, "
        "such as io.github.you/progress_tools\n"
    )


def test_the_card_of_a_url_names_it_as_a_remote_with_every_revision_it_serves(in_process: InProcess) -> None:
    # Before: only the revision the command spoke (2025-11-25 by default), and `--protocol auto` was refused.
    with serving(ROOT / "examples" / "notes.py") as served:
        runs = [
            in_process("inspect", served.url, "--name", "io.github.toolkit/notes", "--protocol", protocol)
            for protocol in ("handshake", "2026-07-28", "auto")
        ]

    assert [(run.returncode, run.stderr) for run in runs] == [(0, "")] * 3
    assert [valid_card(run.stdout)["remotes"] for run in runs] == [
        [{"type": "streamable-http", "url": served.url, "supportedProtocolVersions": ALL_VERSIONS}]
    ] * 3


@pytest.mark.parametrize(("protocol", "revision"), [("handshake", wire.LATEST), ("2026-07-28", wire.MODERN)])
def test_the_tools_format_is_the_tools_list_result_with_every_tool_as_the_revision_lists_it(
    protocol: str, revision: str, in_process: InProcess
) -> None:
    run = in_process("inspect", "examples/notes.py", "--format", "tools", "--protocol", protocol)
    docs = in_process("docs", "examples/notes.py", "--format", "json", "--protocol", protocol)

    result = json.loads(run.stdout)
    wire.validate(result, "ListToolsResult", wire.LATEST)  # every page in one: no cursor, no cache hints
    for tool in result["tools"]:
        wire.validate(tool, "Tool", revision)
    assert outcome(run) == (0, docs.stdout, "")
    assert [tool["name"] for tool in result["tools"]] == ["add_note", "search_notes", "update_note", "delete_note"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--name", "notes"], "--name 'notes' is not namespace/name, such as io.github.you/notes"),
        (["--url", "notes.test/mcp"], "--url 'notes.test/mcp' is not an http:// or https:// URL"),
    ],
)
def test_a_name_or_url_the_card_cannot_hold_is_refused(args: list[str], message: str, in_process: InProcess) -> None:
    assert outcome(in_process("inspect", "examples/notes.py", *args)) == (2, "", f"toolkit: error: {message}\n")


@pytest.mark.parametrize("command", ["inspect", "client"])
def test_the_help_of_inspect_and_client_fits_in_80_columns_and_says_what_its_targets_are(
    command: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    text = help_text(command, capsys, monkeypatch)

    assert [line for line in text.splitlines() if len(line) > 80] == []
    assert "TARGET may also be the URL of a server" in text
    assert ("--format {card,tools}" in text) is (command == "inspect")
    assert ("--class-name NAME" in text) is (command == "client")
