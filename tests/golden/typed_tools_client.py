"""Typed calls to the tools of `typed-tools`: written by `toolkit client`.

Do not edit: run `toolkit client` again after the tools change (with `--check FILE` it says whether FILE is up to date).
"""

from __future__ import annotations

import json
from typing import Any, Literal, cast

from typing_extensions import NotRequired, TypedDict

from toolkit import CallToolResult, Client, OutputMismatchError, ToolError


class GeoDistanceA(TypedDict):
    x: float
    y: float


class Tree(TypedDict):
    """A tree: a value and its children."""

    value: int
    children: NotRequired[list[Tree]]


class TypedToolsClient:
    """The tools of 'typed-tools', called through a connected `toolkit.Client`."""

    def __init__(self, client: Client) -> None:
        self.client = client

    async def geo_distance(
        self,
        *,
        a: GeoDistanceA,
        b: GeoDistanceA,
        unit: Literal["km", "mi", 'say "hi"'] = "km",
    ) -> float:
        """Distance between two points \u2013 as the crow flies."""
        arguments: dict[str, Any] = {
            "a": a,
            "b": b,
            "unit": unit,
        }
        result = await self._structured("geo.distance", arguments, wrapped=True)
        return cast(float, result)

    async def count(
        self,
        *,
        values: list[int],
        weights: dict[str, float] | None = None,
    ) -> list[int]:
        """The values, sorted."""
        arguments: dict[str, Any] = {
            "values": values,
        }
        if weights is not None:
            arguments["weights"] = weights
        result = await self._structured("count", arguments, wrapped=True)
        return cast(list[int], result)

    async def grow(
        self,
        *,
        tree: Tree,
        color: Literal["red", "green"] = "red",
        depth: int | None = None,
    ) -> Tree:
        """Add a leaf to the tree, valued one more than the last child."""
        arguments: dict[str, Any] = {
            "tree": tree,
            "color": color,
        }
        if depth is not None:
            arguments["depth"] = depth
        result = await self._structured("grow", arguments)
        return cast(Tree, result)

    async def anything(
        self,
        *,
        value: Any,
        pair: list[Any] | None = None,
        flag: bool = False,
    ) -> dict[str, Any]:
        """Echo the arguments."""
        arguments: dict[str, Any] = {
            "value": value,
            "flag": flag,
        }
        if pair is not None:
            arguments["pair"] = pair
        result = await self._structured("anything", arguments)
        return cast(dict[str, Any], result)

    async def nothing(self) -> CallToolResult:
        """Do nothing."""
        arguments: dict[str, Any] = {}
        return await self._call("nothing", arguments)

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
