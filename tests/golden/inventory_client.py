"""Typed calls to the tools of `inventory`: written by `toolkit client`.

Do not edit: run `toolkit client` again after the tools change (with `--check FILE` it says whether FILE is up to date).
"""

from __future__ import annotations

import json
from typing import Any, cast

from typing_extensions import TypedDict

from toolkit import CallToolResult, Client, OutputMismatchError, ToolError


class Item(TypedDict):
    sku: str
    name: str
    quantity: int


class InventoryClient:
    """The tools of 'inventory', called through a connected `toolkit.Client`."""

    def __init__(self, client: Client) -> None:
        self.client = client

    async def add_item(
        self,
        *,
        sku: str,
        name: str,
        quantity: int = 0,
    ) -> Item:
        """Add an item to the catalogue, or rename it and set its stock if it exists.

        Args:
            sku: The item's stock-keeping unit, e.g. "TEA-001".
            name: What the item is called.
            quantity: Units in stock.
        """
        arguments: dict[str, Any] = {
            "sku": sku,
            "name": name,
            "quantity": quantity,
        }
        result = await self._structured("add_item", arguments)
        return cast(Item, result)

    async def receive_delivery(
        self,
        *,
        sku: str,
        quantity: int,
    ) -> Item:
        """Add delivered units to an item's stock.

        Args:
            sku: The item delivered.
            quantity: How many units.
        """
        arguments: dict[str, Any] = {
            "sku": sku,
            "quantity": quantity,
        }
        result = await self._structured("receive_delivery", arguments)
        return cast(Item, result)

    async def record_sale(
        self,
        *,
        sku: str,
        quantity: int,
    ) -> Item:
        """Take sold units out of an item's stock.

        Args:
            sku: The item sold.
            quantity: How many units.
        """
        arguments: dict[str, Any] = {
            "sku": sku,
            "quantity": quantity,
        }
        result = await self._structured("record_sale", arguments)
        return cast(Item, result)

    async def stock_report(
        self,
        *,
        below: int | None = None,
    ) -> CallToolResult:
        """Every item and its stock, fewest units first.

        Args:
            below: Only items with fewer units than this (to reorder).
        """
        arguments: dict[str, Any] = {}
        if below is not None:
            arguments["below"] = below
        return await self._call("stock_report", arguments)

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
