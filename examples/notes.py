"""A notebook kept in memory: tools as methods of an object, bound per instance.

Each `Notebook` has its own notes; `server` serves one. Run it as a stdio server with `python examples/notes.py`.
"""

from __future__ import annotations

import datetime as dt
import enum
import uuid
from typing import Annotated

from pydantic import BaseModel, Field
from typing_extensions import NotRequired, TypedDict

from toolkit import Context, Server, ToolError, tool

Tag = Annotated[str, Field(pattern=r"^[a-z0-9-]{1,30}$")]


class Priority(int, enum.Enum):
    LOW = 1
    NORMAL = 2
    HIGH = 3


class Note(BaseModel):
    """A note as the notebook stores it."""

    id: uuid.UUID
    title: str
    body: str
    tags: list[str]
    priority: Priority
    due: dt.date | None
    created: dt.datetime


class Changes(TypedDict):
    """Fields to change; leave a key out to keep its value."""

    title: NotRequired[str]
    body: NotRequired[str]
    tags: NotRequired[list[Tag]]
    priority: NotRequired[Priority]


class SearchResult(BaseModel):
    notes: list[Note]
    total: int = Field(description="How many notes matched, before the limit.")


class Notebook:
    """Notes in memory. Decorated methods become tools bound to this instance."""

    def __init__(self, clock: type[dt.datetime] = dt.datetime) -> None:
        self._notes: dict[uuid.UUID, Note] = {}
        self._clock = clock

    def _get(self, note_id: uuid.UUID) -> Note:
        try:
            return self._notes[note_id]
        except KeyError:
            raise ToolError(f"No note with id {note_id}; use search_notes to find ids.") from None

    @tool(idempotent=False, open_world=False)
    async def add_note(
        self,
        title: Annotated[str, Field(min_length=1, max_length=200)],
        body: str,
        *,
        ctx: Context,
        tags: set[Tag] | None = None,
        priority: Priority = Priority.NORMAL,
        due: dt.date | None = None,
    ) -> Note:
        """Add a note to the notebook.

        Args:
            title: A short title.
            body: The note's text, in Markdown.
            tags: Lower-case tags such as "work" or "follow-up".
            priority: 1 (low) to 3 (high).
            due: When the note needs attention, as YYYY-MM-DD.
        """
        note = Note(
            id=uuid.uuid4(),
            title=title,
            body=body,
            tags=sorted(tags or ()),
            priority=priority,
            due=due,
            created=self._clock.now(dt.timezone.utc),
        )
        self._notes[note.id] = note
        await ctx.info(f"added note {note.id}")
        return note

    @tool(read_only=True, open_world=False)
    def search_notes(
        self,
        query: str = "",
        tag: Tag | None = None,
        due_before: dt.date | None = None,
        limit: Annotated[int, Field(ge=1, le=50)] = 10,
    ) -> SearchResult:
        """Find notes, most urgent first.

        Args:
            query: Words to look for in titles and bodies (case-insensitive); empty matches every note.
            tag: Only notes with this tag.
            due_before: Only notes due before this date.
            limit: At most this many notes.
        """
        words = query.lower().split()
        found = [
            note
            for note in self._notes.values()
            if all(w in f"{note.title} {note.body}".lower() for w in words)
            and (tag is None or tag in note.tags)
            and (due_before is None or (note.due is not None and note.due < due_before))
        ]
        found.sort(key=lambda n: (-n.priority, n.due or dt.date.max, n.created))
        return SearchResult(notes=found[:limit], total=len(found))

    @tool(idempotent=True, open_world=False)
    def update_note(self, note_id: uuid.UUID, changes: Changes) -> Note:
        """Change a note's title, body, tags or priority.

        Args:
            note_id: The note's id.
            changes: Only the fields to change.
        """
        note = self._get(note_id)
        updated = note.model_copy(update=dict(changes))
        self._notes[note_id] = updated
        return updated

    @tool(destructive=True, idempotent=True, open_world=False)
    def delete_note(self, note_id: uuid.UUID) -> str:
        """Delete a note for good.

        Args:
            note_id: The note's id.
        """
        note = self._notes.pop(note_id, None)
        if note is None:
            raise ToolError(f"No note with id {note_id}; it may already be deleted.")
        return f"Deleted {note.title!r}."


notebook = Notebook()
server = Server(
    "notes",
    instructions="A notebook: add, search, update and delete notes.",
    tools=[notebook.add_note, notebook.search_notes, notebook.update_note, notebook.delete_note],
)

if __name__ == "__main__":
    server.run()
