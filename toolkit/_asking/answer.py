"""What the client answers: `ElicitResult` and `SampleResult`, each one object that a sync tool gets filled in and
an async tool awaits."""

from __future__ import annotations

import functools
import uuid
from collections.abc import Coroutine, Generator, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Generic, Literal, Protocol, TypeVar

import pydantic
from pydantic import TypeAdapter
from typing_extensions import Self
from typing_extensions import TypeVar as DefaultTypeVar

from toolkit._protocol.types import (
    CallToolResult,
    Root,
    SamplingContent,
    SamplingMessage,
    TextContent,
    ToolResultContent,
    ToolUseContent,
)

__all__ = [
    "ACTIONS",
    "Action",
    "Answer",
    "ElicitResult",
    "Roots",
    "RunnableTool",
    "SampleResult",
    "fill",
    "pending",
    "unanswered",
]

T = DefaultTypeVar("T", default=Any)
A = TypeVar("A", bound="Answer")
Action = Literal["accept", "decline", "cancel"]
ACTIONS: tuple[Action, ...] = ("accept", "decline", "cancel")
Role = Literal["user", "assistant"]


class RunnableTool(Protocol):
    """What [`SampleResult.run_tools`][toolkit.SampleResult.run_tools] runs: a [`Tool`][toolkit.Tool] (a name, and
    `run`). A protocol, so that asking the client never imports the tool definition (it imports this)."""

    @property
    def name(self) -> str: ...

    async def run(self, arguments: Mapping[str, Any] | None = None) -> CallToolResult: ...


class Answer:
    """Base of `ElicitResult` and `SampleResult`.

    In an async tool, `ctx.elicit(...)` returns an answer still pending: awaiting it asks the client and fills it
    in (and returns it). In a sync tool the answer comes back filled in. Reading a pending answer raises, so a
    forgotten `await` fails loudly (and Python warns that the coroutine inside was never awaited).
    """

    __slots__ = ("_pending",)

    def __init__(self) -> None:
        self._pending: Coroutine[Any, Any, Self] | None = None

    @classmethod
    def _waiting(cls, pending: Coroutine[Any, Any, Self]) -> Self:
        answer = cls.__new__(cls)
        answer._pending = pending
        return answer

    def __await__(self) -> Generator[Any, None, Self]:
        if self._pending is _TOGETHER:
            raise RuntimeError(_TOGETHER_TEXT)
        if self._pending is not None:
            pending, self._pending = self._pending, None
            done = yield from pending.__await__()
            self._fill(done)
        return self

    def _fill(self, done: Self) -> None:
        raise NotImplementedError

    def _ready(self) -> None:
        if self._pending is _TOGETHER:
            raise RuntimeError(_TOGETHER_TEXT)
        if self._pending is not None:
            raise RuntimeError(
                f"this {type(self).__name__} has not been answered yet: await it in an async tool "
                "(`result = await ctx.elicit(...)`)"
            )


@functools.cache
def _blocks() -> TypeAdapter[list[SamplingContent]]:
    """Built on first use: a server that never samples never pays for it."""
    return TypeAdapter(list[SamplingContent])


def pending(kind: type[A], coroutine: Coroutine[Any, Any, A]) -> A:
    """An answer of type `kind` that `coroutine` will give once awaited (what an async tool's question returns)."""
    return kind._waiting(coroutine)


_TOGETHER: Any = object()
_TOGETHER_TEXT = (
    "this question is asked together with the others of its `ctx.together()` block, when the block ends: "
    "read its answer after the block (and do not await it)"
)


def unanswered(kind: type[A]) -> A:
    """An answer of type `kind` to a question of a `ctx.together()` block: filled in by `fill` when the block ends."""
    answer = kind.__new__(kind)
    answer._pending = _TOGETHER
    return answer


def fill(answer: A, done: A) -> None:
    """Give an `unanswered` answer its value."""
    answer._pending = None
    answer._fill(done)


