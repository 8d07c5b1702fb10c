"""`ToolIndex`: what it reads of a definition, text in any script, relevance, incremental updates, and retrieval on a
slice of MetaTool (tests/data/metatool/, MIT)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolkit import Server, ToolDefinition, ToolIndex, tool

SLICE = Path(__file__).parent / "data" / "metatool" / "slice.json"


def tools(*specs: tuple[str, str]) -> list[dict[str, Any]]:
    return [{"name": name, "description": text, "inputSchema": {"type": "object"}} for name, text in specs]


# Unrelated tools beside those a test looks for: a term's weight depends on how few tools have it, as on a real server.
OTHERS = tools(
    ("create_invoice", "Create an invoice for a customer."),
    ("list_calendar_events", "List the events of a calendar."),
    ("translate_text", "Translate text into another language."),
    ("run_sql_query", "Run a SQL query on the database."),
    ("resize_image", "Resize an image to a given width and height."),
)


def names(index: ToolIndex, query: str, limit: int = 5) -> list[str]:
    return [match.name for match in index.search(query, limit)]


def test_retrieval_on_the_metatool_slice_reaches_its_measured_floor() -> None:
    data = json.loads(SLICE.read_text(encoding="utf-8"))
    index = ToolIndex([{**spec, "inputSchema": {"type": "object"}} for spec in data["tools"]])
    first = top5 = 0
    for query in data["queries"]:
        found = names(index, query["query"])
        first += bool(found) and found[0] == query["tool"]
        top5 += query["tool"] in found
    unanswered = sum(not index.search(query["query"]) for query in data["no_tool"])
    count = len(data["queries"])
    # measured when tuned: 74 % first, 83 % in the top 5, 45 % of the no-tool queries unanswered (docs/search.md)
    assert first / count >= 0.70
    assert top5 / count >= 0.80
    assert unanswered / len(data["no_tool"]) >= 0.40


def test_a_name_is_split_into_words_in_every_style_and_found_as_typed() -> None:
    index = ToolIndex(
        tools(
            ("getWeatherForecast", "Tomorrow's conditions."),
            ("send_email_message", "Mail someone."),
            ("HTTPRequest-builder", "Make requests."),
        )
    )
    assert names(index, "weather forecast") == ["getWeatherForecast"]
    assert names(index, "email") == ["send_email_message"]
    assert names(index, "http builder")[0] == "HTTPRequest-builder"
    assert names(index, "send_email_message")[0] == "send_email_message"


def test_parameters_enum_values_title_and_annotations_are_searched() -> None:
    definitions = [
        {
            "name": "convert",
            "title": "Unit converter",
            "description": "Convert a quantity.",
            "inputSchema": {
                "type": "object",
                "properties": {"unit": {"type": "string", "enum": ["kilometres", "miles"], "description": "Distance"}},
            },
        },
        {
            "name": "purge",
            "description": "Remove old entries.",
            "inputSchema": {"type": "object"},
            "annotations": {"destructiveHint": True},
        },
    ]
    index = ToolIndex([*definitions, *OTHERS])
    assert names(index, "miles to kilometres") == ["convert"]
    assert names(index, "unit converter") == ["convert"]
    assert names(index, "distance unit") == ["convert"]
    assert list(index.scores("destructive")) == ["purge"]  # weak alone: a hint says how, not what for


def test_text_in_any_script_is_found_and_accents_and_case_are_folded() -> None:
    index = ToolIndex(
        tools(
            ("tianqi", "查询城市的天气预报"),
            ("pogoda", "Прогноз погоды для города"),
            ("cafe", "Trouver un café près de chez vous"),
            ("wetter", "Wettervorhersage für eine Stadt"),
        )
    )
    assert names(index, "北京天气预报") == ["tianqi"]
    assert names(index, "прогноз погоды") == ["pogoda"]
    assert names(index, "CAFE pres de chez moi") == ["cafe"]
    assert names(index, "WETTERVORHERSAGE") == ["wetter"]
    assert index.search("🙂 ¿? ——") == []


def test_nothing_relevant_finds_nothing_rather_than_the_least_bad_tool() -> None:
    index = ToolIndex(tools(("get_weather", "Current weather for a city."), ("send_email", "Send an email.")))
    assert index.search("tell me a joke about penguins") == []
    assert index.search("") == []
    assert names(index, "weather in Oslo") == ["get_weather"]
    strict = ToolIndex(index.names and tools(("get_weather", "Current weather for a city.")), threshold=1.0)
    assert strict.search("weather") == []


def test_scores_are_best_first_between_zero_and_one_and_the_limit_holds() -> None:
    index = ToolIndex(
        tools(
            ("search_files", "Search files by name."),
            ("search_web", "Search the web."),
            ("search_mail", "Search mail."),
            ("file_size", "The size of a file."),
        )
    )
    found = index.search("search files", limit=2)
    assert found[0].name == "search_files"
    assert len(found) == 2
    assert all(0.0 < match.score <= 1.0 for match in found)
    assert found[0].score >= found[1].score
    assert found[0].definition["description"] == "Search files by name."
    assert names(index, "search files", limit=5)[:1] == ["search_files"]


def test_updates_analyse_only_what_changed() -> None:
    index = ToolIndex([*OTHERS, *tools(("a_weather", "Weather."), ("b_post", "Mail."))])
    assert index.update([*OTHERS, *tools(("a_weather", "Weather."), ("b_post", "Mail."))]) == 0
    changed = tools(("a_weather", "Weather."), ("b_post", "Send letters."), ("c_map", "Maps."))
    assert index.update([*OTHERS, *changed]) == 2
    assert names(index, "letters") == ["b_post"]
    assert names(index, "mail") == []
    assert index.update(tools(("c_map", "Maps."))) == 2 + len(OTHERS)
    assert (len(index), index.names, "a_weather" in index) == (1, ["c_map"], False)
    assert index.remove("c_map") is True
    assert index.remove("c_map") is False
    assert index.search("maps") == []


def test_a_server_tools_and_definitions_are_indexed_alike() -> None:
    @tool
    def get_weather(city: str) -> str:
        """Current weather for a city."""
        return city

    server = Server("s", tools=[get_weather])
    definition = ToolDefinition(name="get_weather", description="Current weather for a city.", input_schema={})
    for source in (server, [get_weather], [definition]):
        assert names(ToolIndex(source), "weather in Rome") == ["get_weather"]


def test_where_hides_tools_from_a_search() -> None:
    index = ToolIndex([*OTHERS, *tools(("weather_now", "Current weather."), ("weather_admin", "Weather admin."))])
    assert set(names(index, "weather")) == {"weather_now", "weather_admin"}
    assert [m.name for m in index.search("weather", where=lambda name: name != "weather_admin")] == ["weather_now"]


def test_bad_input_is_refused_clearly() -> None:
    with pytest.raises(TypeError, match="tool definitions"):
        ToolIndex([42])
    with pytest.raises(ValueError, match="two tools are named 'x'"):
        ToolIndex(tools(("x", "a"), ("x", "b")))
    with pytest.raises(ValueError, match="threshold"):
        ToolIndex(threshold=2)
    with pytest.raises(ValueError, match="limit"):
        ToolIndex().search("x", limit=0)
