"""Whole tool definitions for representative signatures, compared as complete objects (snapshot style).

The module uses `from __future__ import annotations`, so every annotation below is a string that `@tool`
resolves, including forward references and types defined inside a function body.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import uuid
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Any, Literal, Optional, Union

import pytest
from jsonschema import Draft202012Validator
from pydantic import BaseModel, Field
from typing_extensions import NotRequired, TypedDict

from toolkit import Context, Tool, tool


class Color(str, enum.Enum):
    RED = "red"
    GREEN = "green"


class Priority(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Point(BaseModel):
    x: float
    y: float = 0.0


class Segment(BaseModel):
    """A straight line between two points."""

    start: Point
    end: Point
    label: str | None = None


class TreeNode(BaseModel):
    value: int
    children: list[TreeNode] = []


class Filters(TypedDict):
    owner: str
    tags: NotRequired[list[str]]


@dataclasses.dataclass
class Window:
    width: int
    height: int = 600


class Summary(BaseModel):
    count: int
    mean: float | None


class Stats(TypedDict):
    total: int
    by_color: dict[str, int]


@dataclasses.dataclass
class Box:
    top_left: Point
    size: Window


# --- signatures -------------------------------------------------------------------------------------


@tool
def ping() -> str:
    """Check that the server answers."""
    return "pong"


@tool
def scalars(text: str, count: int, ratio: float, flag: bool, nothing: None) -> None:
    """Take one of each JSON scalar."""


@tool
def scalar_defaults(text: str = "hi", count: int = 3, ratio: float = 0.5, flag: bool = False) -> None:
    """Scalars with defaults: not required, default shown."""


@tool
def collections(
    names: list[str], pair: tuple[int, str], coords: tuple[float, ...], tags: set[str], ids: frozenset[int]
) -> None:
    """Lists, tuples and sets."""


@tool
def mappings(weights: dict[str, float], nested: dict[str, list[int]] | None = None) -> None:
    """String-keyed dictionaries."""


@tool
def optionals(a: Optional[int] = None, b: str | None = None, c: Union[int, str] = 0, d: int | None = 5) -> None:  # noqa: UP007, UP045
    """Optional parameters in the default (compact) style."""


@tool(optional_style="faithful")
def optionals_faithful(a: Optional[int] = None, b: str | None = None, c: Point | None = None) -> None:  # noqa: UP045
    """Optional parameters in the faithful style."""


@tool
def required_nullable(when: dt.date | None) -> None:
    """A nullable parameter without a default stays required and says it may be null."""


@tool
def literals(mode: Literal["fast", "safe"], level: Literal[1, 2, 3] = 1, tag: Literal["x", "y"] | None = None) -> None:
    """Literal choices."""


@tool
def enums(color: Color, priority: Priority = Priority.LOW) -> None:
    """A str enum and an int enum."""


@tool
def times(at: dt.datetime, day: dt.date, clock: dt.time, wait: dt.timedelta = dt.timedelta(minutes=5)) -> None:
    """Dates and times, as ISO 8601 strings."""


@tool
def special_strings(id: uuid.UUID, path: Path, amount: Decimal = Decimal("9.99")) -> None:
    """UUIDs, paths and decimals."""


@tool
def binary(data: bytes, extra: bytes | None = None) -> int:
    """Bytes travel as base64 text."""
    return len(data)


@tool
def model_param(point: Point) -> None:
    """A pydantic model parameter."""


@tool
def nested_models(segment: Segment, points: list[Point]) -> None:
    """Nested models are inlined."""


@tool(inline_defs=False)
def nested_models_defs(segment: Segment, points: list[Point]) -> None:
    """With inline_defs=False, shared models stay in $defs."""


@tool
def recursive(tree: TreeNode, other: TreeNode | None = None) -> None:
    """A recursive model keeps $defs and $ref."""


@tool
def typed_dict(filters: Filters) -> None:
    """A TypedDict with a NotRequired key."""


@tool
def dataclass_param(window: Window) -> None:
    """A dataclass parameter."""


@tool
def number_constraints(
    count: Annotated[int, Field(ge=1, le=100)],
    step: Annotated[int, Field(multiple_of=5)] = 10,
    ratio: Annotated[float, Field(gt=0, lt=1)] = 0.5,
) -> None:
    """Numeric constraints."""


@tool
def string_constraints(
    code: Annotated[str, Field(min_length=3, max_length=3, pattern=r"^[A-Z]+$")],
    tags: Annotated[list[str], Field(min_length=1, max_length=5)],
) -> None:
    """String and list constraints."""


@tool
def field_defaults(
    query: str = Field(description="What to search for."),
    limit: int = Field(10, ge=1, description="At most this many results.", examples=[5, 20]),
    sources: list[str] = Field(default_factory=list),  # noqa: B008 - Field as a default is how pydantic works
) -> None:
    """Parameters declared with `= Field(...)`."""


@tool
def descriptions(
    city: Annotated[str, "The city's name."],
    units: Annotated[str, Field(description="From Field.")] = "metric",
    days: int = 1,
) -> None:
    """Get a forecast.

    Args:
        city: Docstring text that loses to Annotated.
        units: Docstring text that loses to Field.
        days: How many days, from the docstring.
    """


@tool
def with_context(query: str, ctx: Context, maybe: Context | None = None) -> None:
    """Context parameters are injected, never in the schema."""


class Library:
    """A class whose methods are tools."""

    def __init__(self) -> None:
        self.books: list[str] = []

    @tool
    def add_book(self, title: str) -> int:
        """Add a book.

        Args:
            title: The book's title.
        """
        self.books.append(title)
        return len(self.books)


class Order(BaseModel):
    lines: list[OrderLine]


class OrderLine(BaseModel):
    sku: str
    quantity: int = 1


@tool
def forward_ref(order: Order) -> None:
    """A model whose field refers forward to a model defined after it."""


def make_local_tool() -> Tool[..., Any]:
    class Local(BaseModel):
        n: int

    @tool
    def local_type(value: Local, values: list[Local]) -> Local:
        """A model defined inside a function body."""
        return value

    return local_type


local_type = make_local_tool()


# --- output schemas ---------------------------------------------------------------------------------


@tool
def returns_model(count: int) -> Summary:
    """An object-like return type gives an outputSchema."""
    return Summary(count=count, mean=None)


@tool
def returns_typed_dict() -> Stats:
    """A TypedDict return type."""
    return {"total": 0, "by_color": {}}


@tool
def returns_dataclass() -> Box:
    """A dataclass with nested types."""
    return Box(Point(x=0), Window(1))


@tool
def returns_dict() -> dict[str, int]:
    """`dict[str, T]` is object-like."""
    return {}


@tool
def returns_int() -> int:
    """Not object-like: no outputSchema by default."""
    return 1


@tool(structured=True)
def returns_int_structured() -> int:
    """structured=True wraps a non-object type."""
    return 1


@tool(structured=True)
def returns_list_structured() -> list[Point]:
    """A wrapped list of models."""
    return []


@tool(structured=False)
def returns_model_unstructured() -> Summary:
    """structured=False: no outputSchema."""
    return Summary(count=0, mean=None)


@tool
def returns_recursive() -> TreeNode:
    """A recursive return type: the root is the model, its $defs kept."""
    return TreeNode(value=0)


@tool(
    name="full.definition-1",
    title="Full definition",
    description="Given explicitly.",
    read_only=True,
    destructive=False,
    idempotent=True,
    open_world=False,
    icons=[{"src": "https://example.com/icon.png", "mimeType": "image/png", "sizes": ["48x48"]}],
    meta={"com.example/owner": "docs"},
)
def full(x: int) -> None:
    """Ignored: description= wins."""


# --- the snapshots ----------------------------------------------------------------------------------

SNAPSHOTS: list[tuple[Tool[..., Any], dict[str, Any]]] = [
    (
        ping,
        {
            "name": "ping",
            "description": "Check that the server answers.",
            "inputSchema": {"type": "object", "additionalProperties": False},
        },
    ),
    (
        scalars,
        {
            "name": "scalars",
            "description": "Take one of each JSON scalar.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "text": {"type": "string"},
                    "count": {"type": "integer"},
                    "ratio": {"type": "number"},
                    "flag": {"type": "boolean"},
                    "nothing": {"type": "null"},
                },
                "required": ["text", "count", "ratio", "flag", "nothing"],
                "additionalProperties": False,
            },
        },
    ),
    (
        scalar_defaults,
        {
            "name": "scalar_defaults",
            "description": "Scalars with defaults: not required, default shown.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "text": {"type": "string", "default": "hi"},
                    "count": {"type": "integer", "default": 3},
                    "ratio": {"type": "number", "default": 0.5},
                    "flag": {"type": "boolean", "default": False},
                },
                "additionalProperties": False,
            },
        },
    ),
    (
        collections,
        {
            "name": "collections",
            "description": "Lists, tuples and sets.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "names": {"items": {"type": "string"}, "type": "array"},
                    "pair": {
                        "maxItems": 2,
                        "minItems": 2,
                        "prefixItems": [{"type": "integer"}, {"type": "string"}],
                        "type": "array",
                    },
                    "coords": {"items": {"type": "number"}, "type": "array"},
                    "tags": {"items": {"type": "string"}, "type": "array", "uniqueItems": True},
                    "ids": {"items": {"type": "integer"}, "type": "array", "uniqueItems": True},
                },
                "required": ["names", "pair", "coords", "tags", "ids"],
                "additionalProperties": False,
            },
        },
    ),
    (
        mappings,
        {
            "name": "mappings",
            "description": "String-keyed dictionaries.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "weights": {"additionalProperties": {"type": "number"}, "type": "object"},
                    "nested": {
                        "additionalProperties": {"items": {"type": "integer"}, "type": "array"},
                        "type": "object",
                    },
                },
                "required": ["weights"],
                "additionalProperties": False,
            },
        },
    ),
    (
        optionals,
        {
            "name": "optionals",
            "description": "Optional parameters in the default (compact) style.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "a": {"type": "integer"},
                    "b": {"type": "string"},
                    "c": {"anyOf": [{"type": "integer"}, {"type": "string"}], "default": 0},
                    "d": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": 5},
                },
                "additionalProperties": False,
            },
        },
    ),
    (
        optionals_faithful,
        {
            "name": "optionals_faithful",
            "description": "Optional parameters in the faithful style.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "a": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None},
                    "b": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
                    "c": {
                        "anyOf": [
                            {
                                "properties": {"x": {"type": "number"}, "y": {"default": 0.0, "type": "number"}},
                                "required": ["x"],
                                "type": "object",
                            },
                            {"type": "null"},
                        ],
                        "default": None,
                    },
                },
                "additionalProperties": False,
            },
        },
    ),
    (
        required_nullable,
        {
            "name": "required_nullable",
            "description": "A nullable parameter without a default stays required and says it may be null.",
            "inputSchema": {
                "type": "object",
                "properties": {"when": {"anyOf": [{"format": "date", "type": "string"}, {"type": "null"}]}},
                "required": ["when"],
                "additionalProperties": False,
            },
        },
    ),
    (
        literals,
        {
            "name": "literals",
            "description": "Literal choices.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "mode": {"enum": ["fast", "safe"], "type": "string"},
                    "level": {"enum": [1, 2, 3], "type": "integer", "default": 1},
                    "tag": {"enum": ["x", "y"], "type": "string"},
                },
                "required": ["mode"],
                "additionalProperties": False,
            },
        },
    ),
    (
        enums,
        {
            "name": "enums",
            "description": "A str enum and an int enum.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "color": {"enum": ["red", "green"], "type": "string"},
                    "priority": {"enum": [1, 2], "type": "integer", "default": 1},
                },
                "required": ["color"],
                "additionalProperties": False,
            },
        },
    ),
    (
        times,
        {
            "name": "times",
            "description": "Dates and times, as ISO 8601 strings.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "at": {"format": "date-time", "type": "string"},
                    "day": {"format": "date", "type": "string"},
                    "clock": {"format": "time", "type": "string"},
                    "wait": {"format": "duration", "type": "string", "default": "PT5M"},
                },
                "required": ["at", "day", "clock"],
                "additionalProperties": False,
            },
        },
    ),
    (
        special_strings,
        {
            "name": "special_strings",
            "description": "UUIDs, paths and decimals.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "id": {"format": "uuid", "type": "string"},
                    "path": {"format": "path", "type": "string"},
                    "amount": {"anyOf": [{"type": "number"}, {"type": "string"}], "default": "9.99"},
                },
                "required": ["id", "path"],
                "additionalProperties": False,
            },
        },
    ),
    (
        binary,
        {
            "name": "binary",
            "description": "Bytes travel as base64 text.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "data": {"format": "base64", "type": "string"},
                    "extra": {"format": "base64", "type": "string"},
                },
                "required": ["data"],
                "additionalProperties": False,
            },
        },
    ),
    (
        model_param,
        {
            "name": "model_param",
            "description": "A pydantic model parameter.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "point": {
                        "properties": {"x": {"type": "number"}, "y": {"default": 0.0, "type": "number"}},
                        "required": ["x"],
                        "type": "object",
                    }
                },
                "required": ["point"],
                "additionalProperties": False,
            },
        },
    ),
    (
        nested_models,
        {
            "name": "nested_models",
            "description": "Nested models are inlined.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "segment": {
                        "description": "A straight line between two points.",
                        "properties": {
                            "start": {
                                "properties": {"x": {"type": "number"}, "y": {"default": 0.0, "type": "number"}},
                                "required": ["x"],
                                "type": "object",
                            },
                            "end": {
                                "properties": {"x": {"type": "number"}, "y": {"default": 0.0, "type": "number"}},
                                "required": ["x"],
                                "type": "object",
                            },
                            "label": {"type": "string"},
                        },
                        "required": ["start", "end"],
                        "type": "object",
                    },
                    "points": {
                        "items": {
                            "properties": {"x": {"type": "number"}, "y": {"default": 0.0, "type": "number"}},
                            "required": ["x"],
                            "type": "object",
                        },
                        "type": "array",
                    },
                },
                "required": ["segment", "points"],
                "additionalProperties": False,
            },
        },
    ),
    (
        nested_models_defs,
        {
            "name": "nested_models_defs",
            "description": "With inline_defs=False, shared models stay in $defs.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "segment": {"$ref": "#/$defs/Segment"},
                    "points": {"items": {"$ref": "#/$defs/Point"}, "type": "array"},
                },
                "required": ["segment", "points"],
                "additionalProperties": False,
                "$defs": {
                    "Point": {
                        "properties": {"x": {"type": "number"}, "y": {"default": 0.0, "type": "number"}},
                        "required": ["x"],
                        "type": "object",
                    },
                    "Segment": {
                        "description": "A straight line between two points.",
                        "properties": {
                            "start": {"$ref": "#/$defs/Point"},
                            "end": {"$ref": "#/$defs/Point"},
                            "label": {"type": "string"},
                        },
                        "required": ["start", "end"],
                        "type": "object",
                    },
                },
            },
        },
    ),
    (
        recursive,
        {
            "name": "recursive",
            "description": "A recursive model keeps $defs and $ref.",
            "inputSchema": {
                "type": "object",
                "properties": {"tree": {"$ref": "#/$defs/TreeNode"}, "other": {"$ref": "#/$defs/TreeNode"}},
                "required": ["tree"],
                "additionalProperties": False,
                "$defs": {
                    "TreeNode": {
                        "properties": {
                            "value": {"type": "integer"},
                            "children": {"default": [], "items": {"$ref": "#/$defs/TreeNode"}, "type": "array"},
                        },
                        "required": ["value"],
                        "type": "object",
                    }
                },
            },
        },
    ),
    (
        typed_dict,
        {
            "name": "typed_dict",
            "description": "A TypedDict with a NotRequired key.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "filters": {
                        "properties": {
                            "owner": {"type": "string"},
                            "tags": {"items": {"type": "string"}, "type": "array"},
                        },
                        "required": ["owner"],
                        "type": "object",
                    }
                },
                "required": ["filters"],
                "additionalProperties": False,
            },
        },
    ),
    (
        dataclass_param,
        {
            "name": "dataclass_param",
            "description": "A dataclass parameter.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "window": {
                        "properties": {"width": {"type": "integer"}, "height": {"default": 600, "type": "integer"}},
                        "required": ["width"],
                        "type": "object",
                    }
                },
                "required": ["window"],
                "additionalProperties": False,
            },
        },
    ),
    (
        number_constraints,
        {
            "name": "number_constraints",
            "description": "Numeric constraints.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "count": {"maximum": 100, "minimum": 1, "type": "integer"},
                    "step": {"multipleOf": 5, "type": "integer", "default": 10},
                    "ratio": {"exclusiveMaximum": 1, "exclusiveMinimum": 0, "type": "number", "default": 0.5},
                },
                "required": ["count"],
                "additionalProperties": False,
            },
        },
    ),
    (
        string_constraints,
        {
            "name": "string_constraints",
            "description": "String and list constraints.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "code": {"maxLength": 3, "minLength": 3, "pattern": "^[A-Z]+$", "type": "string"},
                    "tags": {"items": {"type": "string"}, "maxItems": 5, "minItems": 1, "type": "array"},
                },
                "required": ["code", "tags"],
                "additionalProperties": False,
            },
        },
    ),
    (
        field_defaults,
        {
            "name": "field_defaults",
            "description": "Parameters declared with `= Field(...)`.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "What to search for."},
                    "limit": {
                        "minimum": 1,
                        "type": "integer",
                        "description": "At most this many results.",
                        "examples": [5, 20],
                        "default": 10,
                    },
                    "sources": {"items": {"type": "string"}, "type": "array"},
                },
                "required": ["query"],
                "additionalProperties": False,
            },
        },
    ),
    (
        descriptions,
        {
            "name": "descriptions",
            "description": "Get a forecast.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "city": {"type": "string", "description": "The city's name."},
                    "units": {"description": "From Field.", "type": "string", "default": "metric"},
                    "days": {"type": "integer", "description": "How many days, from the docstring.", "default": 1},
                },
                "required": ["city"],
                "additionalProperties": False,
            },
        },
    ),
    (
        with_context,
        {
            "name": "with_context",
            "description": "Context parameters are injected, never in the schema.",
            "inputSchema": {
                "type": "object",
                "properties": {"query": {"type": "string"}},
                "required": ["query"],
                "additionalProperties": False,
            },
        },
    ),
    (
        forward_ref,
        {
            "name": "forward_ref",
            "description": "A model whose field refers forward to a model defined after it.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "order": {
                        "properties": {
                            "lines": {
                                "items": {
                                    "properties": {
                                        "sku": {"type": "string"},
                                        "quantity": {"default": 1, "type": "integer"},
                                    },
                                    "required": ["sku"],
                                    "type": "object",
                                },
                                "type": "array",
                            }
                        },
                        "required": ["lines"],
                        "type": "object",
                    }
                },
                "required": ["order"],
                "additionalProperties": False,
            },
        },
    ),
    (
        local_type,
        {
            "name": "local_type",
            "description": "A model defined inside a function body.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "value": {"properties": {"n": {"type": "integer"}}, "required": ["n"], "type": "object"},
                    "values": {
                        "items": {"properties": {"n": {"type": "integer"}}, "required": ["n"], "type": "object"},
                        "type": "array",
                    },
                },
                "required": ["value", "values"],
                "additionalProperties": False,
            },
            "outputSchema": {
                "properties": {"n": {"type": "integer"}},
                "required": ["n"],
                "title": "Local",
                "type": "object",
            },
        },
    ),
    (
        returns_model,
        {
            "name": "returns_model",
            "description": "An object-like return type gives an outputSchema.",
            "inputSchema": {
                "type": "object",
                "properties": {"count": {"type": "integer"}},
                "required": ["count"],
                "additionalProperties": False,
            },
            "outputSchema": {
                "properties": {"count": {"type": "integer"}, "mean": {"anyOf": [{"type": "number"}, {"type": "null"}]}},
                "required": ["count", "mean"],
                "title": "Summary",
                "type": "object",
            },
        },
    ),
    (
        returns_typed_dict,
        {
            "name": "returns_typed_dict",
            "description": "A TypedDict return type.",
            "inputSchema": {"type": "object", "additionalProperties": False},
            "outputSchema": {
                "properties": {
                    "total": {"type": "integer"},
                    "by_color": {"additionalProperties": {"type": "integer"}, "type": "object"},
                },
                "required": ["total", "by_color"],
                "title": "Stats",
                "type": "object",
            },
        },
    ),
    (
        returns_dataclass,
        {
            "name": "returns_dataclass",
            "description": "A dataclass with nested types.",
            "inputSchema": {"type": "object", "additionalProperties": False},
            "outputSchema": {
                "properties": {
                    "top_left": {
                        "properties": {"x": {"type": "number"}, "y": {"default": 0.0, "type": "number"}},
                        "required": ["x"],
                        "title": "Point",
                        "type": "object",
                    },
                    "size": {
                        "properties": {"width": {"type": "integer"}, "height": {"default": 600, "type": "integer"}},
                        "required": ["width"],
                        "title": "Window",
                        "type": "object",
                    },
                },
                "required": ["top_left", "size"],
                "title": "Box",
                "type": "object",
            },
        },
    ),
    (
        returns_dict,
        {
            "name": "returns_dict",
            "description": "`dict[str, T]` is object-like.",
            "inputSchema": {"type": "object", "additionalProperties": False},
            "outputSchema": {"additionalProperties": {"type": "integer"}, "type": "object"},
        },
    ),
    (
        returns_int,
        {
            "name": "returns_int",
            "description": "Not object-like: no outputSchema by default.",
            "inputSchema": {"type": "object", "additionalProperties": False},
        },
    ),
    (
        returns_int_structured,
        {
            "name": "returns_int_structured",
            "description": "structured=True wraps a non-object type.",
            "inputSchema": {"type": "object", "additionalProperties": False},
            "outputSchema": {"type": "object", "properties": {"result": {"type": "integer"}}, "required": ["result"]},
        },
    ),
    (
        returns_list_structured,
        {
            "name": "returns_list_structured",
            "description": "A wrapped list of models.",
            "inputSchema": {"type": "object", "additionalProperties": False},
            "outputSchema": {
                "type": "object",
                "properties": {
                    "result": {
                        "items": {
                            "properties": {"x": {"type": "number"}, "y": {"default": 0.0, "type": "number"}},
                            "required": ["x"],
                            "title": "Point",
                            "type": "object",
                        },
                        "type": "array",
                    }
                },
                "required": ["result"],
            },
        },
    ),
    (
        returns_model_unstructured,
        {
            "name": "returns_model_unstructured",
            "description": "structured=False: no outputSchema.",
            "inputSchema": {"type": "object", "additionalProperties": False},
        },
    ),
    (
        returns_recursive,
        {
            "name": "returns_recursive",
            "description": "A recursive return type: the root is the model, its $defs kept.",
            "inputSchema": {"type": "object", "additionalProperties": False},
            "outputSchema": {
                "properties": {
                    "value": {"type": "integer"},
                    "children": {"default": [], "items": {"$ref": "#/$defs/TreeNode"}, "type": "array"},
                },
                "required": ["value"],
                "title": "TreeNode",
                "type": "object",
                "$defs": {
                    "TreeNode": {
                        "properties": {
                            "value": {"type": "integer"},
                            "children": {"default": [], "items": {"$ref": "#/$defs/TreeNode"}, "type": "array"},
                        },
                        "required": ["value"],
                        "title": "TreeNode",
                        "type": "object",
                    }
                },
            },
        },
    ),
    (
        full,
        {
            "name": "full.definition-1",
            "title": "Full definition",
            "description": "Given explicitly.",
            "inputSchema": {
                "type": "object",
                "properties": {"x": {"type": "integer"}},
                "required": ["x"],
                "additionalProperties": False,
            },
            "annotations": {
                "title": "Full definition",
                "readOnlyHint": True,
                "destructiveHint": False,
                "idempotentHint": True,
                "openWorldHint": False,
            },
            "icons": [{"src": "https://example.com/icon.png", "mimeType": "image/png", "sizes": ["48x48"]}],
            "_meta": {"com.example/owner": "docs"},
        },
    ),
    (
        Library().add_book,
        {
            "name": "add_book",
            "description": "Add a book.",
            "inputSchema": {
                "type": "object",
                "properties": {"title": {"type": "string", "description": "The book's title."}},
                "required": ["title"],
                "additionalProperties": False,
            },
        },
    ),
]


@pytest.mark.parametrize(("tool_obj", "expected"), SNAPSHOTS, ids=[t.name for t, _ in SNAPSHOTS])
def test_definition_matches_snapshot(tool_obj: Tool[..., Any], expected: dict[str, Any]) -> None:
    assert tool_obj.definition.model_dump(mode="json", by_alias=True, exclude_none=True) == expected


def test_every_snapshot_is_a_valid_json_schema() -> None:
    for tool_obj, _ in SNAPSHOTS:
        definition = tool_obj.definition
        Draft202012Validator.check_schema(definition.input_schema)
        if definition.output_schema is not None:
            Draft202012Validator.check_schema(definition.output_schema)
            assert definition.output_schema["type"] == "object"
        assert definition.input_schema["type"] == "object"


def subschemas(schema: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield schema
    for key, value in schema.items():
        if key in ("properties", "$defs"):
            for sub in value.values():
                yield from subschemas(sub)
        elif key in ("anyOf", "prefixItems"):
            for sub in value:
                yield from subschemas(sub)
        elif key in ("items", "additionalProperties") and isinstance(value, dict):
            yield from subschemas(value)


def test_no_input_schema_has_a_title_and_an_output_schema_names_only_its_types() -> None:
    # pydantic's per-property titles ("Count" for `count`) are dropped everywhere; an output schema keeps the titles
    # that name a type (a model's class name), so that a generated client names its classes after the models.
    for tool_obj, _ in SNAPSHOTS:
        definition = tool_obj.definition
        assert not [s for s in subschemas(definition.input_schema) if "title" in s], tool_obj.name
        output = definition.output_schema or {}
        titled = [s for s in subschemas(output) if "title" in s]
        assert all(s["type"] == "object" and "properties" in s for s in titled), tool_obj.name
    titles = [s["title"] for s in subschemas(returns_dataclass.definition.output_schema or {}) if "title" in s]
    assert titles == ["Box", "Point", "Window"]
