"""Typed calls to the tools of `notes`: written by `toolkit client`.

Do not edit: run `toolkit client` again after the tools change (with `--check FILE` it says whether FILE is up to date).
"""

from __future__ import annotations

import json
from typing import Any, Literal, cast

from typing_extensions import NotRequired, TypedDict

from toolkit import CallToolResult, Client, OutputMismatchError, ToolError


class Note(TypedDict):
    """A note as the notebook stores it."""

    id: str
    title: str
    body: str
    tags: list[str]
    priority: Literal[1, 2, 3]
    due: str | None
    created: str


class SearchResult(TypedDict):
    notes: list[Note]
    total: int


class UpdateNoteChanges(TypedDict):
    """Only the fields to change."""

    title: NotRequired[str]
    body: NotRequired[str]
    tags: NotRequired[list[str]]
    priority: NotRequired[Literal[1, 2, 3]]


class NotesClient:
    """The tools of 'notes', called through a connected `toolkit.Client`."""

    def __init__(self, client: Client) -> None:
        self.client = client

    async def add_note(
        self,
        *,
        title: str,
        body: str,
        tags: list[str] | None = None,
        priority: Literal[1, 2, 3] = 2,
        due: str | None = None,
    ) -> Note:
        """Add a note to the notebook.

        Args:
            title: A short title.
            body: The note's text, in Markdown.
            tags: Lower-case tags such as "work" or "follow-up".
            priority: 1 (low) to 3 (high).
            due: When the note needs attention, as YYYY-MM-DD.
        """
        arguments: dict[str, Any] = {
            "title": title,
            "body": body,
            "priority": priority,
        }
        if tags is not None:
            arguments["tags"] = tags
        if due is not None:
            arguments["due"] = due
        result = await self._structured("add_note", arguments)
        return cast(Note, result)

    async def search_notes(
        self,
        *,
        query: str = "",
        tag: str | None = None,
        due_before: str | None = None,
        limit: int = 10,
    ) -> SearchResult:
        """Find notes, most urgent first.

        Args:
            query: Words to look for in titles and bodies (case-insensitive); empty matches every note.
            tag: Only notes with this tag.
            due_before: Only notes due before this date.
            limit: At most this many notes.
        """
        arguments: dict[str, Any] = {
            "query": query,
            "limit": limit,
        }
        if tag is not None:
            arguments["tag"] = tag
        if due_before is not None:
            arguments["due_before"] = due_before
        result = await self._structured("search_notes", arguments)
        return cast(SearchResult, result)

    async def update_note(
        self,
        *,
        note_id: str,
        changes: UpdateNoteChanges,
    ) -> Note:
        """Change a note's title, body, tags or priority.

        Args:
            note_id: The note's id.
            changes: Only the fields to change.
        """
        arguments: dict[str, Any] = {
            "note_id": note_id,
            "changes": changes,
        }
        result = await self._structured("update_note", arguments)
        return cast(Note, result)

    async def delete_note(
        self,
        *,
        note_id: str,
    ) -> CallToolResult:
        """Delete a note for good.

        Args:
            note_id: The note's id.
        """
        arguments: dict[str, Any] = {
            "note_id": note_id,
        }
        return await self._call("delete_note", arguments)

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
