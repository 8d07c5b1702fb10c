"""A weather tool that calls an HTTP API.

The tool never opens a connection itself: `make_server` takes the function that fetches JSON, so tests pass a
fake and production passes `fetch_json`. The module-level `server` is the real one, served with
`toolkit serve weather_tools.tools:server`.
"""

from __future__ import annotations

import json
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping
from typing import Annotated, Any

from pydantic import BaseModel, Field

from toolkit import Server, ToolError

API_URL = "https://api.open-meteo.com/v1/forecast"

Fetch = Callable[[str, Mapping[str, str]], Any]
"""GET `url` with query parameters and return the decoded JSON body; raise `OSError` when it fails."""


def fetch_json(url: str, params: Mapping[str, str]) -> Any:
    """The real HTTP call, with the standard library."""
    with urllib.request.urlopen(f"{url}?{urllib.parse.urlencode(params)}", timeout=10) as response:
        return json.load(response)


class Conditions(BaseModel):
    """The weather at a place, now."""

    temperature_c: float
    wind_kmh: float


def make_server(fetch: Fetch = fetch_json) -> Server:
    """The weather server, fetching with `fetch`."""
    server = Server("weather", version="1.0.0")

    @server.tool(read_only=True, open_world=True)
    def current_conditions(
        latitude: Annotated[float, Field(ge=-90, le=90)],
        longitude: Annotated[float, Field(ge=-180, le=180)],
    ) -> Conditions:
        """Current temperature and wind at a place.

        Args:
            latitude: Degrees north (negative: south).
            longitude: Degrees east (negative: west).
        """
        params = {"latitude": str(latitude), "longitude": str(longitude), "current": "temperature_2m,wind_speed_10m"}
        try:
            data = fetch(API_URL, params)
        except OSError as exc:
            raise ToolError(f"the weather service cannot be reached: {exc}") from exc
        current = data["current"]
        return Conditions(temperature_c=current["temperature_2m"], wind_kmh=current["wind_speed_10m"])

    return server


server = make_server()
