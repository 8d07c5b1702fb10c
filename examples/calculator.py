"""A calculator: arithmetic, unit conversion and statistics as MCP tools.

Run it as a stdio server with `python examples/calculator.py`.
"""

from __future__ import annotations

import ast
import enum
import math
import operator
import statistics
from collections.abc import Callable
from decimal import ROUND_HALF_EVEN, Decimal
from typing import Annotated, Literal

from pydantic import BaseModel, Field

from toolkit import Server, ToolError, tool

Number = Annotated[float, Field(allow_inf_nan=False)]


class Operation(str, enum.Enum):
    """What `combine` does with its values."""

    SUM = "sum"
    PRODUCT = "product"
    MIN = "min"
    MAX = "max"


class Summary(BaseModel):
    """Descriptive statistics of a sample."""

    count: int
    mean: float
    median: float
    stdev: float | None = Field(description="Sample standard deviation; null for a single value.")
    minimum: float
    maximum: float


@tool(read_only=True, idempotent=True, open_world=False)
def add(a: Number, b: Number) -> float:
    """Add two numbers.

    Args:
        a: The first number.
        b: The second number.
    """
    return a + b


@tool(read_only=True, idempotent=True, open_world=False)
def divide(dividend: Number, divisor: Number) -> float:
    """Divide one number by another.

    Args:
        dividend: The number to divide.
        divisor: The number to divide by; must not be zero.
    """
    if divisor == 0:
        raise ToolError("Cannot divide by zero: choose a non-zero divisor.")
    return dividend / divisor


@tool(read_only=True, idempotent=True, open_world=False)
def combine(operation: Operation, values: Annotated[list[Number], Field(min_length=1, max_length=1000)]) -> float:
    """Combine a list of numbers into one.

    Args:
        operation: How to combine them.
        values: The numbers, at least one.
    """
    reducers: dict[Operation, Callable[[list[float]], float]] = {
        Operation.SUM: math.fsum,
        Operation.PRODUCT: math.prod,
        Operation.MIN: min,
        Operation.MAX: max,
    }
    return reducers[operation](values)


@tool(read_only=True, idempotent=True, open_world=False)
def summarize(values: Annotated[list[Number], Field(min_length=1)]) -> Summary:
    """Describe a sample of numbers: count, mean, median, spread and range.

    Args:
        values: The sample: at least one number.
    """
    return Summary(
        count=len(values),
        mean=statistics.fmean(values),
        median=statistics.median(values),
        stdev=statistics.stdev(values) if len(values) > 1 else None,
        minimum=min(values),
        maximum=max(values),
    )


_KM_PER = {"km": 1.0, "mi": 1.609344, "nmi": 1.852, "m": 0.001}


@tool(read_only=True, idempotent=True, open_world=False)
def convert_distance(
    value: Number, source: Literal["km", "mi", "nmi", "m"], target: Literal["km", "mi", "nmi", "m"]
) -> float:
    """Convert a distance between kilometres, miles, nautical miles and metres.

    Args:
        value: The distance in the source unit.
        source: The unit of `value`.
        target: The unit to convert to.
    """
    return value * _KM_PER[source] / _KM_PER[target]


@tool(read_only=True, idempotent=True, open_world=False)
def round_money(amount: Decimal, places: Annotated[int, Field(ge=0, le=8)] = 2) -> str:
    """Round an amount with banker's rounding, exactly (no binary floating point).

    Args:
        amount: The amount, as a number or a decimal string such as "2.675".
        places: Digits after the decimal point.
    """
    return str(amount.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_EVEN))


_BINARY: dict[type[ast.operator], Callable[[float, float], float]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.Pow: operator.pow,
    ast.Mod: operator.mod,
}


def _evaluate(node: ast.expr) -> float:
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return float(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        value = _evaluate(node.operand)
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _evaluate(node.left), _evaluate(node.right)
        if isinstance(node.op, ast.Pow) and abs(right) > 100:
            raise ToolError("Exponents larger than 100 are not allowed.")
        return _BINARY[type(node.op)](left, right)
    raise ToolError(f"Unsupported syntax: {ast.unparse(node)!r}. Use numbers, + - * / % ** and parentheses.")


@tool(read_only=True, idempotent=True, open_world=False)
def evaluate(expression: Annotated[str, Field(min_length=1, max_length=200)]) -> float:
    """Evaluate an arithmetic expression such as `(2 + 3) * 4 / 5`.

    Args:
        expression: Numbers, `+ - * / % **` and parentheses, such as `(2 + 3) * 4 / 5`; no names or function
            calls.
    """
    try:
        tree = ast.parse(expression, mode="eval")
    except SyntaxError as exc:
        raise ToolError(f"Not an arithmetic expression: {exc.msg}.") from None
    try:
        return _evaluate(tree.body)
    except ZeroDivisionError:
        raise ToolError("Division by zero.") from None


server = Server(
    "calculator",
    instructions="Exact and floating-point arithmetic, distance conversion and descriptive statistics.",
    tools=[add, divide, combine, summarize, convert_distance, round_money, evaluate],
)

if __name__ == "__main__":
    server.run()
