"""Typed calls to the tools of `trips`: written by `toolkit client`.

Do not edit: run `toolkit client` again after the tools change (with `--check FILE` it says whether FILE is up to date).
"""

from __future__ import annotations

import json
from typing import Any

from toolkit import CallToolResult, Client, OutputMismatchError, ToolError


class TripsClient:
    """The tools of 'trips', called through a connected `toolkit.Client`."""

    def __init__(self, client: Client) -> None:
        self.client = client

    async def list_trips(self) -> CallToolResult:
        """The booked trips, by reference."""
        arguments: dict[str, Any] = {}
        return await self._call("list_trips", arguments)

    async def book_trip(
        self,
        *,
        city: str,
    ) -> CallToolResult:
        """Book a trip to a city, asking the traveller for the details.

        Args:
            city: Where to go.
        """
        arguments: dict[str, Any] = {
            "city": city,
        }
        return await self._call("book_trip", arguments)

    async def cancel_trip(
        self,
        *,
        reference: str,
    ) -> CallToolResult:
        """Cancel a booked trip (the user confirms first).

        Args:
            reference: The trip's reference, as `list_trips` gives it.
        """
        arguments: dict[str, Any] = {
            "reference": reference,
        }
        return await self._call("cancel_trip", arguments)

    async def pay_trip(
        self,
        *,
        reference: str,
    ) -> CallToolResult:
        """Pay for a trip on the payment provider's page (card details never pass through the client).

        Args:
            reference: The trip's reference.
        """
        arguments: dict[str, Any] = {
            "reference": reference,
        }
        return await self._call("pay_trip", arguments)

    async def suggest_activities(
        self,
        *,
        city: str,
    ) -> CallToolResult:
        """Ask the client's model for three things to do in a city (sampling; deprecated in 2026-07-28).

        Args:
            city: The city.
        """
        arguments: dict[str, Any] = {
            "city": city,
        }
        return await self._call("suggest_activities", arguments)

    async def _call(self, name: str, arguments: dict[str, Any]) -> CallToolResult:
        result = await self.client.call_tool(name, arguments)
        if result.is_error:
            raise ToolError(result.text or f"{name} failed")
        return result

    async def _structured(self, name: str, arguments: dict[str, Any], *, wrapped: bool = False) -> Any:
        result = await self._call(name, arguments)
        content = result.structured_content
        if content is None and wrapped and not self.client.modern and result.text is not None:
            # A value that is not an object, from a tool whose outputSchema only 2026-07-28 lists: the handshake
            # era has it as JSON text alone.
            return json.loads(result.text)
        if content is None:
            raise OutputMismatchError(f"{name} has an outputSchema but returned no structuredContent")
        # A value that is not an object comes as {"result": value} in the handshake era.
        return content["result"] if wrapped and not self.client.modern else content
