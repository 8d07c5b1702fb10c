"""Typed calls to the tools of `files`: written by `toolkit client`.

Do not edit: run `toolkit client` again after the tools change (with `--check FILE` it says whether FILE is up to date).
"""

from __future__ import annotations

import json
from typing import Any, cast

from typing_extensions import TypedDict

from toolkit import CallToolResult, Client, OutputMismatchError, ToolError


class FileInfo(TypedDict):
    path: str
    size: int
    modified: str


class Listing(TypedDict):
    files: list[FileInfo]


class FilesClient:
    """The tools of 'files', called through a connected `toolkit.Client`."""

    def __init__(self, client: Client) -> None:
        self.client = client

    async def list_files(
        self,
        *,
        pattern: str = "*",
    ) -> Listing:
        """List files whose path matches a glob pattern.

        Args:
            pattern: A glob such as `*.txt` or `docs/*`; `*` matches across folders.
        """
        arguments: dict[str, Any] = {
            "pattern": pattern,
        }
        result = await self._structured("list_files", arguments)
        return cast(Listing, result)

    async def read_text(
        self,
        *,
        path: str,
        max_chars: int = 20000,
    ) -> CallToolResult:
        """Read a text file (UTF-8).

        Args:
            path: A path inside the sandbox, such as `docs/a.txt`.
            max_chars: Stop after this many characters.
        """
        arguments: dict[str, Any] = {
            "path": path,
            "max_chars": max_chars,
        }
        return await self._call("read_text", arguments)

    async def write_file(
        self,
        *,
        path: str,
        text: str | None = None,
        data: str | None = None,
        overwrite: bool = False,
    ) -> CallToolResult:
        """Write a file, from text or from base64-encoded bytes.

        Args:
            path: A path inside the sandbox, such as `docs/a.txt`.
            text: The file's content as text (UTF-8).
            data: The file's content as bytes (base64 in JSON); give either text or data.
            overwrite: Replace the file if it exists.
        """
        arguments: dict[str, Any] = {
            "path": path,
            "overwrite": overwrite,
        }
        if text is not None:
            arguments["text"] = text
        if data is not None:
            arguments["data"] = data
        return await self._call("write_file", arguments)

    async def search(
        self,
        *,
        needle: str,
        pattern: str = "*",
    ) -> CallToolResult:
        """Find lines containing some text, reporting progress file by file.

        Args:
            needle: The text to look for (case-sensitive).
            pattern: Only search files whose path matches this glob.
        """
        arguments: dict[str, Any] = {
            "needle": needle,
            "pattern": pattern,
        }
        return await self._call("search", arguments)

    async def view_image(
        self,
        *,
        path: str,
    ) -> CallToolResult:
        """Show an image file (PNG, JPEG, GIF, WebP or SVG) to the model.

        Args:
            path: A path inside the sandbox, such as `docs/a.txt`.
        """
        arguments: dict[str, Any] = {
            "path": path,
        }
        return await self._call("view_image", arguments)

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