class ElicitResult(Answer, Generic[T]):
    """The user's answer to an elicitation: `action` and, on accept, the validated `data`.

    `await ctx.elicit(...)` in an async tool; in a sync tool `ctx.elicit(...)` returns it filled in. Client
    handlers and test scripts make one with [`accept`][toolkit.ElicitResult.accept],
    [`decline`][toolkit.ElicitResult.decline] or [`cancel`][toolkit.ElicitResult.cancel].
    """

    __slots__ = ("_action", "_content", "_data", "_elicitation_id")

    def __init__(
        self,
        action: Action,
        data: T | None = None,
        *,
        content: Mapping[str, Any] | None = None,
        elicitation_id: str | None = None,
    ) -> None:
        if action not in ACTIONS:
            raise ValueError(f"action must be accept, decline or cancel, not {action!r}")
        self._action: Action = action
        self._data = data
        self._content = dict(content) if content is not None else None
        self._elicitation_id = elicitation_id
        super().__init__()

    @classmethod
    def accept(cls, content: Mapping[str, Any] | None = None) -> ElicitResult[Any]:
        """The user submitted the form with `content` (wire names to values); `None` for a URL or an empty form."""
        return ElicitResult("accept", content=content)

    @classmethod
    def decline(cls) -> ElicitResult[Any]:
        """The user explicitly said no."""
        return ElicitResult("decline")

    @classmethod
    def cancel(cls) -> ElicitResult[Any]:
        """The user dismissed the question without choosing."""
        return ElicitResult("cancel")

    def _fill(self, done: ElicitResult[T]) -> None:
        self._action, self._data, self._content = done._action, done._data, done._content
        self._elicitation_id = done._elicitation_id

    @property
    def action(self) -> Action:
        """`"accept"`, `"decline"` (the user said no) or `"cancel"` (dismissed without choosing)."""
        self._ready()
        return self._action

    @property
    def data(self) -> T | None:
        """The validated answer on accept (an instance of the form's type; a dict for a raw schema), else `None`."""
        self._ready()
        return self._data

    @property
    def content(self) -> dict[str, Any] | None:
        """The answer as the client sent it (wire names to values), on accept in form mode."""
        self._ready()
        return self._content

    @property
    def elicitation_id(self) -> str | None:
        """The id of a URL-mode elicitation at 2025-11-25 (for `Server.elicitation_complete`), else `None`."""
        self._ready()
        return self._elicitation_id

    @property
    def accepted(self) -> bool:
        return self.action == "accept"

    @property
    def declined(self) -> bool:
        return self.action == "decline"

    @property
    def cancelled(self) -> bool:
        return self.action == "cancel"

    def __repr__(self) -> str:
        if self._pending is not None:
            return "ElicitResult(<not awaited>)"
        data = f", data={self._data!r}" if self._data is not None else ""
        return f"ElicitResult({self._action!r}{data})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ElicitResult) or self._pending is not None or other._pending is not None:
            return NotImplemented
        return (self._action, self._content, self._data) == (other._action, other._content, other._data)

    __hash__ = None  # type: ignore[assignment]

    def to_wire(self, *, form: bool = True) -> dict[str, Any]:
        """The `ElicitResult` a client sends: `content` only on accept in form mode."""
        self._ready()
        wire: dict[str, Any] = {"action": self._action}
        if self._action == "accept" and form:
            wire["content"] = self._content if self._content is not None else {}
        return wire


