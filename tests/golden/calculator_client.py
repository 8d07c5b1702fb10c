"""Typed calls to the tools of `calculator`: written by `toolkit client`.

Do not edit: run `toolkit client` again after the tools change (with `--check FILE` it says whether FILE is up to date).
"""

from __future__ import annotations

import json
from typing import Any, Literal, cast

from typing_extensions import TypedDict

from toolkit import CallToolResult, Client, OutputMismatchError, ToolError


class Summary(TypedDict):
    """Descriptive statistics of a sample."""

    count: int
    mean: float
    median: float
    stdev: float | None
    minimum: float
    maximum: float


class CalculatorClient:
    """The tools of 'calculator', called through a connected `toolkit.Client`."""

    def __init__(self, client: Client) -> None:
        self.client = client

    async def add(
        self,
        *,
        a: float,
        b: float,
    ) -> CallToolResult:
        """Add two numbers.

        Args:
            a: The first number.
            b: The second number.
        """
        arguments: dict[str, Any] = {
            "a": a,
            "b": b,
        }
        return await self._call("add", arguments)

    async def divide(
        self,
        *,
        dividend: float,
        divisor: float,
    ) -> CallToolResult:
        """Divide one number by another.

        Args:
            dividend: The number to divide.
            divisor: The number to divide by; must not be zero.
        """
        arguments: dict[str, Any] = {
            "dividend": dividend,
            "divisor": divisor,
        }
        return await self._call("divide", arguments)

    async def combine(
        self,
        *,
        operation: Literal["sum", "product", "min", "max"],
        values: list[float],
    ) -> CallToolResult:
        """Combine a list of numbers into one.

        Args:
            operation: How to combine them.
            values: The numbers, at least one.
        """
        arguments: dict[str, Any] = {
            "operation": operation,
            "values": values,
        }
        return await self._call("combine", arguments)

    async def summarize(
        self,
        *,
        values: list[float],
    ) -> Summary:
        """Describe a sample of numbers: count, mean, median, spread and range.

        Args:
            values: The sample: at least one number.
        """
        arguments: dict[str, Any] = {
            "values": values,
        }
        result = await self._structured("summarize", arguments)
        return cast(Summary, result)

    async def convert_distance(
        self,
        *,
        value: float,
        source: Literal["km", "mi", "nmi", "m"],
        target: Literal["km", "mi", "nmi", "m"],
    ) -> CallToolResult:
        """Convert a distance between kilometres, miles, nautical miles and metres.

        Args:
            value: The distance in the source unit.
            source: The unit of `value`.
            target: The unit to convert to.
        """
        arguments: dict[str, Any] = {
            "value": value,
            "source": source,
            "target": target,
        }
        return await self._call("convert_distance", arguments)

    async def round_money(
        self,
        *,
        amount: float | str,
        places: int = 2,
    ) -> CallToolResult:
        """Round an amount with banker's rounding, exactly (no binary floating point).

        Args:
            amount: The amount, as a number or a decimal string such as "2.675".
            places: Digits after the decimal point.
        """
        arguments: dict[str, Any] = {
            "amount": amount,
            "places": places,
        }
        return await self._call("round_money", arguments)

    async def evaluate(
        self,
        *,
        expression: str,
    ) -> CallToolResult:
        """Evaluate an arithmetic expression such as `(2 + 3) * 4 / 5`.

        Args:
            expression: Numbers, `+ - * / % **` and parentheses, such as `(2 + 3) * 4 / 5`; no names or function
                calls.
        """
        arguments: dict[str, Any] = {
            "expression": expression,
        }
        return await self._call("evaluate", arguments)

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
