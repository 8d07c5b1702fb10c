"""Tools whose schemas take every shape `toolkit client` types: objects, recursion through `$defs`, enums,
`Literal`s with quotes, maps, unions, a tuple, `Any`, a wrapped list, no result, and a name that is no identifier."""

from __future__ import annotations

import enum
import math
from typing import Any, Literal

from pydantic import BaseModel
from typing_extensions import TypedDict

from toolkit import Server, tool


class Color(str, enum.Enum):
    RED = "red"
    GREEN = "green"


class Tree(BaseModel):
    """A tree: a value and its children."""

    value: int
    children: list[Tree] = []


class Point(TypedDict):
    x: float
    y: float


@tool(name="geo.distance")
def distance(a: Point, b: Point, unit: Literal["km", "mi", 'say "hi"'] = "km") -> float:
    """Distance between two points \u2013 as the crow flies."""
    return math.dist((a["x"], a["y"]), (b["x"], b["y"]))


@tool(structured=True)
def count(values: list[int], weights: dict[str, float] | None = None) -> list[int]:
    """The values, sorted."""
    return sorted(values)


@tool(inline_defs=False)
def grow(tree: Tree, color: Color = Color.RED, depth: int | None = None) -> Tree:
    """Add a leaf to the tree, valued one more than the last child."""
    last = tree.children[-1].value if tree.children else tree.value
    return tree.model_copy(update={"children": [*tree.children, Tree(value=last + 1)]})


@tool(structured=True)
def anything(value: Any, pair: tuple[int, str] | None = None, flag: bool = False) -> dict[str, Any]:
    """Echo the arguments."""
    return {"value": value, "pair": pair, "flag": flag}


@tool
def nothing() -> None:
    """Do nothing."""


server = Server("typed-tools", tools=[distance, count, grow, anything, nothing])
