"""`toolkit search`, run for real in a subprocess: on a module (every tool, pinned or not), a process over stdio and a
server at a URL; the JSON format, the options, and the exit status when nothing matches."""

from __future__ import annotations

import json

import servers
from cli_helpers import PYTHON, outcome, serving, toolkit

SEARCH_APP = str(servers.SEARCH)


def test_a_module_is_searched_over_all_its_tools_best_first() -> None:
    run = toolkit("search", SEARCH_APP, "what's", "the weather in Paris?")
    header, *rows = run.stdout.splitlines()
    assert (run.returncode, header, run.stderr) == (0, "SCORE  NAME         DESCRIPTION", "")
    # the hidden admin_reset too: the command reads the module's tools as their author wrote them, unfiltered
    assert [row.split()[1] for row in rows] == ["get_weather", "admin_reset"]
    assert rows[0].endswith("  get_weather  Current weather conditions and temperature for a city.")
    assert float(rows[0].split()[0]) > float(rows[1].split()[0])


def test_nothing_relevant_exits_1_and_says_so_on_stderr() -> None:
    run = toolkit("search", SEARCH_APP, "a sonnet about quarks")
    assert outcome(run) == (
        1,
        "",
        "toolkit: search: no tool of 7 matches 'a sonnet about quarks' (a score of at least 0.3)\n",
    )


def test_json_a_limit_and_a_threshold() -> None:
    run = toolkit("search", SEARCH_APP, "weather", "--format", "json", "--limit", "1", "--threshold", "0.2")
    assert run.returncode == 0
    found = json.loads(run.stdout)
    assert (found["query"], [tool["name"] for tool in found["tools"]]) == ("weather", ["get_weather"])
    assert 0.2 <= found["tools"][0]["score"] <= 1.0
    bad = toolkit("search", SEARCH_APP, "weather", "--threshold", "2")
    assert bad.returncode == 2
    assert "expected a number from 0 to 1, got '2'" in bad.stderr


def test_a_process_over_stdio_is_searched_over_what_it_lists() -> None:
    run = toolkit("search", "--format", "json", "--stdio", "add a note", "--", PYTHON, "examples/notes.py")
    assert run.returncode == 0
    assert [tool["name"] for tool in json.loads(run.stdout)["tools"]] == ["add_note"]


def test_a_server_at_a_url_is_searched_as_a_client_lists_it() -> None:
    with serving("examples/notes.py") as served:
        run = toolkit("search", served.url, "delete a note", "--format", "json")
    assert run.returncode == 0
    assert json.loads(run.stdout)["tools"][0]["name"] == "delete_note"


def test_a_target_and_a_query_are_both_needed() -> None:
    run = toolkit("search", SEARCH_APP)
    assert outcome(run) == (
        2,
        "",
        "toolkit: error: search needs TARGET and QUERY (or --stdio QUERY ... -- COMMAND)\n",
    )
