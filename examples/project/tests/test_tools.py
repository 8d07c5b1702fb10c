"""Tests of the weather tools, through the real MCP protocol, with a fake HTTP API."""

from __future__ import annotations

import pytest
from weather_tools.tools import API_URL

from toolkit import Client, Server
from toolkit.testing import Snapshot, ToolTester, assert_error, structured

from .fakes import FakeAPI


def test_current_conditions_come_from_the_api_answer(toolkit_tester: ToolTester, fake_api: FakeAPI) -> None:
    result = toolkit_tester.call("current_conditions", latitude=48.85, longitude=2.35)

    assert structured(result) == {"temperature_c": 18.5, "wind_kmh": 11.2}
    assert fake_api.requests == [
        (API_URL, {"latitude": "48.85", "longitude": "2.35", "current": "temperature_2m,wind_speed_10m"})
    ]


def test_an_unreachable_service_is_an_error_the_model_can_read(toolkit_tester: ToolTester) -> None:
    result = toolkit_tester.call("current_conditions", latitude=0, longitude=0)

    assert assert_error(result) == "the weather service cannot be reached: connection refused"


def test_a_latitude_out_of_range_is_refused_before_any_request(toolkit_tester: ToolTester, fake_api: FakeAPI) -> None:
    result = toolkit_tester.call("current_conditions", latitude=91, longitude=0)

    assert_error(result, match="latitude")
    assert fake_api.requests == []


@pytest.mark.anyio
@pytest.mark.parametrize("toolkit_transport", ["memory", "stdio"])
async def test_the_server_answers_in_memory_and_over_stdio(toolkit_client: Client) -> None:
    result = await toolkit_client.call_tool("current_conditions", {"latitude": -33.87, "longitude": 151.21})

    assert structured(result) == {"temperature_c": 24.0, "wind_kmh": 20.5}


def test_the_tool_definitions_match_the_snapshot(toolkit_snapshot: Snapshot, toolkit_server: Server) -> None:
    toolkit_snapshot(toolkit_server, "weather")
