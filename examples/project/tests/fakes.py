"""A fake of the weather HTTP API, and the weather server built on it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from weather_tools.tools import make_server

# Open-Meteo's answers for a few places, keyed by (latitude, longitude) as the tool sends them.
ANSWERS = {
    ("48.85", "2.35"): {"current": {"temperature_2m": 18.5, "wind_speed_10m": 11.2}},
    ("-33.87", "151.21"): {"current": {"temperature_2m": 24.0, "wind_speed_10m": 20.5}},
}


class FakeAPI:
    """Stands in for the HTTP API: answers from `ANSWERS`, fails like a network for anywhere else."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, dict[str, str]]] = []

    def __call__(self, url: str, params: Mapping[str, str]) -> Any:
        self.requests.append((url, dict(params)))
        answer = ANSWERS.get((params["latitude"], params["longitude"]))
        if answer is None:
            raise ConnectionRefusedError("connection refused")
        return answer


# Module-level, so that the stdio transport can serve it from a new process (`tests.fakes:server`).
api = FakeAPI()
server = make_server(api)
