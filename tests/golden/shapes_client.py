"""Typed calls to the tools of `shapes`: written by `toolkit client`.

Do not edit: run `toolkit client` again after the tools change (with `--check FILE` it says whether FILE is up to date).
"""

from __future__ import annotations

import json
from typing import Any, Literal, cast

from typing_extensions import NotRequired, TypedDict

from toolkit import CallToolResult, Client, OutputMismatchError, ToolError

T2faMode = Literal["first-mode", "second-mode", "third-mode", "line\nbreak\ttab"]


ContactsFindByColour = Literal[
    "colour-number-0",
    "colour-number-1",
    "colour-number-2",
    "colour-number-3",
    "colour-number-4",
    "colour-number-5",
    "colour-number-6",
    "colour-number-7",
    "colour-number-8",
    "colour-number-9",
    "colour-number-10",
    "colour-number-11",
]


Filter = TypedDict(
    "Filter",
    {
        "first-name": "NotRequired[str]",
        "class": "str",
        "sub/filters": "NotRequired[list[Filter]]",
    },
)


class Filter2(TypedDict):
    id: NotRequired[int]


class ContactsFindByResult(TypedDict):
    contacts: NotRequired[list[Filter2]]


class Client2(TypedDict):
    name: NotRequired[str]


class T2faPoint(TypedDict):
    x: NotRequired[float]


class ShapesClient:
    """The tools of 'shapes', called through a connected `toolkit.Client`."""

    def __init__(self, client: Client) -> None:
        self.client = client

    async def contacts_find_by(
        self,
        *,
        from_: str | None = None,
        arg_2nd_key: Literal["fixed"],
        kind: Literal["person", "company"] | None = None,
        ratio: float = 0.5,
        colour: ContactsFindByColour | None = None,
        filter: Filter,
        pair: list[Any] | None = None,
        scores: dict[str, float] | None = None,
        any: Any = None,
        both: Filter | None = None,
        options: dict[str, Any] | None = None,
    ) -> ContactsFindByResult:
        """Find contacts \u2013 say "hi" to them.

        A second paragraph, with a \\ backslash and \"\"\" quotes.

        Args:
            from_: A keyword as a name.
        """
        arguments: dict[str, Any] = {
            "2nd-key": arg_2nd_key,
            "kind": kind,
            "ratio": ratio,
            "filter": filter,
        }
        if from_ is not None:
            arguments["from"] = from_
        if colour is not None:
            arguments["colour"] = colour
        if pair is not None:
            arguments["pair"] = pair
        if scores is not None:
            arguments["scores"] = scores
        if any is not None:
            arguments["any"] = any
        if both is not None:
            arguments["both"] = both
        if options is not None:
            arguments["options"] = options
        result = await self._structured("contacts/find-by", arguments)
        return cast(ContactsFindByResult, result)

    async def class_(
        self,
        *,
        cast_: str | None = None,
        Client_: str | None = None,
    ) -> Client2:
        """Only a title"""
        arguments: dict[str, Any] = {}
        if cast_ is not None:
            arguments["cast"] = cast_
        if Client_ is not None:
            arguments["Client"] = Client_
        result = await self._structured("class", arguments)
        return cast(Client2, result)

    async def tool_2fa(
        self,
        *,
        self_: bool | None = None,
        from_: str | None = None,
        from__: str | None = None,
        point: T2faPoint | None = None,
        nothing: None = None,
        remote: Any = None,
        mode: T2faMode | None = None,
        colour: ContactsFindByColour = "colour-number-3",
        count: int | None = None,
        scale: float = 2,
        shade: Literal["light", "dark"] | None = None,
        items: list[Any] | None = None,
    ) -> Any:
        """Ends with "a quote\""""
        arguments: dict[str, Any] = {
            "nothing": nothing,
            "colour": colour,
            "scale": scale,
        }
        if self_ is not None:
            arguments["self"] = self_
        if from_ is not None:
            arguments["from"] = from_
        if from__ is not None:
            arguments["from_"] = from__
        if point is not None:
            arguments["point"] = point
        if remote is not None:
            arguments["remote"] = remote
        if mode is not None:
            arguments["mode"] = mode
        if count is not None:
            arguments["count"] = count
        if shade is not None:
            arguments["shade"] = shade
        if items is not None:
            arguments["items"] = items
        result = await self._structured("2fa", arguments, wrapped=True)
        return result

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