class SampleResult(Answer):
    """The client model's reply: `await ctx.sample(...)` in an async tool, `ctx.sample(...)` in a sync one.

    Client handlers and test scripts answer with one ([`reply`][toolkit.SampleResult.reply] for text) or a `str`.

    Args:
        content: The reply's content blocks.
        model: The model that answered, as the client names it.
        stop_reason: Why it stopped.
        role: Always `"assistant"` in practice.
    """

    __slots__ = ("_content", "_model", "_role", "_stop_reason")

    def __init__(
        self, content: Sequence[Any], model: str, stop_reason: str | None = None, role: Role = "assistant"
    ) -> None:
        super().__init__()
        self._content = list(content)
        self._model = model
        self._stop_reason = stop_reason
        self._role: Role = role

    @classmethod
    def reply(cls, text: str, *, model: str = "toolkit-client", stop_reason: str | None = "endTurn") -> SampleResult:
        """A text reply."""
        return cls([TextContent(text=text)], model, stop_reason)

    @classmethod
    def use_tool(
        cls,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        id: str | None = None,
        model: str = "toolkit-client",
    ) -> SampleResult:
        """A reply in which the model asks to call one tool (`stopReason: "toolUse"`): for client handlers and test
        scripts. `id` defaults to a fresh one. For several calls at once, give `SampleResult` several
        `ToolUseContent` blocks."""
        use_id = id if id is not None else f"call_{uuid.uuid4().hex[:12]}"
        return cls([ToolUseContent(id=use_id, name=name, input=dict(arguments or {}))], model, "toolUse")

    def _fill(self, done: SampleResult) -> None:
        self._content, self._model, self._stop_reason, self._role = (
            done._content,
            done._model,
            done._stop_reason,
            done._role,
        )

    @property
    def content(self) -> list[Any]:
        """The reply's content blocks (`TextContent`, `ImageContent`, `AudioContent`, `ToolUseContent`)."""
        self._ready()
        return self._content

    @property
    def model(self) -> str:
        """The model that answered, as the client names it."""
        self._ready()
        return self._model

    @property
    def stop_reason(self) -> str | None:
        """Why it stopped: `"endTurn"`, `"stopSequence"`, `"maxTokens"`, `"toolUse"`, or the client's own reason."""
        self._ready()
        return self._stop_reason

    @property
    def role(self) -> Role:
        self._ready()
        return self._role

    @property
    def text(self) -> str:
        """The text of every text block, joined by newlines."""
        return "\n".join(block.text for block in self.content if isinstance(block, TextContent))

    @property
    def tool_uses(self) -> list[ToolUseContent]:
        """The tools the model asks to call. Answer them all in the next user message:
        [`run_tools`][toolkit.SampleResult.run_tools], or [`ToolUseContent.result`][toolkit.ToolUseContent.result]
        for each."""
        return [block for block in self.content if isinstance(block, ToolUseContent)]

    @property
    def message(self) -> SamplingMessage:
        """The reply as a message of the conversation: append it before the tool results that answer it."""
        self._ready()
        return SamplingMessage(role=self._role, content=list(self._content))

    async def run_tools(self, tools: Iterable[RunnableTool]) -> SamplingMessage:
        """Run every tool the model asked for, one after the other, and return the user message that answers them.

        Each tool use is looked up by name among `tools` and run as a server runs a call
        ([`Tool.run`][toolkit.Tool.run]: arguments validated, failures as error results the model can read, a
        detached Context). A tool the model made up gets an error result naming the tools offered.
        """
        by_name = {t.name: t for t in tools}
        results: list[ToolResultContent] = []
        for use in self.tool_uses:
            found = by_name.get(use.name)
            if found is None:
                offered = ", ".join(sorted(by_name)) or "none"
                results.append(use.result(f"Unknown tool {use.name!r}; the tools are: {offered}", is_error=True))
            else:
                results.append(use.result(await found.run(use.input)))
        return SamplingMessage(role="user", content=results)

    def __repr__(self) -> str:
        if self._pending is not None:
            return "SampleResult(<not awaited>)"
        return f"SampleResult(text={self.text!r}, model={self._model!r}, stop_reason={self._stop_reason!r})"

    def to_wire(self) -> dict[str, Any]:
        """The `CreateMessageResult`: one block as an object, several as an array (2025-11-25)."""
        blocks = [b.model_dump(mode="json", by_alias=True, exclude_none=True) for b in self.content]
        wire: dict[str, Any] = {"role": self.role, "content": blocks[0] if len(blocks) == 1 else blocks}
        wire["model"] = self.model
        if self.stop_reason is not None:
            wire["stopReason"] = self.stop_reason
        return wire

    @classmethod
    def from_wire(cls, raw: Any) -> SampleResult:
        """Read a client's `CreateMessageResult` (one block or a list; any stop reason string).

        Raises:
            ValueError: it is not a result of that shape.
        """
        if not isinstance(raw, Mapping) or not isinstance(raw.get("model"), str):
            raise ValueError("a sampling result must be an object with role, content and model")
        content = raw.get("content")
        try:
            blocks = _blocks().validate_python(content if isinstance(content, list) else [content])
        except pydantic.ValidationError:
            raise ValueError("a sampling result's content must be text, image, audio or tool_use blocks") from None
        stop = raw.get("stopReason")
        return cls(blocks, raw["model"], stop if isinstance(stop, str) else None)


class Roots(Answer):
    """The client's roots (`roots/list`): the directories and files it lets the server work on.

    `await ctx.list_roots()` in an async tool, `ctx.list_roots()` in a sync one. Iterate over it for each
    [`Root`][toolkit.Root]; [`paths`][toolkit.Roots.paths] gives the local paths of the `file://` ones.
    """

    __slots__ = ("_roots",)

    def __init__(self, roots: Iterable[Root]) -> None:
        super().__init__()
        self._roots = list(roots)

    def _fill(self, done: Roots) -> None:
        self._roots = done._roots

    @property
    def roots(self) -> list[Root]:
        """Each root the client listed, in its order."""
        self._ready()
        return self._roots

    @property
    def paths(self) -> list[Path]:
        """The local path of each `file://` root."""
        return [path for root in self.roots if (path := root.path) is not None]

    def __iter__(self) -> Iterator[Root]:
        return iter(self.roots)

    def __len__(self) -> int:
        return len(self.roots)

    def __repr__(self) -> str:
        if self._pending is not None:
            return "Roots(<not awaited>)"
        return f"Roots({[root.uri for root in self._roots]!r})"

    def to_wire(self) -> dict[str, Any]:
        """The `ListRootsResult` a client sends."""
        return {"roots": [root.model_dump(mode="json", by_alias=True, exclude_none=True) for root in self.roots]}

    @classmethod
    def from_wire(cls, raw: Any) -> Roots:
        """Read a client's `ListRootsResult`.

        Raises:
            ValueError: it is not an object with a list of roots, each with a `file://` URI.
        """
        listed = raw.get("roots") if isinstance(raw, Mapping) else None
        if not isinstance(listed, list):
            raise ValueError("a roots/list result must be an object with a list of roots")
        try:
            roots = _roots().validate_python(listed)
        except pydantic.ValidationError:
            raise ValueError("each root must be an object with a uri") from None
        bad = [root.uri for root in roots if not root.uri.startswith("file://")]
        if bad:
            raise ValueError(f"a root's uri must start with file:// (roots/list), not {bad[0][:100]!r}")
        return cls(roots)


@functools.cache
def _roots() -> TypeAdapter[list[Root]]:
    return TypeAdapter(list[Root])
