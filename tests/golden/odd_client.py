"""Typed calls to the tools of `9lives`: written by `toolkit client`.

Do not edit: run `toolkit client` again after the tools change (with `--check FILE` it says whether FILE is up to date).
"""

from __future__ import annotations

import json
from typing import Any, cast

from typing_extensions import NotRequired, TypedDict

from toolkit import CallToolResult, Client, OutputMismatchError, ToolError


class Node(TypedDict):
    kids: NotRequired[list[Node | None]]


FileResult = TypedDict(  # noqa: UP013
    "FileResult",
    {
        "\ufb01le": "str",
    },
)


class T9livesClient:
    """The tools of '9lives', called through a connected `toolkit.Client`."""

    def __init__(self, client: Client) -> None:
        self.client = client

    async def x2(self) -> CallToolResult:
        """Call the tool 'x\xb2'."""
        arguments: dict[str, Any] = {}
        return await self._call("x\xb2", arguments)

    async def file(
        self,
        *,
        file: str | None = None,
        file_: int | None = None,
    ) -> CallToolResult:
        """Call the tool '\ufb01le'."""
        arguments: dict[str, Any] = {}
        if file is not None:
            arguments["\ufb01le"] = file
        if file_ is not None:
            arguments["file"] = file_
        return await self._call("\ufb01le", arguments)

    async def file_(
        self,
        *,
        loop: Any = None,
        node: Node | None = None,
    ) -> FileResult:
        """Call the tool 'file'."""
        arguments: dict[str, Any] = {}
        if loop is not None:
            arguments["loop"] = loop
        if node is not None:
            arguments["node"] = node
        result = await self._structured("file", arguments)
        return cast(FileResult, result)

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
